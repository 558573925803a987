import { describe, expect, it } from "vitest";
import { message, request, toolCall, toolResult } from "../test/helpers/builders.ts";
import { entryChars } from "./estimate.ts";
import { DEFAULT_GRID, parseGrid, type TuneConfig } from "./tune-grid.ts";
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
});
