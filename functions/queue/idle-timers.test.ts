import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EvaluationMessage } from "../ports.ts";
import { FileQueueJournal } from "./file-journal.ts";
import { delaySeconds, QueueIdleTimers, timerId } from "./idle-timers.ts";
import { InProcessQueue } from "./in-process.ts";
import { decodeMessageBody } from "./message.ts";

const TIMER: EvaluationMessage = {
  tenant: "alice",
  conversation: "c",
  turn: 7,
  incarnation: "life-1",
  idle_from_ms: 1_000_000,
};
const DUE = 1_300_000;

describe("idle timers", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "autocompact-timers-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("stay hidden until due across a restart of the local runtime, then arrive once", async () => {
    let now = 1_000_000;
    const clock = { nowMillis: () => now };
    const path = join(dir, "idle-timers.json");
    const first = new InProcessQueue({ journal: new FileQueueJournal(path), clock });
    await new QueueIdleTimers(first, clock).schedule(TIMER, DUE);
    // The same timer scheduled again (a retried evaluation) is dropped as a duplicate.
    await new QueueIdleTimers(first, clock).schedule(TIMER, DUE);
    expect(first.pending()).toEqual({ visible: 0, inFlight: 1 });
    await first.stop();

    now = 1_200_000; // restarted before the timer is due: still hidden
    const second = new InProcessQueue({ journal: new FileQueueJournal(path), clock });
    await second.ready();
    expect(second.pending()).toEqual({ visible: 0, inFlight: 1 });
    now = DUE;
    expect(second.pending()).toEqual({ visible: 1, inFlight: 0 });
    const delivered: unknown[] = [];
    second.start(async (event) => {
      for (const record of event.Records) delivered.push(decodeMessageBody(record.body));
      return { batchItemFailures: [] };
    });
    await second.drain();
    await second.stop();
    expect(delivered).toEqual([{ ok: true, message: TIMER }]);
  });

  it("delay whole seconds up to SQS's 900, so a later timer comes early and defers again", () => {
    expect(delaySeconds(DUE, DUE - 299_001)).toBe(300);
    expect(delaySeconds(DUE, DUE - 3_600_000)).toBe(900);
    expect(delaySeconds(DUE, DUE + 5_000)).toBe(0);
  });

  it("have one id per turn and due time, so a re-deferral is another timer", () => {
    expect(timerId(TIMER, DUE)).not.toBe(timerId(TIMER, DUE + 1));
    expect(timerId(TIMER, DUE)).toMatch(/^[0-9a-f]{64}$/);
  });
});
