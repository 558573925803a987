import { describe, expect, it } from "vitest";
import { message, request, toolCall, toolResult } from "../test/helpers/builders.ts";
import { entryChars } from "./estimate.ts";
import { DEFAULT_GRID, type Grid, parseGrid, type TuneConfig } from "./tune-grid.ts";
import {
  type Bill,
  type Candidate,
  type ConversationClass,
  classify,
  describeConfig,
  tuneVerdict,
} from "./tune-verdict.ts";

const config = (trigger_ratio: number, keep_last = 1, keep_first = 0): TuneConfig => ({
  trigger_ratio,
  keep_first,
  keep_last,
  reasoning: "strip",
  tool_calls: "strip",
  summary: null,
});

const bill = (dollars: number, extra: Partial<Bill> = {}): Bill => ({
  dollars,
  overflow_calls: 0,
  calls: 10,
  retention_sum: 5,
  firings: 1,
  ...extra,
});

/** A candidate whose conversation i costs `dollars[i]`. */
const candidate = (c: TuneConfig, dollars: number[], extra: Partial<Bill> = {}): Candidate => ({
  config: c,
  bills: dollars.map((d) => bill(d, extra)),
});

const options = (n: number, classes?: ConversationClass[]) => ({
  minRetention: 0.2,
  grid: parseGrid(["trigger_ratio=0.5,0.6,0.7 keep_first=0,1 keep_last=1,2"]),
  defaults: Array.from({ length: n }, () => bill(10)),
  classes: classes ?? Array.from({ length: n }, () => "tool-heavy" as const),
});

describe("the recommendation", () => {
  it("is the fewest dollars among retention ≥ 0.2 and keep_last ≥ 1 with the fewest overflowing calls", () => {
    const candidates = [
      candidate(config(0.5, 0), [1, 1, 1, 1, 1]), // compacts the turn just finished
      candidate(config(0.5, 1), [2, 2, 2, 2, 2], { retention_sum: 1 }), // retention 0.1
      candidate(config(0.6, 1), [3, 3, 3, 3, 3], { overflow_calls: 1 }),
      candidate(config(0.6, 2), [8, 8, 8, 8, 8]),
      candidate(config(0.7, 2), [9, 9, 9, 9, 9]),
    ];
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toEqual(config(0.6, 2));
    expect(summary.reason).toBe(
      "the fewest dollars ($40.00) among 2 configuration(s) with retention ≥ 0.2, keep_last ≥ 1 and, of those, the fewest overflowing calls (0)",
    );
    // 0.6 is inside the swept ratios; keep_last 2 is the highest swept.
    expect(summary.warnings.map((w) => w.detail)).toEqual([
      "keep_last = 2 is the highest value swept: widen keep_last higher",
    ]);
    // Every conversation costs 8 against the default's 10: a 20% saving in every resample.
    expect(summary.saving_vs_default).toEqual({ median: 0.2, p05: 0.2, p95: 0.2, win_share: 1 });
  });

  it("names a best value on the grid's edge and the way to widen, but not at a bound", () => {
    const candidates = [
      candidate(config(0.5, 2, 0), [1, 1, 1, 1, 1]),
      candidate(config(0.6, 1, 1), [5, 5, 5, 5, 5]),
    ];
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toEqual(config(0.5, 2, 0));
    expect(summary.warnings).toEqual([
      {
        code: "grid_edge",
        detail: "trigger_ratio = 0.5 is the lowest value swept: widen trigger_ratio lower",
      },
      {
        code: "grid_edge",
        detail: "keep_last = 2 is the highest value swept: widen keep_last higher",
      },
    ]);
  });

  it.each([
    ["a key swept at one value", "trigger_ratio=0.6 keep_first=0,1 keep_last=1,2", config(0.6)],
    [
      "the highest value at its bound",
      "trigger_ratio=0.5,1 keep_first=0,1 keep_last=1,2",
      config(1),
    ],
    [
      "the lowest value at its bound",
      "trigger_ratio=0.5,0.6,0.7 keep_first=0,1 keep_last=1,2",
      config(0.6),
    ],
  ])("names no edge for %s", (_, spec, best) => {
    const candidates = [candidate(best, [1, 1, 1, 1, 1])];
    const summary = tuneVerdict(candidates, { ...options(5), grid: parseGrid([spec]) });
    expect(summary.recommended).toEqual(best);
    expect(summary.warnings).toEqual([]);
  });

  it("reads a key's edge from its numbers alone", () => {
    const best: TuneConfig = { ...config(0.6), reserve_tokens: 100 };
    const grid: Grid = { ...options(5).grid, reserve_tokens: [200, "many", 100] };
    const summary = tuneVerdict([candidate(best, [1, 1, 1, 1, 1])], { ...options(5), grid });
    expect(summary.warnings.map((w) => w.detail)).toEqual([
      "reserve_tokens = 100 is the lowest value swept: widen reserve_tokens lower",
    ]);
  });

  it("holds the overflow bar among configurations that keep enough history", () => {
    // The only one without overflow keeps 10% of the history: the bar is one call.
    const candidates = [
      candidate(config(0.5), [1, 1, 1, 1, 1], { retention_sum: 1 }),
      candidate(config(0.6), [3, 3, 3, 3, 3], { overflow_calls: 1 }),
      candidate(config(0.7), [4, 4, 4, 4, 4], { overflow_calls: 2 }),
    ];
    expect(tuneVerdict(candidates, options(5)).recommended).toEqual(config(0.6));
    const none = tuneVerdict(candidates, { ...options(5), minRetention: 0.9 });
    expect([none.recommended, none.reason]).toEqual([
      null,
      "no configuration keeps retention ≥ 0.9 without compacting the turn just finished",
    ]);
  });

  it("gives no answer when the runner-up ties within the noise", () => {
    // Cheaper in three conversations, dearer in two: resamples go both ways.
    const candidates = [
      candidate(config(0.6), [1, 1, 1, 3, 3]),
      candidate(config(0.7), [2, 2, 2, 2, 2]),
    ];
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toBeNull();
    expect(summary.saving_vs_default).toBeNull();
    expect(summary.warnings.map((w) => w.code)).toEqual(["tie"]);
    expect(summary.reason).toMatch(
      /^trigger_ratio 0.6, .* \(\$9.00\) and trigger_ratio 0.7, .* \(\$10.00\) tie/,
    );
  });

  it("gives no answer when fewer than 5 conversations fire", () => {
    const fires = [1, 1, 1, 1, 0];
    const candidates = [0.6, 0.7].map((r, k) => ({
      config: config(r),
      bills: fires.map((firings) => bill(k + 1, { firings })),
    }));
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toBeNull();
    expect(summary.warnings).toEqual([
      {
        code: "too_few_firing",
        detail:
          "4 of 5 conversation(s) fire under any configuration; at least 5 are needed before the configurations differ for a reason",
      },
    ]);
  });

  it("counts a conversation as firing when any configuration fires in it", () => {
    const candidates = [
      candidate(config(0.6), [1, 1, 1, 1, 1], { firings: 2 }),
      candidate(config(0.7), [2, 2, 2, 2, 2], { firings: 0 }),
    ];
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toEqual(config(0.6));
    expect(summary.warnings.map((w) => w.code)).not.toContain("too_few_firing");
  });

  it("admits a retention exactly at the minimum", () => {
    // 2 of every 10 calls' history kept: retention 0.2, the minimum itself.
    const candidates = [candidate(config(0.6), [1, 1, 1, 1, 1], { retention_sum: 2 })];
    expect(tuneVerdict(candidates, options(5)).recommended).toEqual(config(0.6));
  });

  it("calls a runner-up that costs the same in every conversation a tie", () => {
    const candidates = [
      candidate(config(0.6), [2, 2, 2, 2, 2]),
      candidate(config(0.7), [2, 2, 2, 2, 2]),
    ];
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toBeNull();
    expect(summary.warnings.map((w) => w.code)).toEqual(["tie"]);
  });

  it("calls a runner-up that costs no more in about 9% of resamples a tie", () => {
    // The runner-up is dearer by 2 in three conversations, cheaper by 1 in two: a resample
    // of five draws costs it no more when it holds at most one of the three, 0.4^5 + 5·0.6·0.4^4
    // = 8.7% of resamples, over the 5% bar.
    const candidates = [
      candidate(config(0.6), [1, 1, 1, 3, 3]),
      candidate(config(0.7), [3, 3, 3, 2, 2]),
    ];
    const summary = tuneVerdict(candidates, options(5));
    expect(summary.recommended).toBeNull();
    expect(summary.warnings.map((w) => w.code)).toEqual(["tie"]);
  });

  it("lets the seed decide a runner-up on the edge of the 5% bar", () => {
    // Dearer by 1 in four conversations, cheaper by 1 in the fifth: it costs no more in a
    // resample that draws the fifth three times or more, 5.8% of resamples, so about 58 of
    // 1000 against the bar of 50, above it or below it by the seed's draws.
    const candidates = [
      candidate(config(0.6), [2, 2, 2, 2, 2]),
      candidate(config(0.7), [3, 3, 3, 3, 1]),
    ];
    const outcomes = new Set(
      Array.from({ length: 40 }, (_, k) =>
        tuneVerdict(candidates, { ...options(5), seed: k + 1 }).recommended === null
          ? "tie"
          : "recommended",
      ),
    );
    expect([...outcomes].sort()).toEqual(["recommended", "tie"]);
  });

  it("is deterministic for a seed: the same resamples every run", () => {
    const candidates = [
      candidate(config(0.6), [1, 2, 3, 4, 9]),
      candidate(config(0.7), [5, 5, 5, 5, 50]),
    ];
    const first = tuneVerdict(candidates, { ...options(5), defaults: candidates[1]?.bills ?? [] });
    const again = tuneVerdict(candidates, { ...options(5), defaults: candidates[1]?.bills ?? [] });
    expect(again).toEqual(first);
    expect(first.saving_vs_default?.win_share).toBe(1);
    const { p05 = 0, median = 0, p95 = 0 } = first.saving_vs_default ?? {};
    expect(p05 <= median && median <= p95).toBe(true);
  });

  it("answers each class on its own", () => {
    const classes: ConversationClass[] = [
      ...Array(5).fill("tool-heavy"),
      ...Array(5).fill("chat-heavy"),
    ];
    const candidates = [
      candidate(config(0.6), [1, 1, 1, 1, 1, 9, 9, 9, 9, 9]),
      candidate(config(0.7), [5, 5, 5, 5, 5, 2, 2, 2, 2, 2]),
    ];
    const summary = tuneVerdict(candidates, { ...options(10, classes), grid: DEFAULT_GRID });
    expect(summary.classes).toEqual([
      { class: "tool-heavy", conversations: 5, recommended: config(0.6) },
      { class: "chat-heavy", conversations: 5, recommended: config(0.7) },
    ]);
  });

  it("lists only the classes that have conversations", () => {
    const candidates = [candidate(config(0.6), [1, 1, 1, 1, 1])];
    expect(tuneVerdict(candidates, options(5, Array(5).fill("chat-heavy"))).classes).toEqual([
      { class: "chat-heavy", conversations: 5, recommended: config(0.6) },
    ]);
  });
});

describe("the saving against the default", () => {
  /** One candidate costing `dollars`, against a default of 10 per conversation. */
  const saving = (dollars: number[], seed?: number, defaults = 10) =>
    tuneVerdict([candidate(config(0.6), dollars)], {
      ...options(dollars.length),
      defaults: dollars.map(() => bill(defaults)),
      ...(seed === undefined ? {} : { seed }),
    }).saving_vs_default;

  it("is read off resamples of the conversations", () => {
    // One conversation in five costs 5 instead of 10, so a resample saves 5/50 = 0.1 for each
    // draw of it. None in 0.8^5 = 33% of resamples: p05 is 0. Once in another 41%: the median
    // is 0.1. Twice or more in 26%: p95 is more. About 1 - 0.8^5 = 67% of resamples win.
    const s = saving([5, 10, 10, 10, 10]);
    expect(s?.p05).toBe(0);
    expect(s?.median).toBe(0.1);
    expect(s?.p95).toBeGreaterThan(0.1);
    expect(s?.win_share).toBeCloseTo(0.672, 1);
  });

  it("is 0 with no resample won when the recommendation costs what the default does", () => {
    expect(saving([10, 10, 10, 10, 10])).toEqual({ median: 0, p05: 0, p95: 0, win_share: 0 });
  });

  it("is 0 against a default that costs nothing", () => {
    expect(saving([1, 1, 1, 1, 1], undefined, 0)).toEqual({
      median: 0,
      p05: 0,
      p95: 0,
      win_share: 0,
    });
  });

  // Cheaper by 1 in one conversation and dearer by 1 in four (5.8% of resamples win), and the
  // reverse (94.2% win): the count of wins lands on either side of 50 and of 950 by the seed.
  it.each([
    ["rarely", [9, 11, 11, 11, 11]],
    ["mostly", [11, 9, 9, 9, 9]],
  ])("has nearest-rank quantiles when the recommendation %s wins", (_, dollars) => {
    for (let seed = 1; seed <= 40; seed++) {
      const s = saving(dollars, seed);
      expect(s).not.toBeNull();
      const wins = (s?.win_share ?? Number.NaN) * 1000;
      // A whole count of the 1000 resamples.
      expect(wins).toBeCloseTo(Math.round(wins), 6);
      // The k-th smallest of the 1000 savings (50th, 500th, 950th) is positive exactly when
      // fewer than k resamples do not win.
      expect([s?.p05 ?? 0, s?.median ?? 0, s?.p95 ?? 0].map((q) => q > 0)).toEqual([
        1000 - wins < 50,
        1000 - wins < 500,
        1000 - wins < 950,
      ]);
    }
  });

  it("draws its resamples from the seed", () => {
    const shares = new Set(
      [1, 2, 3, 4, 5].map((seed) => saving([5, 10, 10, 10, 10], seed)?.win_share),
    );
    expect(shares.size).toBeGreaterThan(1);
  });
});

describe("classes", () => {
  it("calls a conversation tool-heavy when tool results hold at least half its bytes", () => {
    const turn = (result: number) => [
      request("q".repeat(40)),
      toolCall("c", "ab", {}),
      toolResult("c", "x".repeat(result)),
      message("m".repeat(56)),
    ];
    // 40 + 4 + 56 = 100 bytes besides the result.
    expect(classify(turn(100), entryChars)).toBe("tool-heavy");
    expect(classify(turn(99), entryChars)).toBe("chat-heavy");
  });

  it("calls an empty conversation chat-heavy", () => {
    expect(classify([], entryChars)).toBe("chat-heavy");
  });
});

describe("describeConfig", () => {
  it("names every extra key the configuration sets, words as well as numbers", () => {
    const config: TuneConfig = {
      trigger_ratio: 0.5,
      keep_first: 0,
      keep_last: 1,
      reasoning: "strip",
      tool_calls: "omit",
      summary: null,
      when: "idle",
      idle_seconds: 300,
    };
    expect(describeConfig(config)).toBe(
      "trigger_ratio 0.5, keep_first 0, keep_last 1, reasoning strip, tool_calls omit, when idle, idle_seconds 300",
    );
  });

  it.each([
    [
      "a summary rule by its name",
      { ...config(0.6), reasoning: null, tool_calls: null, summary: {} },
      "trigger_ratio 0.6, keep_first 0, keep_last 1, summary",
    ],
    [
      "a policy left out as keep",
      { ...config(0.6), reasoning: null, tool_calls: null },
      "trigger_ratio 0.6, keep_first 0, keep_last 1, reasoning keep, tool_calls keep",
    ],
  ])("names %s", (_, c: TuneConfig, words) => {
    expect(describeConfig(c)).toBe(words);
  });
});
