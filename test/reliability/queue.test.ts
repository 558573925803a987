/**
 * The in-process queue behaves like SQS FIFO + a Lambda event source:
 * at-least-once delivery, visibility timeout, redrive to a dead-letter list
 * after 5 receives, FIFO groups (one message of a group out at a time, in
 * order), deduplication, and a journal that survives a kill.
 *
 * Timeouts are a few milliseconds; no test sleeps for a fixed time, they
 * wait for the queue to drain.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import { CorruptDataError, QueueError } from "../../functions/errors.ts";
import type { EvaluationMessage } from "../../functions/ports.ts";
import { FileQueueJournal } from "../../functions/queue/file-journal.ts";
import {
  InProcessQueue,
  type InProcessQueueOptions,
  type InProcessQueue as InProcessQueueType,
  type QueueBatchHandler,
} from "../../functions/queue/in-process.ts";
import { messageGroupId } from "../../functions/queue/message.ts";

const VISIBILITY_MS = 15;

let dir: string;
const queues: InProcessQueueType[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-queue-"));
});

afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop()));
  await rm(dir, { recursive: true, force: true });
});

function newQueue(options: InProcessQueueOptions = {}): InProcessQueue {
  const queue = new InProcessQueue({
    visibilityTimeoutMs: VISIBILITY_MS,
    onError: () => undefined,
    ...options,
  });
  queues.push(queue);
  return queue;
}

const msg = (conversation: string, turn: number, tenant = "alice"): EvaluationMessage => ({
  tenant,
  conversation,
  turn,
});

interface Delivery {
  readonly key: string;
  readonly receiveCount: number;
  readonly batch: number;
  readonly at: number;
  /** Position among all deliveries of the recorder: an order that no clock reading can blur. */
  readonly seq: number;
  /** When the queue first received the message (its own clock, not the handler's). */
  readonly firstReceivedAt: number;
}

/** A handler that records every delivery and fails the records `fail` says to. */
function recorder(fail: (key: string, receiveCount: number) => boolean = () => false) {
  const deliveries: Delivery[] = [];
  const done: string[] = [];
  let batches = 0;
  const handler: QueueBatchHandler = async (event: SQSEvent) => {
    const batch = ++batches;
    const failures: SQSBatchResponse["batchItemFailures"] = [];
    for (const record of event.Records) {
      const key = keyOf(record);
      const receiveCount = Number(record.attributes.ApproximateReceiveCount);
      deliveries.push({
        key,
        receiveCount,
        batch,
        at: Date.now(),
        seq: deliveries.length,
        firstReceivedAt: Number(record.attributes.ApproximateFirstReceiveTimestamp),
      });
      if (fail(key, receiveCount)) failures.push({ itemIdentifier: record.messageId });
      else done.push(key);
    }
    return { batchItemFailures: failures };
  };
  return { handler, deliveries, done };
}

function keyOf(record: SQSRecord): string {
  const body = JSON.parse(record.body) as EvaluationMessage;
  return `${body.conversation}#${body.turn}`;
}

describe("in-process queue: at-least-once", () => {
  it("delivers a failed message again once its visibility timeout has passed", async () => {
    const queue = newQueue();
    const { handler, deliveries, done } = recorder((_key, count) => count === 1);
    await queue.enqueue(msg("c1", 0));
    queue.start(handler);
    await queue.drain();

    expect(deliveries.map((d) => [d.key, d.receiveCount])).toEqual([
      ["c1#0", 1],
      ["c1#0", 2],
    ]);
    const [, second] = deliveries as [Delivery, Delivery];
    // Measured from the queue's first receive, so a pause before the handler runs cannot shrink it.
    expect(second.at - second.firstReceivedAt).toBeGreaterThanOrEqual(VISIBILITY_MS);
    expect(done).toEqual(["c1#0"]);
    expect(queue.pending()).toEqual({ visible: 0, inFlight: 0 });
    expect(queue.deadLetters()).toEqual([]);
  });

  it("tells the handler, as a Lambda context does, the time left before the batch becomes visible again", async () => {
    let now = 1_000;
    const queue = newQueue({ clock: { nowMillis: () => now }, visibilityTimeoutMs: 5_000 });
    const remaining: number[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.start(async (_event, context) => {
      remaining.push(context.getRemainingTimeInMillis());
      await held;
      now = 2_200; // the handler has run 1.2 s by the queue's clock
      remaining.push(context.getRemainingTimeInMillis());
      now = 9_000; // past the visibility timeout
      remaining.push(context.getRemainingTimeInMillis());
      return undefined;
    });
    await queue.enqueue(msg("c1", 0));
    await vi.waitFor(() => expect(remaining).toHaveLength(1));
    release();
    await vi.waitFor(() => expect(remaining).toHaveLength(3));
    expect(remaining).toEqual([5_000, 3_800, 0]);
  });

  it("retries the whole batch when the handler throws or answers nonsense", async () => {
    const queue = newQueue();
    let calls = 0;
    const keys: string[][] = [];
    queue.start(async (event) => {
      keys.push(event.Records.map(keyOf));
      calls++;
      if (calls === 1) throw new Error("crashed");
      if (calls === 2) return { batchItemFailures: [{ itemIdentifier: "not-in-this-batch" }] };
      return { batchItemFailures: [] };
    });
    await queue.enqueue(msg("c1", 0));
    await queue.drain();
    expect(keys).toEqual([["c1#0"], ["c1#0"], ["c1#0"]]);
  });

  it("treats an empty answer as every record done (a Lambda without partial responses)", async () => {
    const queue = newQueue();
    const seen: string[] = [];
    queue.start(async (event) => {
      seen.push(...event.Records.map(keyOf));
      return undefined;
    });
    await queue.enqueue(msg("c1", 0));
    await queue.enqueue(msg("c2", 0));
    await queue.drain();
    expect(seen).toEqual(["c1#0", "c2#0"]);
  });

  it("gives a message to another consumer when the first is slower than the timeout; only the latest receipt deletes it", async () => {
    const queue = newQueue({ concurrency: 2 });
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const counts: number[] = [];
    queue.start(async (event) => {
      const count = Number(event.Records[0]?.attributes.ApproximateReceiveCount);
      counts.push(count);
      if (count === 1) await slow; // outlives the visibility timeout
      if (count === 2) release();
      return {
        batchItemFailures:
          count === 2 ? [{ itemIdentifier: event.Records[0]?.messageId ?? "" }] : [],
      };
    });
    await queue.enqueue(msg("c1", 0));
    await queue.drain();
    // 1: slow, its late success carries a stale receipt; 2: failed; 3: done.
    expect(counts).toEqual([1, 2, 3]);
  });
});

describe("in-process queue: redrive and FIFO groups", () => {
  it("dead-letters a poison message after 5 receives; other groups flow meanwhile, and its group resumes after it", async () => {
    // Ordered by delivery, not by clock: what was delivered before the poison's
    // last receive, and after it was dead-lettered. A visibility timeout well
    // above scheduler pauses keeps the poison cycling long after the others.
    const deadLettered: number[] = [];
    const queue = newQueue({
      visibilityTimeoutMs: 100,
      onDeadLetter: () => {
        deadLettered.push(deliveries.length);
      },
    });
    let laterSent = false;
    const { handler, deliveries, done } = recorder((key) => key === "a#0");
    const wrapped: QueueBatchHandler = async (event, context) => {
      const response = await handler(event, context);
      if (!laterSent) {
        // Sent while the poison message is cycling.
        laterSent = true;
        await queue.enqueue(msg("b", 1));
        await queue.enqueue(msg("c", 0));
      }
      return response;
    };
    await queue.enqueue(msg("a", 0)); // poison
    await queue.enqueue(msg("a", 1)); // same group, behind it
    await queue.enqueue(msg("b", 0));
    queue.start(wrapped);
    await queue.drain();

    const poison = deliveries.filter((d) => d.key === "a#0");
    expect(poison.map((d) => d.receiveCount)).toEqual([1, 2, 3, 4, 5]);
    const [dead] = queue.deadLetters();
    expect(queue.deadLetters()).toHaveLength(1);
    expect(JSON.parse(dead?.body ?? "")).toEqual(msg("a", 0));
    expect(dead?.receive_count).toBe(5);
    expect(deadLettered).toHaveLength(1);

    // Other groups were not held up by the poison message.
    expect(done).toEqual(expect.arrayContaining(["b#0", "b#1", "c#0", "a#1"]));
    const lastPoison = poison.at(-1) as Delivery;
    for (const key of ["b#0", "b#1", "c#0"]) {
      const delivery = deliveries.find((d) => d.key === key) as Delivery;
      expect(delivery.seq).toBeLessThan(lastPoison.seq);
    }
    // The poison's group resumed only after it was dead-lettered.
    const a1 = deliveries.filter((d) => d.key === "a#1");
    expect(a1.map((d) => d.receiveCount)).toEqual([1]);
    expect(a1[0]?.seq).toBeGreaterThanOrEqual(deadLettered[0] as number);
    expect(queue.pending()).toEqual({ visible: 0, inFlight: 0 });
  });

  it("redrives the dead letters: back at the end of the queue with receive count 0, saved in the journal first", async () => {
    const journal = new FileQueueJournal(join(dir, "queue.json"));
    const queue = newQueue({ journal });
    let broken = true;
    const { handler, deliveries, done } = recorder((key) => broken && key.startsWith("a#"));
    await queue.enqueue(msg("a", 0));
    await queue.enqueue(msg("b", 0));
    queue.start(handler);
    await queue.drain();
    expect(queue.deadLetters().map((d) => JSON.parse(d.body))).toEqual([msg("a", 0)]);
    // Stopped, so the journal is read before the consumer takes the message again.
    await queue.stop();
    expect(await queue.redrive()).toBe(1);

    // Saved before redrive resolved: a restart would find it pending, not dead.
    expect(
      (await journal.load()).map((m) => [JSON.parse(m.body), m.receive_count, m.dead_lettered_at]),
    ).toEqual([[msg("a", 0), 0, undefined]]);
    expect(queue.deadLetters()).toEqual([]);
    expect(queue.pending()).toEqual({ visible: 1, inFlight: 0 });
    broken = false;
    queue.start(handler);
    await queue.enqueue(msg("a", 1));
    await queue.drain();
    expect(deliveries.filter((d) => d.key === "a#0").map((d) => d.receiveCount)).toEqual([
      1, 2, 3, 4, 5, 1,
    ]);
    expect(done).toEqual(["b#0", "a#0", "a#1"]);
    expect(queue.deadLetters()).toEqual([]);
    expect(await queue.redrive()).toBe(0);
  });

  it("never has two messages of a group out at once, and keeps each group's order", async () => {
    // A visibility timeout far above the handler's 1 ms, so a paused test process
    // cannot make a legitimate at-least-once redelivery look like an overlap.
    const queue = newQueue({ concurrency: 4, batchSize: 3, visibilityTimeoutMs: 1_000 });
    const out = new Map<string, number>();
    let overlap = false;
    const order = new Map<string, number[]>();
    const failedOnce = new Set<string>();
    queue.start(async (event) => {
      const groups = event.Records.map((r) => r.attributes.MessageGroupId ?? "");
      if (new Set(groups).size !== groups.length) overlap = true;
      for (const group of groups) {
        if ((out.get(group) ?? 0) > 0) overlap = true;
        out.set(group, (out.get(group) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
      const failures: SQSBatchResponse["batchItemFailures"] = [];
      for (const record of event.Records) {
        const { conversation, turn } = JSON.parse(record.body) as EvaluationMessage;
        // Every third message fails once: its group must wait for it.
        if (turn % 3 === 1 && !failedOnce.has(record.messageId)) {
          failedOnce.add(record.messageId);
          failures.push({ itemIdentifier: record.messageId });
        } else {
          order.set(conversation, [...(order.get(conversation) ?? []), turn]);
        }
      }
      for (const group of groups) out.set(group, (out.get(group) ?? 1) - 1);
      return { batchItemFailures: failures };
    });
    for (let turn = 0; turn < 6; turn++) {
      for (const conversation of ["p", "q", "r", "s", "t"]) {
        await queue.enqueue(msg(conversation, turn));
      }
    }
    await queue.drain();

    expect(overlap).toBe(false);
    for (const conversation of ["p", "q", "r", "s", "t"]) {
      expect(order.get(conversation)).toEqual([0, 1, 2, 3, 4, 5]);
    }
  });

  it("shares the groups ready at once among the free pollers, every batch in flight together", async () => {
    const queue = newQueue({ concurrency: 4, visibilityTimeoutMs: 60_000 });
    for (const conversation of ["p", "q", "r", "s", "t", "u", "v", "w"]) {
      await queue.enqueue(msg(conversation, 0));
    }
    const batches: string[][] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.start(async (event) => {
      batches.push(event.Records.map(keyOf));
      await held;
      return undefined;
    });
    await vi.waitFor(() => expect(batches).toHaveLength(4));
    expect(queue.pending()).toEqual({ visible: 0, inFlight: 8 });
    release();
    await queue.drain();
    expect(batches).toEqual([
      ["p#0", "q#0"],
      ["r#0", "s#0"],
      ["t#0", "u#0"],
      ["v#0", "w#0"],
    ]);
  });

  it("wakes for a message that became visible while the consumer was in a pass", async () => {
    // A fake clock that jumps during a pass (as a process descheduled under
    // load, or a timer firing a millisecond early by Date.now()): the pass
    // receives at 10 and sees y hidden until 15, and by the time the consumer
    // goes idle the clock reads 15, y is visible and needs no timer by that
    // reading. It still needs one: nothing else would wake the consumer.
    let now = 0;
    const queue = newQueue({
      clock: { nowMillis: () => now },
      visibilityTimeoutMs: 10,
      maxReceiveCount: 1,
      onDeadLetter: (message) => {
        if (JSON.parse(message.body).conversation === "x") now = 15;
      },
    });
    const { handler, deliveries } = recorder(() => true);
    queue.start(handler);
    await queue.enqueue(msg("x", 0)); // received at 0, fails: hidden until 10
    await vi.waitFor(() => expect(deliveries).toHaveLength(1));
    now = 5;
    await queue.enqueue(msg("y", 0)); // received at 5, fails: hidden until 15
    await vi.waitFor(() => expect(deliveries).toHaveLength(2));
    now = 10; // x's timer: x is dead-lettered, the clock jumps to 15
    await vi.waitFor(() => expect(queue.deadLetters()).toHaveLength(2), { timeout: 5_000 });
    await queue.drain();
    expect(queue.deadLetters().map((d) => JSON.parse(d.body).conversation)).toEqual(["x", "y"]);
  });

  it("groups by tenant and conversation", () => {
    expect(messageGroupId(msg("c", 0, "alice"))).not.toBe(messageGroupId(msg("c", 0, "bob")));
  });
});

describe("in-process queue: deduplication", () => {
  it("drops a message with the same deduplication id within 5 minutes, accepts it after", async () => {
    let now = Date.UTC(2026, 10, 29, 12);
    const queue = newQueue({ clock: { nowMillis: () => now } });

    await queue.enqueue(msg("c1", 3));
    await queue.enqueue(msg("c1", 3)); // retried enqueue: dropped
    await queue.enqueue(msg("c1", 4)); // another turn: kept
    expect(queue.pending()).toEqual({ visible: 2, inFlight: 0 });

    now += 5 * 60_000 - 1;
    await expect(
      queue.send('{"tenant":"alice","conversation":"c1","turn":3}', {
        groupId: messageGroupId(msg("c1", 3)),
        deduplicationId: "0".repeat(64),
      }),
    ).resolves.toMatchObject({ duplicate: false });
    await queue.enqueue(msg("c1", 3));
    expect(queue.pending().visible).toBe(3);

    now += 1;
    await queue.enqueue(msg("c1", 3)); // the window has passed
    expect(queue.pending().visible).toBe(4);
  });

  it("still deduplicates after the first message was deleted", async () => {
    const queue = newQueue();
    const { handler, deliveries } = recorder();
    queue.start(handler);
    await queue.enqueue(msg("c1", 0));
    await queue.drain();
    await queue.enqueue(msg("c1", 0));
    await queue.drain();
    expect(deliveries).toHaveLength(1);
  });

  it("rejects ids SQS would reject", async () => {
    const queue = newQueue();
    await expect(
      queue.send("{}", { groupId: "x".repeat(129), deduplicationId: "d" }),
    ).rejects.toThrow(QueueError);
    await expect(
      queue.send("{}", { groupId: "g", deduplicationId: "white space" }),
    ).rejects.toThrow(/deduplication id/);
  });
});

describe("in-process queue: journal", () => {
  it("a new queue on the same file gets every pending message, in order, with its receive count", async () => {
    const path = join(dir, "queue.json");
    const first = new InProcessQueue({
      journal: new FileQueueJournal(path),
      visibilityTimeoutMs: 60_000, // a failed message would stay hidden a long time in this instance
      onError: () => undefined,
    });
    const { handler } = recorder((key) => key === "c1#0");
    for (const turn of [0, 1]) await first.enqueue(msg("c1", turn));
    await first.enqueue(msg("c2", 0));
    // One batch: c1#0 fails (hidden for a minute), c2#0 is done.
    first.start(handler);
    await vi.waitFor(() => expect(first.pending()).toEqual({ visible: 1, inFlight: 1 }));
    // ...and the deletion of c2#0 has reached the file.
    await vi.waitFor(async () => expect(await new FileQueueJournal(path).load()).toHaveLength(2));
    // The process dies here: the instance is simply abandoned, never stopped.

    const second = newQueue({ journal: new FileQueueJournal(path) });
    await second.ready();
    expect(second.pending()).toEqual({ visible: 2, inFlight: 0 });
    const { handler: handler2, deliveries } = recorder();
    second.start(handler2);
    await second.drain();
    expect(deliveries.map((d) => [d.key, d.receiveCount])).toEqual([
      ["c1#0", 2],
      ["c1#1", 1],
    ]);

    const third = newQueue({ journal: new FileQueueJournal(path) });
    await third.ready();
    expect(third.pending()).toEqual({ visible: 0, inFlight: 0 });
    // `first` still has its timers; stop it now that the test is over.
    await first.stop();
  });

  it("keeps each message's posted_at_ms in the journal and delivers it after a restart", async () => {
    const path = join(dir, "queue.json");
    const first = newQueue({ journal: new FileQueueJournal(path) });
    await first.enqueue({ ...msg("c1", 0), posted_at_ms: 1_795_000_000_000 });
    // Queued before posted_at_ms existed: delivered without it.
    await first.enqueue(msg("c1", 1));
    await first.stop();

    const second = newQueue({ journal: new FileQueueJournal(path) });
    await second.ready();
    const bodies: unknown[] = [];
    second.start(async (event: SQSEvent) => {
      for (const record of event.Records) bodies.push(JSON.parse(record.body));
      return { batchItemFailures: [] };
    });
    await second.drain();
    expect(bodies).toEqual([
      { tenant: "alice", conversation: "c1", turn: 0, posted_at_ms: 1_795_000_000_000 },
      { tenant: "alice", conversation: "c1", turn: 1 },
    ]);
  });

  it("keeps dead letters and the deduplication window across a restart", async () => {
    const path = join(dir, "queue.json");
    const first = newQueue({ journal: new FileQueueJournal(path), maxReceiveCount: 2 });
    first.start(recorder(() => true).handler);
    await first.enqueue(msg("c1", 0));
    await first.drain();
    await first.enqueue(msg("c1", 0)); // within the window: dropped
    await first.enqueue(msg("c1", 1));
    await first.stop();

    const second = newQueue({ journal: new FileQueueJournal(path) });
    await second.ready();
    expect(second.deadLetters().map((d) => JSON.parse(d.body))).toEqual([msg("c1", 0)]);
    expect(second.pending()).toEqual({ visible: 1, inFlight: 0 });
    await second.enqueue(msg("c1", 1)); // still within the window after the restart
    expect(second.pending()).toEqual({ visible: 1, inFlight: 0 });
  });

  it("never loses an acknowledged enqueue when the process is killed with SIGKILL", async () => {
    const path = join(dir, "queue.json");
    const script = join(dir, "producer.mts");
    const module = (name: string) =>
      JSON.stringify(new URL(`../../functions/queue/${name}`, import.meta.url).href);
    await writeFile(
      script,
      `import { InProcessQueue } from ${module("in-process.ts")};
import { FileQueueJournal } from ${module("file-journal.ts")};
const queue = new InProcessQueue({ journal: new FileQueueJournal(${JSON.stringify(path)}) });
for (let turn = 0; ; turn++) {
  await queue.enqueue({ tenant: "alice", conversation: "c" + (turn % 3), turn });
  process.stdout.write(turn + "\\n");
}
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: process.cwd(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let acknowledged = -1;
    await new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        for (const line of chunk.split("\n")) if (line) acknowledged = Number(line);
        if (acknowledged >= 20 && !child.killed) {
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.on("exit", () => resolve());
    });
    expect(acknowledged).toBeGreaterThanOrEqual(20);

    const restarted = newQueue({ journal: new FileQueueJournal(path) });
    await restarted.ready();
    const { handler, deliveries } = recorder();
    restarted.start(handler);
    await restarted.drain();
    const turns = new Set(deliveries.map((d) => Number(d.key.split("#")[1])));
    for (let turn = 0; turn <= acknowledged; turn++) expect(turns.has(turn)).toBe(true);
  });

  it("refuses a corrupt journal with the file's path", async () => {
    const path = join(dir, "queue.json");
    await writeFile(path, "{ not json");
    const queue = newQueue({ journal: new FileQueueJournal(path) });
    const error = await queue.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueError);
    expect((error as QueueError).cause).toBeInstanceOf(CorruptDataError);
    expect((error as QueueError).message).toContain(path);
  });

  it("keeps every send of a concurrent burst (appended in group commits)", async () => {
    const path = join(dir, "queue.json");
    const queue = newQueue({ journal: new FileQueueJournal(path) });
    await Promise.all(Array.from({ length: 30 }, (_, turn) => queue.enqueue(msg("c", turn))));
    const saved = await new FileQueueJournal(path).load();
    expect(saved.map((m) => JSON.parse(m.body).turn)).toEqual(
      Array.from({ length: 30 }, (_, turn) => turn),
    );
  });

  it("recovers after a crash in the middle of an append: the torn line is dropped, every acknowledged message kept", async () => {
    const path = join(dir, "queue.json");
    const first = newQueue({ journal: new FileQueueJournal(path) });
    await first.enqueue(msg("c1", 0));
    await first.enqueue(msg("c1", 1));
    await first.stop();
    // The process died writing the next line: a third of one reached the disk, no newline.
    const line = (await readFile(path, "utf8")).trimEnd().split("\n").at(-1) as string;
    await writeFile(path, line.slice(0, Math.floor(line.length / 3)), { flag: "a" });

    const second = newQueue({ journal: new FileQueueJournal(path) });
    await second.ready();
    expect(second.pending()).toEqual({ visible: 2, inFlight: 0 });
    await second.enqueue(msg("c1", 2));
    await second.stop();

    // The next write cut the torn line: the journal reads whole again.
    const third = newQueue({ journal: new FileQueueJournal(path) });
    const { handler, deliveries } = recorder();
    third.start(handler);
    await third.drain();
    expect(deliveries.map((d) => [d.key, d.receiveCount])).toEqual([
      ["c1#0", 1],
      ["c1#1", 1],
      ["c1#2", 1],
    ]);
  });
});

describe("in-process queue: drain and stop", () => {
  it("drain rejects instead of waiting forever when no consumer runs", async () => {
    const queue = newQueue();
    await queue.drain(); // empty: resolves
    await queue.enqueue(msg("c", 0));
    await expect(queue.drain()).rejects.toThrow(/not running and 1 message/);
  });

  it("stop waits for the batch being handled and keeps what is not done", async () => {
    const queue = newQueue();
    let finished = false;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    queue.start(async (event) => {
      started();
      await new Promise((resolve) => setTimeout(resolve, 5));
      finished = true;
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await queue.enqueue(msg("c", 0));
    await running;
    await queue.stop();
    expect(finished).toBe(true);
    expect(queue.pending().visible + queue.pending().inFlight).toBe(1);
  });
});

describe("in-process queue + compactor handler", () => {
  it("sends a malformed body to the dead-letter list while good messages evaluate", async () => {
    // Logs and EMF lines are not the subject here: swallow them.
    vi.spyOn(process.stdout, "write").mockReturnValue(true);
    vi.spyOn(process.stderr, "write").mockReturnValue(true);
    const logger = new Logger({ serviceName: "compactor-test", logLevel: "SILENT" });
    const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
    const evaluated: string[] = [];
    const handler = createCompactorHandler({
      evaluate: async (message) => {
        evaluated.push(`${message.conversation}#${message.turn}`);
        return { outcome: "skipped", reason: "stale" };
      },
      logger,
      metrics,
    });
    const queue = newQueue();
    queue.start(handler);
    await queue.send("not json", { groupId: "poison-group", deduplicationId: "poison" });
    await queue.enqueue(msg("c1", 0));
    await queue.enqueue(msg("c2", 0));
    await queue.drain();
    vi.restoreAllMocks();

    expect(evaluated.sort()).toEqual(["c1#0", "c2#0"]);
    expect(queue.deadLetters().map((d) => [d.body, d.receive_count])).toEqual([["not json", 5]]);
  });

  it("a poison message holds back its own conversation only: the others evaluate at once, its later turns after it", async () => {
    vi.spyOn(process.stdout, "write").mockReturnValue(true);
    vi.spyOn(process.stderr, "write").mockReturnValue(true);
    const logger = new Logger({ serviceName: "compactor-test", logLevel: "SILENT" });
    const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
    const evaluated: string[] = [];
    const handler = createCompactorHandler({
      evaluate: async (message) => {
        const key = `${message.conversation}#${message.turn}`;
        if (key === "a#0") throw new Error("poison");
        evaluated.push(key);
        return { outcome: "skipped", reason: "stale" };
      },
      logger,
      metrics,
    });
    // Every batch the poison is in also carries b's oldest message, behind it.
    const batches: string[][] = [];
    const queue = newQueue({ visibilityTimeoutMs: 50 });
    await queue.enqueue(msg("a", 0)); // poison
    await queue.enqueue(msg("a", 1));
    await queue.enqueue(msg("b", 0));
    await queue.enqueue(msg("b", 1));
    queue.start(async (event) => {
      batches.push(event.Records.map(keyOf));
      return handler(event);
    });
    await queue.drain();
    vi.restoreAllMocks();

    expect(batches[0]).toEqual(["a#0", "b#0"]);
    // b was never failed along with a: each of its messages evaluated once, at its first receive.
    expect(evaluated.filter((key) => key.startsWith("b#"))).toEqual(["b#0", "b#1"]);
    expect(batches.flat().filter((key) => key.startsWith("b#"))).toEqual(["b#0", "b#1"]);
    // a's later turn waited for the poison, and then evaluated.
    expect(evaluated.filter((key) => key.startsWith("a#"))).toEqual(["a#1"]);
    expect(batches.findIndex((batch) => batch.includes("a#1"))).toBeGreaterThan(
      batches.findLastIndex((batch) => batch.includes("a#0")),
    );
    expect(
      queue.deadLetters().map((d) => [keyOf({ body: d.body } as SQSRecord), d.receive_count]),
    ).toEqual([["a#0", 5]]);
  });
});
