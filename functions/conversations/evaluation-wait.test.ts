import { describe, expect, it } from "vitest";
import { EvaluationPendingError } from "../errors.ts";
import { type ConversationHead, EMPTY_HEAD } from "../ports.ts";
import { awaitDecision, pollDelayMs, progressOf } from "./evaluation-wait.ts";

/** A clock that only moves when the waiter sleeps, and the reads it made. */
function fakeTime(heads: ConversationHead[]) {
  const log: string[] = [];
  let now = 1_000;
  let reads = 0;
  return {
    log,
    read: async () => {
      const head = heads[Math.min(reads, heads.length - 1)] as ConversationHead;
      reads++;
      log.push(`read@${now - 1_000}`);
      return head;
    },
    deps: {
      clock: { nowMillis: () => now },
      sleep: async (ms: number) => {
        now += ms;
      },
    },
  };
}

const head = (
  turnCount: number,
  decided?: number,
  evaluated = decided ?? -1,
): ConversationHead => ({
  ...EMPTY_HEAD,
  turn_count: turnCount,
  evaluated_through: evaluated,
  ...(decided === undefined ? {} : { decided_through: decided }),
});

describe("awaitDecision", () => {
  it("answers from one read when the turn is decided already", async () => {
    const time = fakeTime([head(3, 2)]);
    expect(await awaitDecision(time.read, { afterTurn: 1, waitMs: 5_000 }, time.deps)).toEqual(
      head(3, 2),
    );
    expect(time.log).toEqual(["read@0"]);
  });

  it("reads again 50, 100, 200 ms apart until an evaluation decides on the turn", async () => {
    const time = fakeTime([head(3), head(3), head(3, 1, 2), head(3, 2)]);
    const answer = await awaitDecision(time.read, { afterTurn: 2, waitMs: 5_000 }, time.deps);
    expect(answer.decided_through).toBe(2);
    // The third read saw turn 2 only stale-skipped (evaluated, not decided): it waits on.
    expect(time.log).toEqual(["read@0", "read@50", "read@150", "read@350"]);
  });

  it("spaces reads at most a second apart", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map(pollDelayMs)).toEqual([
      50, 100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });

  it("gives up when the wait runs out, saying how far evaluations got, never sleeping past it", async () => {
    const time = fakeTime([head(5, 2, 3)]);
    const error = await awaitDecision(time.read, { afterTurn: 4, waitMs: 300 }, time.deps).catch(
      (e: unknown) => e,
    );
    expect(time.log).toEqual(["read@0", "read@50", "read@150", "read@300"]);
    expect(error).toBeInstanceOf(EvaluationPendingError);
    const pending = error as EvaluationPendingError;
    expect(pending.message).toBe(
      "no evaluation has decided on turn 4 yet (decided through 2, after 0.3 s): retry, or wait longer (wait=S, at most 25)",
    );
    expect(pending.status).toBe(503);
    expect(pending.type).toBe("/problems/evaluation-pending");
    expect(pending.problemExtensions()).toEqual({
      after_turn: 4,
      evaluated_through: 3,
      decided_through: 2,
    });
    expect(pending.responseHeaders()).toEqual({ "Retry-After": "1" });
  });

  it("answers a zero wait from one read", async () => {
    const time = fakeTime([head(2)]);
    await expect(
      awaitDecision(time.read, { afterTurn: 0, waitMs: 0 }, time.deps),
    ).rejects.toBeInstanceOf(EvaluationPendingError);
    expect(time.log).toEqual(["read@0"]);
  });

  it("refuses a turn that is not stored, naming the largest one", async () => {
    const time = fakeTime([head(3, 2)]);
    await expect(
      awaitDecision(time.read, { afterTurn: 3, waitMs: 1_000 }, time.deps),
    ).rejects.toThrow(
      "after_turn 3 is not stored yet: the conversation has 3 turn(s), so after_turn can be at most 2",
    );
  });
});

describe("progressOf", () => {
  it("reports null before any evaluation, and the two marks apart", () => {
    expect(progressOf(EMPTY_HEAD)).toEqual({ evaluated_through: null, decided_through: null });
    expect(progressOf(head(5, 2, 3))).toEqual({ evaluated_through: 3, decided_through: 2 });
  });
});
