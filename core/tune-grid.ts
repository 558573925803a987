/**
 * The grid `autocompact tune` replays (docs/architecture.md §12): the D50 keys it
 * varies, the default grid, `--grid` parsing, its expansion into
 * configurations, and the config layer that applies one.
 */

import type { Calibration } from "./calibration.ts";
import {
  type AutoConfigLayer,
  DEFAULT_AUTO_CONFIG,
  FiringWhen,
  IDLE_SECONDS_RANGE,
  type SummaryRuleConfig,
  ToolCallMode,
} from "./config.ts";
import { InvalidInputError } from "./errors.ts";
import { CHARS_PER_TOKEN } from "./estimate.ts";

/** How `--grid` reads a key's values: whole numbers from `least` to `most`, ratios in (0, 1], or words. */
type KeyValues =
  | { readonly kind: "whole"; readonly least: number; readonly most: number }
  | { readonly kind: "ratio" }
  | { readonly kind: "choice"; readonly words: readonly string[] };

/** Where a configuration applies an extra key: the auto config layer, or the replay's calibration. */
type Applies = "auto" | "calibration";

const whole = (least = 0, most = Number.POSITIVE_INFINITY): KeyValues => ({
  kind: "whole",
  least,
  most,
});

/**
 * The grid keys beyond D50's rule, one line each: the guards of issue 26,
 * when a band fires (issue 29: after the turn or once the conversation rests) and
 * the calibration flags (`--tokens-per-char`, `--overhead`). A grid that does
 * not name one leaves it out of its configurations, so `--config`'s value
 * (or the flag's, or D50's default) applies. A new `auto` key is one line
 * here, named as the auto config layer names it.
 */
export const EXTRA_KEYS = [
  { name: "reserve_tokens", values: whole(), applies: "auto" },
  { name: "min_gain_tokens", values: whole(), applies: "auto" },
  { name: "min_band_turns", values: whole(1), applies: "auto" },
  { name: "when", values: { kind: "choice", words: FiringWhen.options }, applies: "auto" },
  {
    name: "idle_seconds",
    values: whole(IDLE_SECONDS_RANGE.min, IDLE_SECONDS_RANGE.max),
    applies: "auto",
  },
  { name: "hard_ratio", values: { kind: "ratio" }, applies: "auto" },
  { name: "tokens_per_char", values: { kind: "ratio" }, applies: "calibration" },
  { name: "overhead_tokens", values: whole(), applies: "calibration" },
] as const satisfies readonly { name: string; values: KeyValues; applies: Applies }[];

/** A key of {@link EXTRA_KEYS}. */
export type ExtraKey = (typeof EXTRA_KEYS)[number]["name"];

/** One configuration of the grid: the D50 keys `tune` varies, and the extra keys it was asked to. */
export interface TuneConfig extends Partial<Record<ExtraKey, number | string>> {
  readonly trigger_ratio: number;
  readonly keep_first: number;
  readonly keep_last: number;
  readonly reasoning: "strip" | null;
  readonly tool_calls: ToolCallMode | null;
  /** The summary block of a summary rule, `null` for a mechanical rule. */
  readonly summary: SummaryRuleConfig | null;
}

/** The values each key of {@link TuneConfig} takes in a grid (`summary`: off and/or on; an extra key, only when named). */
export interface Grid extends Partial<Record<ExtraKey, readonly (number | string)[]>> {
  readonly trigger_ratio: readonly number[];
  readonly keep_first: readonly number[];
  readonly keep_last: readonly number[];
  readonly reasoning: readonly ("strip" | null)[];
  readonly tool_calls: readonly (ToolCallMode | null)[];
  readonly summary: readonly boolean[];
}

/**
 * The numeric keys a grid sweeps and the bounds a sweep cannot pass (a best
 * value on a bound is not on the grid's edge: there is nowhere to widen).
 * `keep_last` starts at 1: 0 compacts the turn just finished.
 */
export const NUMERIC_KEYS: readonly {
  name: keyof Grid & keyof TuneConfig;
  least: number;
  most: number;
}[] = [
  { name: "trigger_ratio", least: 0, most: 1 },
  { name: "keep_first", least: 0, most: Number.POSITIVE_INFINITY },
  { name: "keep_last", least: 1, most: Number.POSITIVE_INFINITY },
  ...EXTRA_KEYS.flatMap((key) =>
    key.values.kind === "choice"
      ? []
      : [
          {
            name: key.name,
            least: key.values.kind === "whole" ? key.values.least : 0,
            most: key.values.kind === "whole" ? key.values.most : 1,
          },
        ],
  ),
];

/** The default grid of issue 17: 9 ratios x 5 keep_last x 3 keep_first x strip/omit = 270. */
export const DEFAULT_GRID: Grid = Object.freeze<Grid>({
  trigger_ratio: [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9],
  keep_first: [0, 1, 2],
  keep_last: [1, 2, 3, 4, 5],
  reasoning: ["strip"],
  tool_calls: ["strip", "omit"],
  summary: [false],
});

const GRID_KEYS = [
  ...Object.keys(DEFAULT_GRID),
  ...EXTRA_KEYS.map((key) => key.name),
] as (keyof Grid)[];

/** A number range `a:b:step`, inclusive, rounded to 6 decimals so 0.05 steps land on 0.9. */
function numberRange(key: string, text: string): number[] {
  const parts = text.split(":").map(Number);
  const [from, to, step] = parts as [number, number, number];
  if (parts.length !== 3 || parts.some((n) => !Number.isFinite(n)) || step <= 0 || to < from) {
    throw new InvalidInputError(`--grid ${key}=${text}: a range is FROM:TO:STEP with STEP > 0`);
  }
  const values: number[] = [];
  for (let i = 0; from + i * step <= to + 1e-9; i++) {
    values.push(Math.round((from + i * step) * 1e6) / 1e6);
  }
  return values;
}

function numbers(
  key: string,
  text: string,
  integer: boolean,
  least = 0,
  most = Number.POSITIVE_INFINITY,
): number[] {
  let values: number[];
  const span = /^(\d+)\.\.(\d+)$/.exec(text);
  if (span) {
    values = [];
    for (let n = Number(span[1]); n <= Number(span[2]); n++) values.push(n);
  } else if (text.includes(":")) values = numberRange(key, text);
  // An empty part is no number (Number("") is 0); parseGrid split on blanks, so a part holds none.
  else values = text.split(",").map((part) => (part === "" ? Number.NaN : Number(part)));
  for (const value of values) {
    const ok = integer
      ? Number.isInteger(value) && value >= least && value <= most
      : value > 0 && value <= 1; // NaN and Infinity fail it
    if (!ok) {
      const what = key.endsWith("_tokens")
        ? "tokens"
        : key.endsWith("_seconds")
          ? "seconds"
          : "turns";
      const span = most === Number.POSITIVE_INFINITY ? `${least} or more` : `${least} to ${most}`;
      throw new InvalidInputError(
        `--grid ${key}=${text}: ${integer ? `${what} are whole numbers, ${span}` : "a ratio is in (0, 1]"}`,
      );
    }
  }
  if (values.length === 0) throw new InvalidInputError(`--grid ${key}=${text}: no values`);
  return values;
}

function choices<T>(key: string, text: string, allowed: Record<string, T>): T[] {
  return text.split(",").map((word) => {
    if (!Object.hasOwn(allowed, word)) {
      throw new InvalidInputError(
        `--grid ${key}=${text}: each value is one of ${Object.keys(allowed).join(", ")}`,
      );
    }
    return allowed[word] as T;
  });
}

const TOOL_CALL_CHOICES: Record<string, ToolCallMode | null> = {
  ...Object.fromEntries(ToolCallMode.options.map((mode) => [mode, mode])),
  keep: null,
};

/**
 * Parses `--grid` arguments over `base` (the default grid): each argument
 * holds `KEY=VALUES` items separated by spaces or `;`; a key given replaces
 * its default values. Numbers: `0.6,0.7`, `FROM:TO:STEP`, or for turns
 * `1..5`; `reasoning=strip,keep`; `tool_calls=strip,strip-requests,
 * strip-responses,omit,keep`; `summary=off,on`; the guards `reserve_tokens`,
 * `min_gain_tokens` (whole tokens) and `min_band_turns` (1 or more).
 */
export function parseGrid(specs: readonly string[], base: Grid = DEFAULT_GRID): Grid {
  const grid: Record<keyof Grid, unknown[]> = { ...base } as Record<keyof Grid, unknown[]>;
  // A run of separators splits into empty items, which the filter drops.
  for (const item of specs.flatMap((spec) => spec.split(/[\s;]/)).filter(Boolean)) {
    const [key, text] = item.split("=", 2) as [string, string | undefined];
    if (!(GRID_KEYS as string[]).includes(key) || text === undefined || text === "") {
      throw new InvalidInputError(
        `--grid "${item}": expected KEY=VALUES with KEY one of ${GRID_KEYS.join(", ")}`,
      );
    }
    switch (key as keyof Grid) {
      case "trigger_ratio":
        grid.trigger_ratio = numbers(key, text, false);
        break;
      case "keep_first":
      case "keep_last":
        grid[key as "keep_first"] = numbers(key, text, true);
        break;
      case "reasoning":
        grid.reasoning = choices(key, text, { strip: "strip", keep: null });
        break;
      case "tool_calls":
        grid.tool_calls = choices(key, text, TOOL_CALL_CHOICES);
        break;
      case "summary":
        grid.summary = choices(key, text, { off: false, on: true });
        break;
      default: {
        const extra = EXTRA_KEYS.find((k) => k.name === key) as (typeof EXTRA_KEYS)[number];
        const spec: KeyValues = extra.values;
        grid[extra.name] =
          spec.kind === "choice"
            ? choices(key, text, Object.fromEntries(spec.words.map((word) => [word, word])))
            : spec.kind === "whole"
              ? numbers(key, text, true, spec.least, spec.most)
              : numbers(key, text, false);
      }
    }
  }
  return grid as unknown as Grid;
}

/**
 * Every configuration of a grid, in a fixed order. A summary rule replaces
 * whole turns, so its reasoning and tool policies are not varied (`null`);
 * a mechanical rule with no policy at all is not a valid configuration and
 * is left out. `summaryRule` is the summary block summary configurations use.
 */
export function expandGrid(grid: Grid, summaryRule: SummaryRuleConfig = {}): TuneConfig[] {
  const configs: TuneConfig[] = [];
  for (const summary of new Set(grid.summary)) {
    for (const trigger_ratio of new Set(grid.trigger_ratio)) {
      for (const keep_first of new Set(grid.keep_first)) {
        for (const keep_last of new Set(grid.keep_last)) {
          for (const guards of extraCombinations(grid)) {
            // A hard ratio at or below the trigger could never defer (resolveAutoConfig refuses it).
            // An unset one is NaN here, and NaN is never at or below anything.
            if (Number(guards.hard_ratio) <= trigger_ratio) continue;
            const base = { trigger_ratio, keep_first, keep_last, ...guards };
            if (summary) {
              configs.push({ ...base, reasoning: null, tool_calls: null, summary: summaryRule });
              continue;
            }
            for (const reasoning of new Set(grid.reasoning)) {
              for (const tool_calls of new Set(grid.tool_calls)) {
                if (reasoning === null && tool_calls === null) continue;
                configs.push({ ...base, reasoning, tool_calls, summary: null });
              }
            }
          }
        }
      }
    }
  }
  if (configs.length === 0) {
    throw new InvalidInputError("--grid leaves no configuration (every rule needs a policy)");
  }
  return configs;
}

/** The keys that only matter while a firing waits for a rest: `when = "turn"` never waits. */
const IDLE_ONLY_KEYS: readonly ExtraKey[] = ["idle_seconds", "hard_ratio"];

/**
 * Every combination of the extra keys a grid names (one empty one when it
 * names none). A combination with `when = "turn"` drops the idle-only keys,
 * so the grid holds that configuration once, not once per rest it ignores.
 */
function extraCombinations(grid: Grid): Partial<Record<ExtraKey, number | string>>[] {
  let combinations: Partial<Record<ExtraKey, number | string>>[] = [{}];
  for (const { name } of EXTRA_KEYS) {
    const values = grid[name];
    if (values === undefined) continue;
    combinations = combinations.flatMap((combination) =>
      combination.when === "turn" && IDLE_ONLY_KEYS.includes(name)
        ? [combination]
        : [...new Set(values)].map((value) => ({ ...combination, [name]: value })),
    );
  }
  return combinations;
}

/** The extra keys a configuration sets (only those its grid named), all or those applied in one place. */
export function configExtras(
  config: TuneConfig,
  applies?: Applies,
): Partial<Record<ExtraKey, number | string>> {
  return Object.fromEntries(
    EXTRA_KEYS.flatMap((key) =>
      config[key.name] === undefined || (applies && key.applies !== applies)
        ? []
        : [[key.name, config[key.name]]],
    ),
  );
}

/** The calibration a configuration replays with: its calibration keys over `base` (`--tokens-per-char`, `--overhead`). */
export function configCalibration(
  config: TuneConfig,
  base: Calibration | undefined,
): Calibration | undefined {
  const { tokens_per_char, overhead_tokens } = config;
  if (tokens_per_char === undefined && overhead_tokens === undefined) return base;
  // A key the configuration leaves comes from a fixed base, else from D50's chars/4 with no overhead.
  const rest =
    base?.kind === "fixed" ? base : { tokens_per_char: 1 / CHARS_PER_TOKEN, overhead_tokens: 0 };
  return {
    kind: "fixed",
    tokens_per_char: Number(tokens_per_char ?? rest.tokens_per_char),
    overhead_tokens: Number(overhead_tokens ?? rest.overhead_tokens),
  };
}

/** The auto config layer that applies a configuration (enabled, with every key it varies). */
export function configLayer(config: TuneConfig): AutoConfigLayer {
  return {
    enabled: true,
    trigger_ratio: config.trigger_ratio,
    ...(configExtras(config, "auto") as AutoConfigLayer),
    rule: {
      keep_first: config.keep_first,
      keep_last: config.keep_last,
      reasoning: config.reasoning,
      tool_calls: config.tool_calls,
      summary: config.summary,
    },
  };
}

/** The service's defaults (D50's rule at its trigger_ratio) as a configuration of the grid. */
export const DEFAULT_TUNE_CONFIG: TuneConfig = Object.freeze({
  trigger_ratio: DEFAULT_AUTO_CONFIG.trigger_ratio,
  keep_first: DEFAULT_AUTO_CONFIG.rule.keep_first,
  keep_last: DEFAULT_AUTO_CONFIG.rule.keep_last,
  reasoning: DEFAULT_AUTO_CONFIG.rule.reasoning,
  tool_calls: DEFAULT_AUTO_CONFIG.rule.tool_calls,
  summary: null,
});

/** Whether a configuration is the service's defaults ({@link DEFAULT_TUNE_CONFIG}, and D50's guards if it sets any; no calibration of its own). */
export function isDefaultConfig(config: TuneConfig): boolean {
  const defaults = DEFAULT_AUTO_CONFIG as unknown as Record<string, unknown>;
  return (
    (Object.keys(DEFAULT_TUNE_CONFIG) as (keyof TuneConfig)[]).every(
      (key) => config[key] === DEFAULT_TUNE_CONFIG[key],
    ) &&
    // A calibration key is no key of the auto config (its default there is undefined),
    // so a configuration that sets one is never the defaults.
    EXTRA_KEYS.every(
      (key) => config[key.name] === undefined || config[key.name] === defaults[key.name],
    )
  );
}
