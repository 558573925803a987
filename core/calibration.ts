/**
 * The calibrated estimator (docs/architecture.md §5): tokens = a·chars + b,
 * fitted per conversation to what the provider reported for the turns'
 * model calls against our own character count of what each call saw.
 *
 * A point is (the projected view's characters once the turn is stored,
 * the call's `input_tokens + output_tokens`): the turn's last call read the
 * view up to its answer and wrote the answer, so the two count the same
 * text, and `b` absorbs what the platform adds on every call (system prompt,
 * tool definitions). The fit is Theil–Sen over the latest {@link MAX_POINTS}
 * points (the median of pairwise slopes, then the median residual): an
 * outlier moves it little, it is exact (no iteration), and it costs the same
 * at every turn, so an evaluation reads the sample from the head alone.
 * `a` is kept in [0.1, 1] and `b` at 0 or more.
 */
import type { EstimatorSetting } from "./config.ts";
import { CHARS_PER_TOKEN, tokensFromChars } from "./estimate.ts";

/** What the provider reported for a turn's last model call (`calls`: how many calls the turn made). */
export interface TurnUsage {
  /** Every input token of the call, cached ones included. */
  readonly input_tokens: number;
  readonly output_tokens?: number;
  /** The part of `input_tokens` read from the provider's prompt cache. */
  readonly cached_input_tokens?: number;
  readonly calls?: number;
}

/** One calibration point: our characters of what a call saw, and the tokens the provider counted. */
export type CalibrationPoint = readonly [chars: number, tokens: number];

/** What the head keeps to fit the estimator: how many turns carried usage, and the latest points. */
export interface CalibrationSample {
  readonly turns_with_usage: number;
  /** At most {@link MAX_POINTS}, oldest first. */
  readonly points: readonly CalibrationPoint[];
}

/** The points a fit uses: 16 give 120 pairwise slopes, enough for a stable median. */
export const MAX_POINTS = 16;

/** Turns with usage before `auto` switches from chars / 4 to the fit. */
export const AUTO_MIN_TURNS = 3;

/** Turns with usage before `calibrated` fits (a line needs two points); chars / 4 until then. */
export const CALIBRATED_MIN_TURNS = 2;

/** Bounds of the fitted tokens per character. */
export const TOKENS_PER_CHAR_BOUNDS = Object.freeze({ min: 0.1, max: 1 });

/** The tokens a usage report counts for the view: what the call read plus what it wrote. */
export function usageTokens(usage: TurnUsage): number {
  return usage.input_tokens + (usage.output_tokens ?? 0);
}

/** The sample with one more turn's usage, seen against a view of `chars` characters. */
export function addUsage(
  sample: CalibrationSample | undefined,
  chars: number,
  usage: TurnUsage,
): CalibrationSample {
  const points = [...(sample?.points ?? []), [chars, usageTokens(usage)] as const];
  return {
    turns_with_usage: (sample?.turns_with_usage ?? 0) + 1,
    points: points.slice(-MAX_POINTS),
  };
}

/** How the trigger turns characters into tokens, as `GET /v1/conversations/{id}` reports it. */
export interface Estimator {
  /** `chars` is D50's chars / 4 (`overhead_tokens` 0); `calibrated`, the fit or a given calibration. */
  readonly kind: "chars" | "calibrated";
  readonly tokens_per_char: number;
  readonly overhead_tokens: number;
  readonly turns_with_usage: number;
}

/** What an estimator is resolved from: the head's sample, or a calibration given outright (`--tokens-per-char`, `--overhead`). */
export type Calibration =
  | { readonly kind: "sample"; readonly sample: CalibrationSample | undefined }
  | { readonly kind: "fixed"; readonly tokens_per_char: number; readonly overhead_tokens: number };

/** D50's estimator. */
function charsEstimator(turnsWithUsage: number): Estimator {
  return {
    kind: "chars",
    tokens_per_char: 1 / CHARS_PER_TOKEN,
    overhead_tokens: 0,
    turns_with_usage: turnsWithUsage,
  };
}

/** The middle value (the mean of the two middle ones for an even count); `values` non-empty. */
function median(values: number[]): number {
  values.sort((x, y) => x - y);
  const mid = values.length >> 1;
  return values.length % 2 === 1
    ? (values[mid] as number)
    : ((values[mid - 1] as number) + (values[mid] as number)) / 2;
}

/** Theil–Sen over `points` (non-empty), bounded; the slope is chars / 4's without two distinct x. */
export function fitLine(points: readonly CalibrationPoint[]): {
  tokens_per_char: number;
  overhead_tokens: number;
} {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const [x1, y1] = points[i] as CalibrationPoint;
    for (let j = i + 1; j < points.length; j++) {
      const [x2, y2] = points[j] as CalibrationPoint;
      if (x1 !== x2) slopes.push((y2 - y1) / (x2 - x1));
    }
  }
  const { min, max } = TOKENS_PER_CHAR_BOUNDS;
  const a =
    slopes.length === 0 ? 1 / CHARS_PER_TOKEN : Math.min(max, Math.max(min, median(slopes)));
  const b = Math.max(0, median(points.map(([x, y]) => y - a * x)));
  return { tokens_per_char: a, overhead_tokens: b };
}

/**
 * The estimator a setting and a calibration give: `chars` always chars / 4;
 * `calibrated` the fit from {@link CALIBRATED_MIN_TURNS} turns with usage,
 * `auto` from {@link AUTO_MIN_TURNS}, chars / 4 before; a fixed calibration
 * whatever the setting.
 */
export function resolveEstimator(setting: EstimatorSetting, calibration?: Calibration): Estimator {
  if (calibration?.kind === "fixed") {
    return {
      kind: "calibrated",
      tokens_per_char: calibration.tokens_per_char,
      overhead_tokens: calibration.overhead_tokens,
      turns_with_usage: 0,
    };
  }
  const sample = calibration?.sample;
  const needed = setting === "auto" ? AUTO_MIN_TURNS : CALIBRATED_MIN_TURNS;
  if (setting !== "chars" && sample !== undefined && sample.turns_with_usage >= needed) {
    return {
      kind: "calibrated",
      ...fitLine(sample.points),
      turns_with_usage: sample.turns_with_usage,
    };
  }
  return charsEstimator(sample?.turns_with_usage ?? 0);
}

/** The estimator's tokens for a view of `chars` characters (D50's `chars / 4`, exactly, for `chars`). */
export function estimateTokens(estimator: Estimator, chars: number): number {
  // Stryker disable next-line ConditionalExpression,StringLiteral: the chars estimator's line (0.25, 0) gives chars / 4 exactly (a power of two scales exactly); this keeps D50's count exact by construction should CHARS_PER_TOKEN ever not be one
  if (estimator.kind === "chars") return tokensFromChars(chars);
  return estimator.tokens_per_char * chars + estimator.overhead_tokens;
}
