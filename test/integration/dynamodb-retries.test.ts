/**
 * Who retries what, counted in requests that go out. DynamoDB Local never
 * throttles or conflicts, so the client's HTTP handler answers the first N
 * requests of one operation with the error response DynamoDB would send
 * (instead of sending them), and passes everything else to DynamoDB Local.
 * The handler sits below the SDK's retry strategy, so it sees every attempt:
 * the SDK's retries (throttling, 5xx, connection resets) and the store's
 * (transaction conflicts) alike.
 */
import { Readable } from "node:stream";
import {
  DynamoDBClient,
  ThrottlingException,
  TransactionCanceledException,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConditionFailedError, ContentionError } from "../../functions/errors.ts";
import { localClientConfig } from "../../functions/local/dynamodb-local.ts";
import type { ConversationRef } from "../../functions/ports.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { DYNAMODB_RETRY } from "../../functions/store/dynamodb-client.ts";
import type { ConflictRetryOptions } from "../../functions/store/dynamodb-conflicts.ts";
import { freshRef, storedTurn } from "../contract/conversation-store.contract.ts";
import { message, request, turnStart } from "../helpers/builders.ts";
import { freshTable, localClient, localDynamo } from "../helpers/dynamodb.ts";

/** An error response of DynamoDB's JSON protocol, or a connection error. */
type Fault =
  | { readonly status: number; readonly body: Record<string, unknown> }
  | { readonly network: string };

const error = (status: number, type: string, fields: Record<string, unknown> = {}): Fault => ({
  status,
  body: {
    __type: `com.amazonaws.dynamodb.v20120810#${type}`,
    message: `injected ${type}`,
    ...fields,
  },
});
const cancelled = (...codes: string[]): Fault =>
  error(400, "TransactionCanceledException", {
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(", ")}]`,
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

const throttled = error(400, "ThrottlingException");
const overProvisioned = error(400, "ProvisionedThroughputExceededException");
const requestLimit = error(400, "RequestLimitExceeded");
const internal = error(500, "InternalServerError");
const reset: Fault = { network: "ECONNRESET" };
const conflict = error(400, "TransactionConflictException");
const cancelledByConflict = cancelled("None", "TransactionConflict");
const cancelledByThrottling = cancelled("ThrottlingError", "None");
const invalid = error(400, "ValidationException");

type HttpRequest = { readonly headers: Record<string, string> };
type RequestHandler = {
  handle(request: HttpRequest, options?: unknown): Promise<{ response: unknown }>;
};

const client = localClient();
let table: string;
beforeAll(async () => {
  table = await freshTable(client, "retries");
});
afterAll(() => client.destroy());

/**
 * A store whose client answers the first `times` requests of `operation`
 * (e.g. "TransactWriteItems") with `fault`, and counts every request that
 * goes out, per operation. `maxAttempts` overrides the SDK's setting; the
 * store's conflict retry never really sleeps, it records its backoffs.
 */
function faultyStore(
  operation: string,
  times: number,
  fault: Fault,
  options: { maxAttempts?: number; conflictRetry?: ConflictRetryOptions } = {},
) {
  // The SDK's own HTTP handler, borrowed from a client built the usual way.
  const carrier = localClient();
  const real = carrier.config.requestHandler as unknown as RequestHandler;
  const requests: string[] = [];
  let injected = 0;
  const handler: RequestHandler = {
    async handle(request, handleOptions) {
      const target = String(request.headers["x-amz-target"]).split(".")[1] ?? "";
      requests.push(target);
      if (target !== operation || injected >= times) return real.handle(request, handleOptions);
      injected++;
      if ("network" in fault) {
        throw Object.assign(new Error(`injected ${fault.network}`), { code: fault.network });
      }
      return {
        response: {
          statusCode: fault.status,
          reason: "injected",
          headers: {
            "content-type": "application/x-amz-json-1.0",
            "x-amzn-requestid": `injected-${injected}`,
          },
          body: Readable.from([Buffer.from(JSON.stringify(fault.body))]),
        },
      };
    },
  };
  const faulty = new DynamoDBClient({
    ...localClientConfig(localDynamo()),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    requestHandler: handler as never,
  });
  const sleeps: number[] = [];
  const store = new DynamoConversationStore(faulty, table, {
    conflictRetry: {
      maxAttempts: 5,
      baseDelayMs: 10,
      maxDelayMs: 40,
      random: () => 0.999,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...options.conflictRetry,
    },
  });
  return {
    store,
    sleeps,
    /** Requests of `name` that went out, the injected failures included. */
    sent: (name: string) => requests.filter((target) => target === name).length,
    injected: () => injected,
    close: () => {
      faulty.destroy();
      carrier.destroy();
    },
  };
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

const autoCompaction = {
  key: "AUTO#000000",
  after_turn: 0,
  seq: 0,
  compaction: {
    type: "compaction" as const,
    timestamp: "2026-01-01T00:00:00Z",
    from_turn: 0,
    to_turn: 0,
    source: "auto" as const,
  },
};

// Concurrent: the SDK's throttling backoff (1 s base, plus the adaptive
// mode's client-side rate limiting) is real waiting, not work.
describe.concurrent("the SDK's retry strategy (throttling, transient errors)", () => {
  it("is what every client of the service is configured with: adaptive, 5 attempts", async ({
    expect,
  }) => {
    expect(DYNAMODB_RETRY).toEqual({ retryMode: "adaptive", maxAttempts: 5 });
    const strategy = (await client.config.retryStrategy()) as { mode?: string };
    expect(strategy.mode).toBe("adaptive");
    expect(await client.config.maxAttempts()).toBe(5);
  });

  it.for([
    ["ThrottlingException", throttled, 2],
    ["ProvisionedThroughputExceededException", overProvisioned, 1],
    ["RequestLimitExceeded", requestLimit, 1],
    ["InternalServerError (500)", internal, 2],
    ["a connection reset", reset, 1],
  ] as const)(
    "retries a transaction after %s, and the store adds no attempt",
    async ([_name, fault, times], { expect }) => {
      const ref = await withTurns(1);
      const { store, sleeps, sent, close } = faultyStore("TransactWriteItems", times, fault);
      await store.appendTurn(ref, turn(1), { compactions_version: 0 }, { projected_chars: 42 });
      expect(sent("TransactWriteItems")).toBe(times + 1);
      expect(sleeps).toEqual([]);
      expect(await store.getHead(ref)).toMatchObject({ turn_count: 2, projected_chars: 42 });
      expect((await store.getTurn(ref, 1))?.events).toEqual(turn(1).events);
      close();
    },
  );

  it.for([
    ["Query", (store: DynamoConversationStore, ref: ConversationRef) => store.listTurnSizes(ref)],
    ["GetItem", (store: DynamoConversationStore, ref: ConversationRef) => store.getHead(ref)],
    [
      "UpdateItem",
      (store: DynamoConversationStore, ref: ConversationRef) =>
        store.putConfig(ref, { enabled: true }),
    ],
  ] as const)("retries a throttled %s", async ([operation, call], { expect }) => {
    const ref = await withTurns(2);
    const { store, sleeps, sent, injected, close } = faultyStore(operation, 1, throttled);
    await call(store, ref);
    expect(injected()).toBe(1);
    expect(sent(operation)).toBe(2);
    expect(sleeps).toEqual([]);
    close();
  });

  it("sends a call throttled throughout maxAttempts times in all, then throws DynamoDB's error", async ({
    expect,
  }) => {
    const ref = await withTurns(1);
    const { store, sleeps, sent, close } = faultyStore(
      "TransactWriteItems",
      Number.POSITIVE_INFINITY,
      throttled,
      { maxAttempts: 3 },
    );
    const caught = await store
      .addCompaction(ref, autoCompaction, { turn_count: 1, compactions_version: 0 }, {})
      .catch((thrown: unknown) => thrown);
    // 3 requests, not 3 per attempt of a retry loop of the store's own.
    expect(sent("TransactWriteItems")).toBe(3);
    expect(caught).toBeInstanceOf(ThrottlingException);
    expect((caught as ThrottlingException).$metadata.attempts).toBe(3);
    expect(sleeps).toEqual([]);
    const plain = new DynamoConversationStore(client, table);
    expect(await plain.listCompactions(ref)).toEqual([]);
    close();
  });
});

describe("the store's retry of transaction conflicts", () => {
  it.each([
    ["TransactionCanceledException (TransactionConflict)", cancelledByConflict],
    ["TransactionCanceledException (ThrottlingError of an item)", cancelledByThrottling],
    ["TransactionConflictException", conflict],
  ])("retries a transaction after %s and then succeeds", async (_name, fault) => {
    const ref = await withTurns(1);
    const { store, sleeps, sent, close } = faultyStore("TransactWriteItems", 3, fault);
    await store.appendTurn(ref, turn(1), { compactions_version: 0 }, { projected_chars: 42 });
    // The SDK does not retry these: each of the store's attempts is one request.
    expect(sent("TransactWriteItems")).toBe(4);
    // Full jitter under a doubling cap: 10, 20, 40 (capped) ms.
    expect(sleeps).toEqual([9, 19, 39]);
    expect(await store.getHead(ref)).toMatchObject({ turn_count: 2, projected_chars: 42 });
    expect((await store.getTurn(ref, 1))?.events).toEqual(turn(1).events);
    close();
  });

  it("retries a single-item write that met a transaction (TransactionConflictException)", async () => {
    const ref = await withTurns(2);
    const { store, sleeps, sent, close } = faultyStore("UpdateItem", 2, conflict);
    await store.markEvaluated(ref, 1);
    expect(sent("UpdateItem")).toBe(3);
    expect(sleeps).toEqual([9, 19]);
    expect(await store.getHead(ref)).toMatchObject({ evaluated_through: 1 });
    close();
  });

  it.each([
    ["TransactionConflictException", conflict],
    ["TransactionCanceledException (TransactionConflict)", cancelledByConflict],
  ])("gives up after the bound on %s, with the cause attached", async (name, fault) => {
    const ref = await withTurns(1);
    const { store, sleeps, sent, close } = faultyStore(
      "TransactWriteItems",
      Number.POSITIVE_INFINITY,
      fault,
    );
    const caught = await store
      .addCompaction(ref, autoCompaction, { turn_count: 1, compactions_version: 0 }, {})
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(ContentionError);
    expect(caught).toMatchObject({ status: 503, type: "/problems/contention" });
    expect((caught as ContentionError).attempts).toBe(5);
    expect(((caught as Error).cause as Error).name).toBe(name.split(" ")[0]);
    expect((caught as Error).message).toContain("AddCompaction");
    expect(sent("TransactWriteItems")).toBe(5);
    expect(sleeps).toHaveLength(4);
    // Nothing was written.
    const plain = new DynamoConversationStore(client, table);
    expect(await plain.listCompactions(ref)).toEqual([]);
    expect(await plain.getHead(ref)).toMatchObject({ compactions_version: 0 });
    close();
  });

  it("backs off with jitter under a doubling, capped bound", async () => {
    const ref = await withTurns(1);
    let draw = 0;
    const draws = [0.5, 0.25, 0.999, 0, 0.999, 0.999];
    const { store, sleeps, sent, close } = faultyStore(
      "TransactWriteItems",
      6,
      cancelledByConflict,
      {
        conflictRetry: {
          maxAttempts: 8,
          baseDelayMs: 100,
          maxDelayMs: 1_000,
          random: () => draws[draw++] ?? 0,
        },
      },
    );
    await store.appendTurn(ref, turn(1), { compactions_version: 0 }, {});
    // caps 100, 200, 400, 800, 1000, 1000
    expect(sleeps).toEqual([50, 50, 399, 0, 999, 999]);
    expect(sent("TransactWriteItems")).toBe(7);
    close();
  });
});

describe("what nobody retries", () => {
  it("a failed condition, sent once (from DynamoDB Local itself)", async () => {
    const ref = await withTurns(1);
    const { store, sleeps, sent, close } = faultyStore("TransactWriteItems", 0, invalid);
    await expect(
      store.appendTurn(ref, turn(0, "other"), { compactions_version: 0 }, {}),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect(sent("TransactWriteItems")).toBe(1);
    expect(sleeps).toEqual([]);
    close();
  });

  it("a failed condition, even reported beside a conflict", async () => {
    const ref = await withTurns(1);
    const { store, sleeps, sent, close } = faultyStore(
      "TransactWriteItems",
      1,
      cancelled("ConditionalCheckFailed", "TransactionConflict"),
    );
    const caught = await store
      .appendTurn(ref, turn(1), { compactions_version: 0 }, {})
      .catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(ConditionFailedError);
    expect((caught as Error).cause).toBeInstanceOf(TransactionCanceledException);
    expect(sent("TransactWriteItems")).toBe(1);
    expect(sleeps).toEqual([]);
    close();
  });

  it("any other client error", async () => {
    const ref = await withTurns(1);
    const { store, sleeps, sent, close } = faultyStore("TransactWriteItems", 1, invalid);
    await expect(store.appendTurn(ref, turn(1), { compactions_version: 0 }, {})).rejects.toThrow(
      "injected ValidationException",
    );
    expect(sent("TransactWriteItems")).toBe(1);
    expect(sleeps).toEqual([]);
    // The turn was not stored, so the caller's retry simply appends it.
    await store.appendTurn(ref, turn(1), { compactions_version: 0 }, {});
    expect((await store.getHead(ref))?.turn_count).toBe(2);
    close();
  });
});
