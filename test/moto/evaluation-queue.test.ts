/**
 * The evaluation queue as it runs on AWS, on moto: turns posted through the
 * real SQS FIFO adapter onto a FIFO queue with a DLQ behind it (a redrive
 * policy of 2 receives, a 1 s visibility timeout to keep the suite short),
 * and the compactor's real handler fed the way Lambda's event source
 * mapping feeds it (test/helpers/event-source-mapping.ts), on DynamoDB Local.
 * Issue 25's two AWS-only failures:
 *
 * 1. A conversation deleted and posted again under the same id: the second
 *    life's messages must not repeat the first life's deduplication ids,
 *    or SQS drops them for 5 minutes and the second life is not evaluated.
 * 2. A batch [a/1 poison, a/2, a/3, b/1]: exactly a/1 fails; a/2, a/3 and b/1
 *    are evaluated and deleted, and only a/1 is dead-lettered.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Entry } from "../../core/events.ts";
import { splitTurns } from "../../core/turns.ts";
import { describeDeadLetter, type RawDeadLetter } from "../../functions/queue/dead-letters.ts";
import { messageTurns } from "../helpers/builders.ts";
import {
  type DeliveredBatch,
  type DeliveredRecord,
  recordName,
} from "../helpers/event-source-mapping.ts";
import { queueDepth } from "../helpers/moto.ts";
import { type MotoStack, PoisonError, startMotoStack } from "../helpers/moto-stack.ts";

const TENANT = "alice";
const MODEL = { id: "moto-model", context_window: 100_000 };
const TURNS = splitTurns(messageTurns(4));
const QUEUE = { maxReceiveCount: 2, visibilityTimeoutSeconds: 1 };

let stack: MotoStack | undefined;

beforeAll(() => {
  // The handler's EMF lines are not this suite's output.
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
});
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});
afterAll(() => {
  vi.unstubAllEnvs();
});

async function post(s: MotoStack, conversation: string, turn: number): Promise<void> {
  const answer = await s.service.appendTurn({ id: TENANT }, conversation, {
    turn,
    model: MODEL,
    events: TURNS[turn] as Entry[],
  });
  expect(answer).toMatchObject({ status: "created", evaluation_enqueued: true });
}

const head = (s: MotoStack, conversation: string) =>
  s.store.getHead({ tenant: TENANT, conversation });

/** Waits until `turn` of `conversation` has been evaluated. */
async function evaluated(s: MotoStack, conversation: string, turn: number): Promise<void> {
  await vi.waitFor(
    async () => {
      expect((await head(s, conversation))?.evaluated_through ?? -1).toBeGreaterThanOrEqual(turn);
    },
    { timeout: 15_000, interval: 50 },
  );
}

const names = (records: readonly DeliveredRecord[]) => records.map(recordName);

/** Waits until the batches answered so far delivered `expected` (the head is written before the answer). */
async function answered(s: MotoStack, expected: readonly string[]): Promise<void> {
  await vi.waitFor(() => expect(names(s.mapping.records())).toEqual(expected));
}

/** The records a batch's answer reported failed, by name. */
const failedOf = (batch: DeliveredBatch | undefined) =>
  names(batch?.records.filter((record) => batch.failed.includes(record.messageId)) ?? []);

describe("the evaluation queue on SQS FIFO (moto)", () => {
  it("evaluates a conversation deleted and posted again under the same id, its messages not dropped as duplicates", async () => {
    const s = await startMotoStack({ tenant: TENANT, ...QUEUE });
    stack = s;
    s.mapping.start();
    for (const turn of [0, 1, 2]) await post(s, "c", turn);
    const firstPosted = performance.now();
    await evaluated(s, "c", 2);
    const firstLag = performance.now() - firstPosted;
    await answered(s, ["c/0", "c/1", "c/2"]);
    await s.service.deleteConversation({ id: TENANT }, "c");
    expect(await head(s, "c")).toBeUndefined();

    for (const turn of [0, 1, 2]) await post(s, "c", turn);
    const posted = performance.now();
    await evaluated(s, "c", 2);
    // A figure, not an assertion (timing is never asserted).
    console.info(
      `[moto] turn 2 evaluated ${Math.round(firstLag)} ms after its post in the first life, ${Math.round(performance.now() - posted)} ms in the second`,
    );
    expect(await head(s, "c")).toMatchObject({ turn_count: 3, decided_through: 2 });
    await answered(s, ["c/0", "c/1", "c/2", "c/0", "c/1", "c/2"]);
    // moto forgets a deduplication id when its message is deleted; SQS keeps
    // it 5 minutes from the send, and would have accepted these messages and
    // never delivered them (the first life's were sent seconds before). So the
    // evaluation above proves nothing on moto alone: the second life's ids
    // must differ from the first life's, which is what SQS goes by.
    expect(names(s.mapping.droppedBySqs()), "messages SQS would have dropped").toEqual([]);
    expect(s.mapping.errors).toEqual([]);
  });

  it("fails only the poison record of a batch [a/1 poison, a/2, a/3, b/1]: the others are evaluated and deleted, only a/1 is dead-lettered", async () => {
    const s = await startMotoStack({
      tenant: TENANT,
      ...QUEUE,
      poison: (message) => message.conversation === "a" && message.turn === 1,
    });
    stack = s;
    s.mapping.start();
    await post(s, "a", 0);
    await post(s, "b", 0);
    await evaluated(s, "a", 0);
    await evaluated(s, "b", 0);
    await s.mapping.stop();
    const before = s.mapping.batches.length;
    const evaluationsBefore = s.evaluations.length;

    for (const [conversation, turn] of [
      ["a", 1],
      ["a", 2],
      ["a", 3],
      ["b", 1],
    ] as const) {
      await post(s, conversation, turn);
    }
    s.mapping.start();
    // Until the queue is empty: the poison received twice (maxReceiveCount),
    // then moved to the DLQ by the next receive (moto moves it then, as SQS does).
    await vi.waitFor(async () => expect(await queueDepth(s.sqs, s.queues.queueUrl)).toBe(0), {
      timeout: 15_000,
      interval: 100,
    });
    await s.mapping.stop();

    const [batch, ...retries] = s.mapping.batches.slice(before);
    // One receive gave all four, a's three in its order (SQS returns as many
    // messages of one group as it can; moto gives every visible message).
    expect(names(batch?.records ?? [])).toEqual(["a/1", "a/2", "a/3", "b/1"]);
    expect(failedOf(batch)).toEqual(["a/1"]);
    // a/1 alone came back, and failed again; nothing else was received twice.
    expect(retries.map((retry) => names(retry.records))).toEqual([["a/1"]]);
    expect(retries.map(failedOf)).toEqual([["a/1"]]);
    expect(retries[0]?.records[0]).toMatchObject({
      messageId: batch?.records[0]?.messageId,
      receiveCount: 2,
    });

    const ran = s.evaluations.slice(evaluationsBefore).map((evaluation) => ({
      turn: `${evaluation.message.conversation}/${evaluation.message.turn}`,
      outcome: evaluation.outcome?.outcome ?? (evaluation.error as Error).name,
    }));
    expect(ran).toEqual([
      { turn: "a/1", outcome: PoisonError.name },
      { turn: "a/2", outcome: "skipped" },
      { turn: "a/3", outcome: "skipped" },
      { turn: "b/1", outcome: "skipped" },
      { turn: "a/1", outcome: PoisonError.name },
    ]);
    expect(await head(s, "a")).toMatchObject({ turn_count: 4, evaluated_through: 3 });
    expect(await head(s, "b")).toMatchObject({ turn_count: 2, evaluated_through: 1 });
    // What `autocompact dlq list` prints for it: the DLQ's message, beside the
    // failure the compactor recorded on the conversation (SQS keeps no error text).
    // moto moves the poison inside a receive, out of the queue and then into
    // the DLQ (a threaded server): the queue can read empty a moment before
    // the DLQ holds it, so the listing is awaited, as an operator would retry.
    let dead: RawDeadLetter[] = [];
    await vi.waitFor(
      async () => {
        dead = await s.deadLetters.list();
        expect(dead).toHaveLength(1);
      },
      { timeout: 10_000, interval: 200 },
    );
    const entry = await describeDeadLetter(dead[0] as RawDeadLetter, s.lastFailure);
    expect(entry).toMatchObject({
      tenant: TENANT,
      conversation: "a",
      turn: 1,
      last_failure: { turn: 1, error: "PoisonError", message: "turn 1 of a is poison" },
    });
    expect(s.mapping.errors).toEqual([]);
  });
});
