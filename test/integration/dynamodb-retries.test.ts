/**
 * Retries of the DynamoDB store. DynamoDB Local never raises conflicts or
 * throttling, so the real client's `send` is wrapped to throw them the first
 * N times; everything else goes to DynamoDB Local.
 */
import {
  DynamoDBServiceException,
  GetItemCommand,
  ProvisionedThroughputExceededException,
  QueryCommand,
  RequestLimitExceeded,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConditionFailedError, type ConversationRef } from "../../functions/ports.ts";
import { DynamoConversationStore, type RetryOptions } from "../../functions/store/dynamodb.ts";
import { RetriesExhaustedError } from "../../functions/store/errors.ts";
import { freshRef, storedTurn } from "../contract/conversation-store.contract.ts";
import { message, request, turnStart } from "../helpers/builders.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

const meta = { $metadata: {} };
type Command = { constructor: { name: string } };
type Failure = () => Error;

const conflict: Failure = () =>
  new TransactionConflictException({ message: "Transaction is ongoing for the item", ...meta });
const canceledByConflict: Failure = () =>
  new TransactionCanceledException({
    message: "Transaction cancelled, please refer cancellation reasons for specific reasons",
    CancellationReasons: [{ Code: "None" }, { Code: "TransactionConflict" }],
    ...meta,
  });
const throttled: Failure = () => new ThrottlingException({ message: "Rate exceeded", ...meta });
const overProvisioned: Failure = () =>
  new ProvisionedThroughputExceededException({ message: "Throughput exceeded", ...meta });
const requestLimit: Failure = () =>
  new RequestLimitExceeded({ message: "Throughput exceeds the account limit", ...meta });

const client = localClient();
let table: string;
beforeAll(async () => {
  table = await freshTable(client, "retries");
});
afterAll(() => client.destroy());

/**
 * A store whose client throws `failure` for the first `times` commands of
 * class `on` (every time when `times` is Infinity), and records backoffs.
 */
function flakyStore(
  on: { name: string },
  times: number,
  failure: Failure,
  retry: RetryOptions = {},
) {
  const flaky = localClient();
  const real = flaky.send.bind(flaky) as (command: unknown) => Promise<unknown>;
  const calls: string[] = [];
  let failures = 0;
  (flaky as unknown as { send: (command: Command) => Promise<unknown> }).send = async (command) => {
    const name = command.constructor.name;
    calls.push(name);
    if (name === on.name && failures < times) {
      failures++;
      throw failure();
    }
    return real(command);
  };
  const sleeps: number[] = [];
  const store = new DynamoConversationStore(flaky, table, {
    retry: {
      maxAttempts: 5,
      baseDelayMs: 10,
      maxDelayMs: 40,
      random: () => 0.999,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...retry,
    },
  });
  const attemptsOf = (command: { name: string }) => calls.filter((c) => c === command.name).length;
  return { store, sleeps, attemptsOf, failures: () => failures, close: () => flaky.destroy() };
}

const turn = (n: number, text = `q${n}`) =>
  storedTurn(n, [turnStart(n), request(text, n), message(`m${n}`, n)]);

async function withTurns(count: number): Promise<ConversationRef> {
  const ref = freshRef();
  const plain = new DynamoConversationStore(client, table);
  for (let n = 0; n < count; n++)
    await plain.appendTurn(ref, turn(n), { compactions_version: 0 }, {});
  return ref;
}

describe("DynamoConversationStore retries", () => {
  it.each([
    ["TransactionConflictException", conflict],
    ["TransactionCanceledException (TransactionConflict)", canceledByConflict],
    ["ThrottlingException", throttled],
    ["ProvisionedThroughputExceededException", overProvisioned],
    ["RequestLimitExceeded", requestLimit],
  ])("retries a transaction after %s and then succeeds", async (_name, failure) => {
    const ref = await withTurns(1);
    const { store, sleeps, attemptsOf, close } = flakyStore(TransactWriteItemsCommand, 3, failure);
    await store.appendTurn(ref, turn(1), { compactions_version: 0 }, { projected_chars: 42 });
    expect(attemptsOf(TransactWriteItemsCommand)).toBe(4);
    // Full jitter under a doubling cap: 10, 20, 40 (capped) ms.
    expect(sleeps).toEqual([9, 19, 39]);
    expect(await store.getHead(ref)).toMatchObject({ turn_count: 2, projected_chars: 42 });
    expect((await store.getTurn(ref, 1))?.events).toEqual(turn(1).events);
    close();
  });

  it("retries throttled reads and single-item writes", async () => {
    const ref = await withTurns(2);
    for (const command of [QueryCommand, GetItemCommand, UpdateItemCommand]) {
      const { store, attemptsOf, failures, close } = flakyStore(command, 2, throttled);
      expect(await store.readTurns(ref)).toHaveLength(2);
      expect(await store.getHead(ref)).toMatchObject({ turn_count: 2 });
      await store.markEvaluated(ref, 1);
      await store.putConfig(ref, { enabled: true });
      expect(failures()).toBe(2);
      expect(attemptsOf(command)).toBeGreaterThanOrEqual(3);
      close();
    }
    expect(await new DynamoConversationStore(client, table).getHead(ref)).toMatchObject({
      evaluated_through: 1,
      config: { enabled: true },
    });
  });

  it.each([
    ["TransactionConflictException", conflict],
    ["TransactionCanceledException (TransactionConflict)", canceledByConflict],
    ["ThrottlingException", throttled],
  ])("gives up after the bound on %s, with the cause attached", async (name, failure) => {
    const ref = await withTurns(1);
    const { store, sleeps, attemptsOf, close } = flakyStore(
      TransactWriteItemsCommand,
      Number.POSITIVE_INFINITY,
      failure,
    );
    const error = await store
      .addCompaction(
        ref,
        {
          key: "AUTO#000000",
          after_turn: 0,
          seq: 0,
          compaction: {
            type: "compaction",
            timestamp: "2026-01-01T00:00:00Z",
            from_turn: 0,
            to_turn: 0,
            source: "auto",
          },
        },
        { turn_count: 1, compactions_version: 0 },
        {},
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect((error as RetriesExhaustedError).attempts).toBe(5);
    expect((error as Error).cause).toBeInstanceOf(DynamoDBServiceException);
    expect(((error as Error).cause as Error).name).toBe(name.split(" ")[0]);
    expect((error as Error).message).toContain("AddCompaction");
    expect(attemptsOf(TransactWriteItemsCommand)).toBe(5);
    expect(sleeps).toHaveLength(4);
    // Nothing was written.
    const plain = new DynamoConversationStore(client, table);
    expect(await plain.listCompactions(ref)).toEqual([]);
    expect(await plain.getHead(ref)).toMatchObject({ compactions_version: 0 });
    close();
  });

  it("does not retry a failed condition, even next to a conflict", async () => {
    const ref = await withTurns(1);
    const { store, attemptsOf, close } = flakyStore(
      TransactWriteItemsCommand,
      1,
      () =>
        new TransactionCanceledException({
          message: "Transaction cancelled",
          CancellationReasons: [
            { Code: "ConditionalCheckFailed" },
            { Code: "TransactionConflict" },
          ],
          ...meta,
        }),
    );
    await expect(
      store.appendTurn(ref, turn(1), { compactions_version: 0 }, {}),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect(attemptsOf(TransactWriteItemsCommand)).toBe(1);
    close();
  });

  it("does not retry other errors", async () => {
    const ref = await withTurns(1);
    const { store, attemptsOf, close } = flakyStore(
      TransactWriteItemsCommand,
      1,
      () => new Error("socket hang up"),
    );
    await expect(store.appendTurn(ref, turn(1), { compactions_version: 0 }, {})).rejects.toThrow(
      "socket hang up",
    );
    expect(attemptsOf(TransactWriteItemsCommand)).toBe(1);
    // The turn was not stored, so the caller's retry simply appends it.
    await store.appendTurn(ref, turn(1), { compactions_version: 0 }, {});
    expect((await store.getHead(ref))?.turn_count).toBe(2);
    close();
  });

  it("backs off with jitter under a doubling, capped bound", async () => {
    const ref = await withTurns(1);
    let draw = 0;
    const draws = [0.5, 0.25, 0.999, 0, 0.999, 0.999];
    const { store, sleeps, close } = flakyStore(TransactWriteItemsCommand, 6, conflict, {
      maxAttempts: 8,
      baseDelayMs: 100,
      maxDelayMs: 1_000,
      random: () => draws[draw++] ?? 0,
    });
    await store.appendTurn(ref, turn(1), { compactions_version: 0 }, {});
    // caps 100, 200, 400, 800, 1000, 1000
    expect(sleeps).toEqual([50, 50, 399, 0, 999, 999]);
    close();
  });
});
