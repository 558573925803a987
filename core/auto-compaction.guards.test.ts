/**
 * Issue 26's guards and reserve in the D50 step, on hand-worked numbers:
 * the step alone (the D50 worked example's state), then `simulateStream`
 * on a stream where D50 fires a one-turn band every turn once over.
 */
import { describe, expect, it } from "vitest";
import { strippableTurns } from "../test/helpers/builders.ts";
import { stepAutoCompaction, type TriggerState } from "./auto-compaction.ts";
import { type AutoConfigLayer, resolveAutoConfig } from "./config.ts";
import { simulateStream } from "./replay.ts";

const NOW = Date.UTC(2026, 5, 15);

/** The D50 worked example after turn 12: range [1, 9], 160,000 > 150,000, 40,000 after the band. */
function step(layer: AutoConfigLayer, state: Partial<TriggerState> = {}, after = 40_000) {
  return stepAutoCompaction({
    state: {
      config: resolveAutoConfig({ enabled: true, ...layer }),
      turn_count: 13,
      after_last_compaction: 0,
      estimated_tokens: 160_000,
      context_window: 200_000,
      ...state,
    },
    firing: () => ({ compactions: [], nowMillis: NOW, estimateWith: () => after }),
  });
}

describe("the D50 step's guards", () => {
  it("adds the reserve before the threshold test and records it in the trigger", async () => {
    expect(await step({ reserve_tokens: 10_000 }, { estimated_tokens: 140_000 })).toMatchObject({
      kind: "skip",
      decision: { reason: "under_threshold", estimated_tokens: 140_000 },
    });
    const fired = await step({ reserve_tokens: 10_000.5 }, { estimated_tokens: 140_000 });
    expect(fired).toMatchObject({
      kind: "fire",
      decision: { estimated_tokens: 140_000, threshold: 150_000 },
    });
    if (fired.kind !== "fire") throw new Error("expected a firing");
    expect(fired.band.compaction.trigger).toEqual({
      turn: 12,
      estimated_tokens: 140_000,
      threshold: 150_000,
      context_window: 200_000,
      estimated_tokens_after: 40_000,
      reserve_tokens: 10_000.5,
    });
  });

  it("skips a range shorter than min_band_turns as short_range", async () => {
    // [1, 9] spans 9 turns.
    expect(await step({ min_band_turns: 10 })).toMatchObject({
      kind: "skip",
      decision: { fire: false, reason: "short_range", range: { from_turn: 1, to_turn: 9 } },
    });
    expect(await step({ min_band_turns: 9 })).toMatchObject({ kind: "fire" });
  });

  it("skips a band removing less than min_gain_tokens as low_gain, with its gain", async () => {
    // 160,000 - 40,000 = 120,000 removed.
    expect(await step({ min_gain_tokens: 120_000.5 })).toEqual({
      kind: "skip",
      decision: {
        fire: false,
        reason: "low_gain",
        turn_count: 13,
        range: { from_turn: 1, to_turn: 9 },
        estimated_tokens: 160_000,
        threshold: 150_000,
        context_window: 200_000,
        gain_tokens: 120_000,
      },
    });
    expect(await step({ min_gain_tokens: 120_000 })).toMatchObject({ kind: "fire" });
  });

  it("lets no guard hold back a band once estimate plus reserve exceeds the window", async () => {
    const both = { min_band_turns: 10, min_gain_tokens: 200_000 };
    // 160,000 + 40,000 = 200,000: at the window, not past it.
    expect(await step({ ...both, reserve_tokens: 40_000 })).toMatchObject({
      kind: "skip",
      decision: { reason: "short_range" },
    });
    const fired = await step({ ...both, reserve_tokens: 40_000.25 });
    if (fired.kind !== "fire") throw new Error("expected a firing");
    expect(fired.band.compaction.trigger).toEqual({
      turn: 12,
      estimated_tokens: 160_000,
      threshold: 150_000,
      context_window: 200_000,
      estimated_tokens_after: 40_000,
      reserve_tokens: 40_000.25,
      guard_overridden: ["short_range", "low_gain"],
    });
    const lowGainOnly = await step({ min_gain_tokens: 200_000 }, { estimated_tokens: 200_001 });
    if (lowGainOnly.kind !== "fire") throw new Error("expected a firing");
    expect(lowGainOnly.band.compaction.trigger?.guard_overridden).toEqual(["low_gain"]);
  });

  it("keeps D50's audit exactly with the defaults, even for a band that adds tokens", async () => {
    // A summary longer than its turns: gain -10,000, below 0, and D50 appends it all the same.
    const fired = await step({}, {}, 170_000);
    if (fired.kind !== "fire") throw new Error("expected a firing");
    expect(fired.band.compaction.trigger).toEqual({
      turn: 12,
      estimated_tokens: 160_000,
      threshold: 150_000,
      context_window: 200_000,
      estimated_tokens_after: 170_000,
    });
  });
});

async function firings(turns: number, window: number, layer: AutoConfigLayer = {}) {
  const { firings } = await simulateStream(strippableTurns(turns), {
    layers: [{ enabled: true, ...layer }],
    model: { context_window: window },
  });
  return firings.map((f) => ({
    turn: f.turn,
    from_turn: f.from_turn,
    to_turn: f.to_turn,
    estimated_tokens: f.estimated_tokens,
    estimated_tokens_after: f.estimated_tokens_after,
    ...(f.compaction.trigger?.guard_overridden
      ? { guard_overridden: f.compaction.trigger.guard_overridden }
      : {}),
  }));
}

describe("simulate with the guards", () => {
  // Window 2,000, threshold 1,500: over at turn 15 (1,600 tokens), then every
  // turn adds 100 tokens and a band of k turns removes 25·k.
  it("fires a one-turn band every turn with D50's defaults once over", async () => {
    expect(await firings(24, 2_000)).toEqual([
      {
        turn: 15,
        from_turn: 1,
        to_turn: 12,
        estimated_tokens: 1_600,
        estimated_tokens_after: 1_300,
      },
      {
        turn: 18,
        from_turn: 13,
        to_turn: 15,
        estimated_tokens: 1_600,
        estimated_tokens_after: 1_525,
      },
      {
        turn: 19,
        from_turn: 16,
        to_turn: 16,
        estimated_tokens: 1_625,
        estimated_tokens_after: 1_600,
      },
      {
        turn: 20,
        from_turn: 17,
        to_turn: 17,
        estimated_tokens: 1_700,
        estimated_tokens_after: 1_675,
      },
      {
        turn: 21,
        from_turn: 18,
        to_turn: 18,
        estimated_tokens: 1_775,
        estimated_tokens_after: 1_750,
      },
      {
        turn: 22,
        from_turn: 19,
        to_turn: 19,
        estimated_tokens: 1_850,
        estimated_tokens_after: 1_825,
      },
      {
        turn: 23,
        from_turn: 20,
        to_turn: 20,
        estimated_tokens: 1_925,
        estimated_tokens_after: 1_900,
      },
    ]);
  });

  it("fires every min_band_turns turns with min_band_turns", async () => {
    expect(await firings(24, 2_000, { min_band_turns: 3 })).toEqual([
      {
        turn: 15,
        from_turn: 1,
        to_turn: 12,
        estimated_tokens: 1_600,
        estimated_tokens_after: 1_300,
      },
      {
        turn: 18,
        from_turn: 13,
        to_turn: 15,
        estimated_tokens: 1_600,
        estimated_tokens_after: 1_525,
      },
      {
        turn: 21,
        from_turn: 16,
        to_turn: 18,
        estimated_tokens: 1_825,
        estimated_tokens_after: 1_750,
      },
    ]);
  });

  it("skips bands below min_gain_tokens as low_gain", async () => {
    // A one-turn band removes 25 < 50; two turns remove 50, not below it.
    expect(await firings(24, 2_000, { min_gain_tokens: 50 })).toEqual([
      {
        turn: 15,
        from_turn: 1,
        to_turn: 12,
        estimated_tokens: 1_600,
        estimated_tokens_after: 1_300,
      },
      {
        turn: 18,
        from_turn: 13,
        to_turn: 15,
        estimated_tokens: 1_600,
        estimated_tokens_after: 1_525,
      },
      {
        turn: 20,
        from_turn: 16,
        to_turn: 17,
        estimated_tokens: 1_725,
        estimated_tokens_after: 1_675,
      },
      {
        turn: 22,
        from_turn: 18,
        to_turn: 19,
        estimated_tokens: 1_875,
        estimated_tokens_after: 1_825,
      },
    ]);
  });

  it("overrides both guards once the view exceeds the window", async () => {
    // Window 1,000, threshold 750: over at turn 7; at turn 11 the view (1,025) is past the window.
    expect(await firings(14, 1_000, { min_band_turns: 3, min_gain_tokens: 60 })).toEqual([
      { turn: 7, from_turn: 1, to_turn: 4, estimated_tokens: 800, estimated_tokens_after: 700 },
      { turn: 10, from_turn: 5, to_turn: 7, estimated_tokens: 1_000, estimated_tokens_after: 925 },
      {
        turn: 11,
        from_turn: 8,
        to_turn: 8,
        estimated_tokens: 1_025,
        estimated_tokens_after: 1_000,
        guard_overridden: ["short_range", "low_gain"],
      },
      {
        turn: 12,
        from_turn: 9,
        to_turn: 9,
        estimated_tokens: 1_100,
        estimated_tokens_after: 1_075,
        guard_overridden: ["short_range", "low_gain"],
      },
      {
        turn: 13,
        from_turn: 10,
        to_turn: 10,
        estimated_tokens: 1_175,
        estimated_tokens_after: 1_150,
        guard_overridden: ["short_range", "low_gain"],
      },
    ]);
  });
});
