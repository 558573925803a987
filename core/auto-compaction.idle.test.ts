/**
 * Idle compaction (issue 29) in the D50 step and in `simulateStream`, on
 * hand-worked numbers: the D50 worked example's state for the step, and a
 * stream of 100-token turns (400 characters, chars / 4) whose rests are set
 * by their timestamps for the replay.
 */
import { describe, expect, it } from "vitest";
import { at, reasoning, request, turnStart } from "../test/helpers/builders.ts";
import { stepAutoCompaction, type TriggerState } from "./auto-compaction.ts";
import { type AutoConfigLayer, ConfigError, parseAutoLayer, resolveAutoConfig } from "./config.ts";
import type { Entry } from "./events.ts";
import { evaluateStream, prepareStream, simulateStream } from "./replay.ts";

const NOW = Date.UTC(2026, 5, 15);

/** The D50 worked example after turn 12: range [1, 9], 160,000 > 150,000, 40,000 after the band. */
function step(layer: AutoConfigLayer, state: Partial<TriggerState> = {}) {
  return stepAutoCompaction({
    state: {
      config: resolveAutoConfig({ enabled: true, when: "idle", ...layer }),
      turn_count: 13,
      after_last_compaction: 0,
      estimated_tokens: 160_000,
      context_window: 200_000,
      ...state,
    },
    firing: () => ({ compactions: [], nowMillis: NOW, estimateWith: () => 40_000 }),
  });
}

describe("the D50 step with when: idle", () => {
  it("defers a firing below hard_ratio until the conversation has rested idle_seconds", async () => {
    expect(await step({})).toMatchObject({
      kind: "skip",
      decision: { reason: "deferred_until_idle", due_in_seconds: 300, range: { from_turn: 1 } },
    });
    expect(await step({ idle_seconds: 60 }, { rested_seconds: 20 })).toMatchObject({
      decision: { reason: "deferred_until_idle", due_in_seconds: 40 },
    });
    const fired = await step({}, { rested_seconds: 300 });
    if (fired.kind !== "fire") throw new Error("expected a firing");
    expect(fired.decision).toMatchObject({
      reason: "over_threshold",
      idle: { rested_seconds: 300 },
    });
    expect(fired.band.compaction.trigger).toEqual({
      turn: 12,
      estimated_tokens: 160_000,
      threshold: 150_000,
      context_window: 200_000,
      estimated_tokens_after: 40_000,
      when: "idle",
      rested_seconds: 300,
    });
  });

  it("names a calibrated estimator and its line in the band's trigger", async () => {
    const fired = await step(
      {},
      {
        rested_seconds: 300,
        calibration: { kind: "fixed", tokens_per_char: 0.3, overhead_tokens: 1_200 },
      },
    );
    if (fired.kind !== "fire") throw new Error("expected a firing");
    expect(fired.band.compaction.trigger).toMatchObject({
      estimator: "calibrated",
      tokens_per_char: 0.3,
      overhead_tokens: 1_200,
    });
  });

  it("fires at once past context_window * hard_ratio, as D50 does", async () => {
    // 0.75 * 200,000 = 150,000 < 160,000 = 0.8 * 200,000: past a hard ratio of 0.79, not 0.8.
    const hard = await step({ hard_ratio: 0.79 });
    if (hard.kind !== "fire") throw new Error("expected a firing");
    expect(hard.band.compaction.trigger).not.toHaveProperty("when");
    expect(await step({ hard_ratio: 0.8 })).toMatchObject({
      decision: { reason: "deferred_until_idle" },
    });
  });

  it("leaves when: turn as D50 (no deferral, whatever the rest)", async () => {
    expect(await step({ when: "turn" })).toMatchObject({ kind: "fire" });
  });
});

describe("the idle settings", () => {
  const messages = (layer: AutoConfigLayer) => {
    try {
      resolveAutoConfig(layer);
    } catch (error) {
      if (error instanceof ConfigError) return error.messages;
      throw error;
    }
    return [];
  };

  it("validate each key, naming it in full", () => {
    const parsed = (raw: unknown) => {
      try {
        return parseAutoLayer(raw);
      } catch (error) {
        if (error instanceof ConfigError) return error.messages;
        throw error;
      }
    };
    expect(parsed({ idle_seconds: 29, when: "later", hard_ratio: 1.5 })).toEqual([
      'conversation.compaction.auto.when: must be "turn" or "idle"',
      "conversation.compaction.auto.idle_seconds: must be at least 30",
      "conversation.compaction.auto.hard_ratio: must be at most 1",
    ]);
    expect(parsed({ idle_seconds: 3601 })).toEqual([
      "conversation.compaction.auto.idle_seconds: must be at most 3600",
    ]);
    expect(messages({ when: "idle", trigger_ratio: 0.95 })).toEqual([
      "conversation.compaction.auto.hard_ratio: must be greater than trigger_ratio (0.95); got 0.95",
    ]);
    // A defaulted hard ratio is not checked while when is "turn": no old config breaks.
    expect(messages({ trigger_ratio: 0.96 })).toEqual([]);
    expect(messages({ trigger_ratio: 0.5, hard_ratio: 0.4 })).toEqual([
      "conversation.compaction.auto.hard_ratio: must be greater than trigger_ratio (0.5); got 0.4",
    ]);
    // Later layers win: a tenant's hard ratio over a service's trigger ratio is checked merged.
    expect(
      resolveAutoConfig({ trigger_ratio: 0.6 }, { hard_ratio: 0.7 }, { when: "idle" }),
    ).toMatchObject({ trigger_ratio: 0.6, hard_ratio: 0.7, when: "idle", idle_seconds: 300 });
  });
});

/** Turns of 400 characters (100 tokens) starting at `starts` (seconds), each 1 s long. */
function stream(starts: readonly number[]): Entry[] {
  return starts.flatMap((s, t) => [
    turnStart(s),
    request(`${t}`.padEnd(300, "q"), s),
    reasoning("r".repeat(100), s + 1),
  ]);
}

const LAYER: AutoConfigLayer = { enabled: true, trigger_ratio: 0.5 };
const MODEL = { context_window: 1_000 };
// 60 s apart, but a 10-minute rest after turn 7 (it ends at 421 s; turn 8 starts at 1,021 s).
const STARTS = [0, 60, 120, 180, 240, 300, 360, 420, 1_020, 1_080];

describe("simulateStream with when: idle", () => {
  it("fires the band when the conversation first rests idle_seconds after crossing, not before", async () => {
    // 6 turns = 600 tokens > 500 after turn 5: D50 fires there.
    const turn = await simulateStream(stream(STARTS), { layers: [LAYER], model: MODEL });
    expect(turn.firings[0]?.turn).toBe(5);
    const idle = await simulateStream(stream(STARTS), {
      layers: [{ ...LAYER, when: "idle" }],
      model: MODEL,
    });
    expect(idle.firings[0]).toMatchObject({ turn: 7 });
    // Stamped when the timer fired: turn 7's last event (421 s) plus 300 s.
    expect(idle.firings[0]?.compaction.timestamp).toBe(at(721));
    expect(idle.firings[0]?.compaction.trigger).toMatchObject({
      when: "idle",
      rested_seconds: 300,
    });
  });

  it("fires after a rest of exactly idle_seconds, and after the last turn, which nothing follows", async () => {
    // Turn 7 ends at 421 s; turn 8 starts 300 s later, to the second.
    const exact = STARTS.map((s, t) => (t < 8 ? s : s - 1_020 + 721));
    const idle = await simulateStream(stream(exact), {
      layers: [{ ...LAYER, when: "idle" }],
      model: MODEL,
    });
    expect(idle.firings[0]).toMatchObject({ turn: 7 });
    // Six turns: the crossing turn is the last; its timer fires 300 s after its last event (301 s).
    const last = await simulateStream(stream(STARTS.slice(0, 6)), {
      layers: [{ ...LAYER, when: "idle" }],
      model: MODEL,
    });
    expect(last.firings.map((f) => [f.turn, f.compaction.timestamp])).toEqual([[5, at(601)]]);
  });

  it("fires at once past hard_ratio when the conversation never rests", async () => {
    const busy = STARTS.map((_, t) => t * 60);
    const idle = await simulateStream(stream(busy), {
      layers: [{ ...LAYER, when: "idle", hard_ratio: 0.75 }],
      model: MODEL,
    });
    // 8 turns = 800 tokens > 750 after turn 7.
    expect(idle.firings[0]?.turn).toBe(7);
    expect(idle.firings[0]?.compaction.trigger).not.toHaveProperty("when");
  });

  it("takes the rests from the events: last event of a turn to the next turn's first", () => {
    const rests = prepareStream(stream(STARTS)).boundaries.map((b) => b.restMillis);
    expect(rests).toEqual([
      59_000,
      59_000,
      59_000,
      59_000,
      59_000,
      59_000,
      59_000,
      599_000,
      59_000,
      null,
    ]);
  });

  it("evaluate rests the conversation from its last event to now", async () => {
    const entries = stream(STARTS.slice(0, 6));
    const layers = [{ ...LAYER, when: "idle" as const }];
    const lastMillis = Date.parse(at(301));
    const soon = await evaluateStream(entries, {
      layers,
      model: MODEL,
      nowMillis: lastMillis + 10_000,
    });
    expect(soon).toMatchObject({
      decision: { reason: "deferred_until_idle", due_in_seconds: 290 },
    });
    const later = await evaluateStream(entries, {
      layers,
      model: MODEL,
      nowMillis: lastMillis + 300_000,
    });
    expect(later.kind).toBe("fire");
  });
});
