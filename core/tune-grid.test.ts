/**
 * The grid `tune` replays, read directly: `--grid` parsing (its ranges,
 * bounds and refusals), the expansion's policy rules, and what one
 * configuration applies (its auto layer, its calibration, whether it is the
 * service's defaults). Expected values are worked by hand from D50's defaults
 * (trigger 0.75, keep_first 1, keep_last 3, strip/strip; guards 0, 0, 1,
 * "turn", 300 s, 0.95) and the chars/4 estimate.
 */
import { describe, expect, it } from "vitest";
import type { Calibration } from "./calibration.ts";
import { InvalidInputError } from "./errors.ts";
import {
  configCalibration,
  configExtras,
  configLayer,
  DEFAULT_TUNE_CONFIG,
  expandGrid,
  isDefaultConfig,
  parseGrid,
  type TuneConfig,
} from "./tune-grid.ts";

/** D50's rule at its trigger, written out (not read from the module). */
const D50: TuneConfig = {
  trigger_ratio: 0.75,
  keep_first: 1,
  keep_last: 3,
  reasoning: "strip",
  tool_calls: "strip",
  summary: null,
};

describe("parseGrid: numbers", () => {
  it.each([
    ["keep_first=10..12", "keep_first", [10, 11, 12]],
    ["keep_last=7..7", "keep_last", [7]],
    ["trigger_ratio=0.6:0.6:0.1", "trigger_ratio", [0.6]],
    ["trigger_ratio=0.5:0.9:0.2", "trigger_ratio", [0.5, 0.7, 0.9]],
    ["keep_first=2:5:2", "keep_first", [2, 4]],
    ["trigger_ratio=1", "trigger_ratio", [1]],
    ["idle_seconds=30,3600", "idle_seconds", [30, 3600]],
    ["tokens_per_char=0.3,1", "tokens_per_char", [0.3, 1]],
    ["overhead_tokens=0,250", "overhead_tokens", [0, 250]],
  ] as const)("reads %s", (spec, key, values) => {
    expect(parseGrid([spec])[key]).toEqual(values);
  });

  it("counts a step that lands exactly on the tolerance past TO as reaching TO", () => {
    // 0.5 + 1 * 1e-9 is the very sum TO + 1e-9; both round to 0.5.
    expect(parseGrid(["trigger_ratio=0.5:0.5:0.000000001"]).trigger_ratio).toEqual([0.5, 0.5]);
  });

  it.each([
    ["trigger_ratio=0.5:0.9", /a range is FROM:TO:STEP with STEP > 0/],
    ["trigger_ratio=0.5:0.9:0.1:1", /a range is FROM:TO:STEP with STEP > 0/],
    ["trigger_ratio=0.5:x:0.1", /a range is FROM:TO:STEP with STEP > 0/],
    ["trigger_ratio=x:0.9:0.1", /a range is FROM:TO:STEP with STEP > 0/],
    ["trigger_ratio=0.5:0.9:0", /a range is FROM:TO:STEP with STEP > 0/],
    ["trigger_ratio=0.5:0.9:-0.1", /a range is FROM:TO:STEP with STEP > 0/],
    ["keep_first=3:1:1", /a range is FROM:TO:STEP with STEP > 0/],
    ["keep_last=3..1", /keep_last=3\.\.1: no values/],
    ["keep_last=-1..3", /turns are whole numbers, 0 or more/],
    ["keep_last=a1..3", /turns are whole numbers, 0 or more/],
    ["keep_last=1..3x", /turns are whole numbers, 0 or more/],
    ["keep_first=0,,1", /turns are whole numbers, 0 or more/],
    ["keep_first=1,", /turns are whole numbers, 0 or more/],
    ["trigger_ratio=0", /a ratio is in \(0, 1\]/],
    ["trigger_ratio=-0.5", /a ratio is in \(0, 1\]/],
    ["trigger_ratio=1.01", /a ratio is in \(0, 1\]/],
    ["trigger_ratio=0.5,", /a ratio is in \(0, 1\]/],
    ["trigger_ratio=Infinity", /a ratio is in \(0, 1\]/],
    ["tokens_per_char=0", /a ratio is in \(0, 1\]/],
    ["idle_seconds=3601", /seconds are whole numbers, 30 to 3600/],
    ["overhead_tokens=-5", /tokens are whole numbers, 0 or more/],
  ])("refuses %s", (spec, message) => {
    expect(() => parseGrid([spec])).toThrow(InvalidInputError);
    expect(() => parseGrid([spec])).toThrow(message);
  });
});

describe("parseGrid: items", () => {
  it("reads items between runs of blanks and semicolons, at either end too", () => {
    const grid = parseGrid([" keep_first=0;;keep_last=2 \t ", ";summary=on;"]);
    expect(grid.keep_first).toEqual([0]);
    expect(grid.keep_last).toEqual([2]);
    expect(grid.summary).toEqual([true]);
  });

  it.each([["keep_first"], ["keep_first="], ["=1"], ["ratio=0.5"]])(
    "refuses the item %j, naming every key it knows",
    (item) => {
      expect(() => parseGrid([item])).toThrow(InvalidInputError);
      expect(() => parseGrid([item])).toThrow(
        `--grid "${item}": expected KEY=VALUES with KEY one of trigger_ratio, keep_first, keep_last, reasoning, tool_calls, summary, reserve_tokens, min_gain_tokens, min_band_turns, when, idle_seconds, hard_ratio, tokens_per_char, overhead_tokens`,
      );
    },
  );
});

describe("expandGrid", () => {
  it("keeps a rule that strips reasoning and keeps every tool call", () => {
    const grid = parseGrid(["trigger_ratio=0.7 keep_first=1 keep_last=2 tool_calls=keep,omit"]);
    expect(expandGrid(grid)).toEqual([
      { ...D50, trigger_ratio: 0.7, keep_last: 2, tool_calls: null },
      { ...D50, trigger_ratio: 0.7, keep_last: 2, tool_calls: "omit" },
    ]);
  });

  it("says why a grid of rules without any policy leaves nothing", () => {
    expect(() => expandGrid(parseGrid(["reasoning=keep tool_calls=keep"]))).toThrow(
      "--grid leaves no configuration (every rule needs a policy)",
    );
  });
});

describe("configExtras and configLayer", () => {
  const tuned: TuneConfig = {
    ...D50,
    reserve_tokens: 8_000,
    when: "idle",
    tokens_per_char: 0.3,
    overhead_tokens: 40,
  };

  it("gives the extra keys a configuration sets, all or those of one place", () => {
    expect(configExtras(tuned)).toEqual({
      reserve_tokens: 8_000,
      when: "idle",
      tokens_per_char: 0.3,
      overhead_tokens: 40,
    });
    expect(configExtras(tuned, "auto")).toEqual({ reserve_tokens: 8_000, when: "idle" });
    expect(configExtras(tuned, "calibration")).toEqual({
      tokens_per_char: 0.3,
      overhead_tokens: 40,
    });
    expect(configExtras(D50)).toEqual({});
  });

  it("puts the auto keys in the layer, and no calibration key", () => {
    expect(configLayer(tuned)).toEqual({
      enabled: true,
      trigger_ratio: 0.75,
      reserve_tokens: 8_000,
      when: "idle",
      rule: { keep_first: 1, keep_last: 3, reasoning: "strip", tool_calls: "strip", summary: null },
    });
  });
});

describe("configCalibration", () => {
  const sample: Calibration = { kind: "sample", sample: undefined };
  const fixed: Calibration = { kind: "fixed", tokens_per_char: 0.3, overhead_tokens: 12 };

  it.each([
    ["no base", undefined],
    ["a sampled base", sample],
    ["a fixed base", fixed],
  ])("keeps %s when the configuration sets no calibration key", (_, base) => {
    expect(configCalibration({ ...D50, reserve_tokens: 500, when: "idle" }, base)).toBe(base);
  });

  it.each([
    // chars/4 is 0.25 token a char; no overhead.
    ["no base", undefined, { tokens_per_char: 0.5 }, 0.5, 0],
    ["no base", undefined, { overhead_tokens: 90 }, 0.25, 90],
    ["a sampled base", sample, { tokens_per_char: 0.5 }, 0.5, 0],
    ["a sampled base", sample, { overhead_tokens: 90 }, 0.25, 90],
    ["a fixed base", fixed, { tokens_per_char: 0.5 }, 0.5, 12],
    ["a fixed base", fixed, { overhead_tokens: 90 }, 0.3, 90],
    ["a fixed base", fixed, { tokens_per_char: 0.5, overhead_tokens: 90 }, 0.5, 90],
  ])(
    "over %s, fixes %j and takes the rest from the base or chars/4",
    (_, base, keys, tokens_per_char, overhead_tokens) => {
      expect(configCalibration({ ...D50, ...keys }, base)).toEqual({
        kind: "fixed",
        tokens_per_char,
        overhead_tokens,
      });
    },
  );
});

describe("isDefaultConfig", () => {
  it("knows D50's rule at its trigger, and the module's own default", () => {
    expect(isDefaultConfig(D50)).toBe(true);
    expect(isDefaultConfig(DEFAULT_TUNE_CONFIG)).toBe(true);
  });

  it.each([
    ["trigger_ratio", 0.7],
    ["keep_first", 0],
    ["keep_last", 2],
    ["reasoning", null],
    ["tool_calls", "omit"],
    ["summary", {}],
  ])("is not the default with %s = %j", (key, value) => {
    expect(isDefaultConfig({ ...D50, [key]: value })).toBe(false);
  });

  it("counts guards set at D50's values as the default", () => {
    expect(
      isDefaultConfig({
        ...D50,
        reserve_tokens: 0,
        min_gain_tokens: 0,
        min_band_turns: 1,
        when: "turn",
        idle_seconds: 300,
        hard_ratio: 0.95,
      }),
    ).toBe(true);
  });

  it.each([
    ["reserve_tokens", 8_000],
    ["min_band_turns", 2],
    ["when", "idle"],
    ["hard_ratio", 0.9],
    // A calibration of its own is never the service's defaults, even at chars/4.
    ["tokens_per_char", 0.25],
    ["overhead_tokens", 0],
  ])("is not the default with the extra key %s = %j", (key, value) => {
    expect(isDefaultConfig({ ...D50, [key]: value })).toBe(false);
  });
});
