/**
 * The D50 step ("Automatic compaction"): after a turn is stored, decide
 * whether to append an automatic band, summarize when the rule asks, and
 * build the band with its audit. The compactor, `autocompact evaluate` and
 * `autocompact simulate` all run {@link stepAutoCompaction}; they differ only
 * in where the numbers, the events and the summaries come from.
 *
 * Pure: the caller supplies the current estimate and, only when the trigger
 * fires, the compactions and a way to estimate the view with a candidate band
 * (from the full projection or from per-turn sizes), so the no-fire path
 * needs no events at all.
 *
 * Beyond D50 (issue 26, each off by default): the estimator turns the
 * caller's chars / 4 into the conversation's calibrated tokens
 * (core/calibration.ts); `reserve_tokens` is added before the threshold
 * test; a range shorter than `min_band_turns` skips as `short_range` and a
 * band removing less than `min_gain_tokens` as `low_gain`, except when the
 * estimate plus reserve exceeds the window itself: then D50 fires and the
 * band's `trigger` names the guards it overrode (`guard_overridden`).
 *
 * Idle compaction (issue 29, `when: "idle"`): a firing below `hard_ratio`
 * is deferred (`deferred_until_idle`) until the conversation has rested
 * `idle_seconds`, when the prompt cache has gone cold anyway; the caller
 * runs the step again then with `rested_seconds`, and the band's `trigger`
 * says `when: "idle"` and how long the conversation rested.
 */
import {
  type Calibration,
  type Estimator,
  estimateTokens,
  resolveEstimator,
} from "./calibration.ts";
import type { AutoConfig, SummaryRuleConfig } from "./config.ts";
import { CHARS_PER_TOKEN } from "./estimate.ts";
import type { Compaction, CompactionTrigger } from "./events.ts";
import { buildCompaction, nextCompactionTimestamp, rollingRange, type TurnRange } from "./rules.ts";

/** What the trigger needs to know about a stored conversation: a few numbers, no events. */
export interface TriggerState {
  readonly config: AutoConfig;
  readonly turn_count: number;
  /** The turn after the furthest-compacted one, 0 without compactions. */
  readonly after_last_compaction: number;
  /** D50's estimate (chars / 4) of the current projected view: the estimator's input. */
  readonly estimated_tokens: number;
  readonly context_window: number | undefined;
  /** What the estimator is fitted from; without it, chars / 4. */
  readonly calibration?: Calibration;
  /**
   * How long the conversation has rested since its last turn was stored:
   * absent (0) on the evaluation right after the turn, set on the idle
   * re-evaluation (the timer, or a replay's rest before the next turn).
   */
  readonly rested_seconds?: number;
}

/** The reasons a decision can skip for, in the order they are checked. */
export const SKIP_REASONS = [
  "disabled",
  "min_turns",
  "context_window_unknown",
  "under_threshold",
  "empty_range",
  "short_range",
  "low_gain",
  "deferred_until_idle",
] as const;

/** Why a decision did not fire. */
export type SkipReason = (typeof SKIP_REASONS)[number];

/** The guards a band past the window overrides (their skip reasons). */
export type Guard = "short_range" | "low_gain";

/** The numbers every decision reports (the firing log, `autocompact evaluate`). */
interface Measures {
  readonly turn_count: number;
  /** The rolling range, or `null` when it is empty. */
  readonly range: TurnRange | null;
  /** The estimator's tokens of the current view (its fitted overhead included, the reserve not). */
  readonly estimated_tokens: number;
  /** `context_window * trigger_ratio`, `null` while the window is unknown. */
  readonly threshold: number | null;
  readonly context_window: number | null;
}

/** Skip reasons that carry nothing beyond the measures. */
type PlainSkipReason = Exclude<SkipReason, "low_gain" | "deferred_until_idle">;

/** A decision not to fire, and why. */
export type SkipDecision =
  | (Measures & { readonly fire: false; readonly reason: PlainSkipReason })
  | LowGainDecision
  | DeferredDecision;

/** A firing held back until the conversation rests (`when: "idle"`, below `hard_ratio`). */
export interface DeferredDecision extends Measures {
  readonly fire: false;
  readonly reason: "deferred_until_idle";
  readonly range: TurnRange;
  readonly threshold: number;
  readonly context_window: number;
  /** How much longer the conversation must rest before the re-evaluation fires (seconds). */
  readonly due_in_seconds: number;
}

/** A band built and not appended: it would remove fewer than `min_gain_tokens`. */
export interface LowGainDecision extends Measures {
  readonly fire: false;
  readonly reason: "low_gain";
  readonly range: TurnRange;
  readonly threshold: number;
  readonly context_window: number;
  /** What the band would have removed, in the estimator's tokens. */
  readonly gain_tokens: number;
}

/** A decision to fire over the rolling range (the band is built by {@link buildBand}). */
export interface FireDecision extends Measures {
  readonly fire: true;
  readonly reason: "over_threshold";
  readonly range: TurnRange;
  readonly threshold: number;
  readonly context_window: number;
  /** Set when the firing waited for the conversation to rest: how long it rested. */
  readonly idle?: { readonly rested_seconds: number };
}

/** The outcome of {@link decide}. */
export type Decision = SkipDecision | FireDecision;

/** The estimator's tokens for a D50 estimate (chars / 4): exactly that estimate for `chars`. */
function estimatorTokens(estimator: Estimator, d50Tokens: number): number {
  // Exact: multiplying by a power of two only moves the exponent.
  return estimateTokens(estimator, d50Tokens * CHARS_PER_TOKEN);
}

/** The estimator of a state: its config's setting over its calibration. */
export function stateEstimator(state: TriggerState): Estimator {
  return resolveEstimator(state.config.estimator, state.calibration);
}

/** Whether estimate plus reserve exceeds the window itself: then no guard holds a band back. */
export function exceedsWindow(
  config: AutoConfig,
  estimatedTokens: number,
  window: number,
): boolean {
  return estimatedTokens + config.reserve_tokens > window;
}

/** D50's trigger test: whether estimate plus reserve is over the threshold (strictly). */
export function overThreshold(
  config: AutoConfig,
  estimatedTokens: number,
  threshold: number,
): boolean {
  return estimatedTokens + config.reserve_tokens > threshold;
}

/** Whether a rolling range spans fewer than `min_band_turns` turns. */
function shortRange(config: AutoConfig, range: TurnRange): boolean {
  return range.to_turn - range.from_turn + 1 < config.min_band_turns;
}

/**
 * Decides per D50: fire only when enabled, `turn_count > min_turns`, the
 * window is known, `estimated_tokens + reserve_tokens > context_window *
 * trigger_ratio` (strictly), and the rolling range is non-empty; then the
 * range must span `min_band_turns` (`short_range`) unless estimate plus
 * reserve exceeds the window. With `when: "idle"`, a firing at or below
 * `context_window * hard_ratio` is deferred until `rested_seconds` reaches
 * `idle_seconds`.
 */
export function decide(state: TriggerState): Decision {
  const { config, turn_count: turnCount } = state;
  const estimatedTokens = estimatorTokens(stateEstimator(state), state.estimated_tokens);
  const window = state.context_window;
  const limits = window === undefined ? null : { window, threshold: window * config.trigger_ratio };
  const range = rollingRange(turnCount, state.after_last_compaction, config.rule) ?? null;
  const measures = {
    turn_count: turnCount,
    range,
    estimated_tokens: estimatedTokens,
    threshold: limits?.threshold ?? null,
    context_window: limits?.window ?? null,
  };
  const skip = (reason: PlainSkipReason): SkipDecision => ({
    fire: false,
    reason,
    ...measures,
  });
  if (!config.enabled) return skip("disabled");
  if (turnCount <= config.min_turns) return skip("min_turns");
  if (limits === null) return skip("context_window_unknown");
  if (!overThreshold(config, estimatedTokens, limits.threshold)) return skip("under_threshold");
  if (range === null) return skip("empty_range");
  if (shortRange(config, range) && !exceedsWindow(config, estimatedTokens, limits.window)) {
    return skip("short_range");
  }
  const firing = { ...measures, range, threshold: limits.threshold, context_window: limits.window };
  if (
    config.when === "idle" &&
    !overThreshold(config, estimatedTokens, limits.window * config.hard_ratio)
  ) {
    const rested = state.rested_seconds ?? 0;
    if (rested < config.idle_seconds) {
      return {
        fire: false,
        reason: "deferred_until_idle",
        ...firing,
        due_in_seconds: config.idle_seconds - rested,
      };
    }
    return { fire: true, reason: "over_threshold", ...firing, idle: { rested_seconds: rested } };
  }
  return { fire: true, reason: "over_threshold", ...firing };
}

/** Whether a band's gain is below `min_gain_tokens` (never with the default 0: D50 appends any band). */
function lowGain(config: AutoConfig, gainTokens: number): boolean {
  return config.min_gain_tokens > 0 && gainTokens < config.min_gain_tokens;
}

/** What building a band needs beyond the state: only read when the trigger fires. */
export interface FiringContext {
  /**
   * Compactions the new band's timestamp must follow: the stream's, or only
   * its latest-stamped one (all the timestamp reads; `tune` passes just that).
   */
  readonly compactions: readonly Pick<Compaction, "timestamp">[];
  /** The clock reading (ms since the epoch) the new band's timestamp starts from. */
  readonly nowMillis: number;
  /** D50's estimate (chars / 4) of the projected view with `compaction` appended. */
  readonly estimateWith: (compaction: Compaction) => number;
}

/** A generated summary and what it cost; the cost goes into the band's audit. */
export interface BandSummary {
  readonly text: string;
  readonly model: string;
  readonly input_tokens?: number;
  readonly output_tokens?: number;
  readonly latency_ms: number;
}

/** The audit fields a summary adds to a band's `trigger` and to its firing log line. */
export function summaryAudit(summary: BandSummary): Record<string, string | number> {
  return {
    summary_model: summary.model,
    ...(summary.input_tokens === undefined ? {} : { summary_input_tokens: summary.input_tokens }),
    ...(summary.output_tokens === undefined
      ? {}
      : { summary_output_tokens: summary.output_tokens }),
    summary_latency_ms: summary.latency_ms,
  };
}

/** The audit fields the estimator and the guards add to a band's `trigger` (none with D50's defaults). */
function estimatorAudit(
  estimator: Estimator,
  config: AutoConfig,
  overridden: readonly Guard[],
): Record<string, unknown> {
  return {
    ...(estimator.kind === "chars"
      ? {}
      : {
          estimator: estimator.kind,
          tokens_per_char: estimator.tokens_per_char,
          overhead_tokens: estimator.overhead_tokens,
        }),
    ...(config.reserve_tokens > 0 ? { reserve_tokens: config.reserve_tokens } : {}),
    ...(overridden.length > 0 ? { guard_overridden: overridden } : {}),
  };
}

/** A band ready to append, and the estimate of the view once it is. */
export interface Band {
  readonly compaction: Compaction;
  readonly estimated_tokens_after: number;
}

/**
 * Builds the band of a firing decision, stamped after every existing
 * compaction, with its `trigger` audit (and the summary's, for a summary
 * rule). A summary rule without summary text is refused
 * (`SummaryRequiredError`): a summary is never faked. A band below
 * `min_gain_tokens` is built all the same (its gain is only known once it
 * is): {@link stepAutoCompaction} holds it back unless past the window.
 */
export function buildBand(
  state: TriggerState,
  decision: FireDecision,
  context: FiringContext,
  summary?: BandSummary,
): Band {
  const draft = {
    rule: state.config.rule,
    range: decision.range,
    timestamp: nextCompactionTimestamp(context.compactions, context.nowMillis),
    source: "auto" as const,
    summaryText: summary?.text,
  };
  const { config } = state;
  const estimator = stateEstimator(state);
  const estimatedAfter = estimatorTokens(estimator, context.estimateWith(buildCompaction(draft)));
  // Guards a firing band is below were overridden: it fires only past the window.
  const overridden: Guard[] = [];
  if (shortRange(config, decision.range)) overridden.push("short_range");
  if (lowGain(config, decision.estimated_tokens - estimatedAfter)) overridden.push("low_gain");
  const trigger: CompactionTrigger = {
    turn: state.turn_count - 1,
    estimated_tokens: decision.estimated_tokens,
    threshold: decision.threshold,
    context_window: decision.context_window,
    estimated_tokens_after: estimatedAfter,
    ...estimatorAudit(estimator, config, overridden),
    ...(decision.idle ? { when: "idle", rested_seconds: decision.idle.rested_seconds } : {}),
    ...(summary ? summaryAudit(summary) : {}),
  };
  return {
    compaction: buildCompaction({ ...draft, trigger }),
    estimated_tokens_after: estimatedAfter,
  };
}

/** Generates the summary of a band (from the RAW events of its turns) with the rule's settings. */
export type SummarizeRange = (range: TurnRange, rule: SummaryRuleConfig) => Promise<BandSummary>;

/** What one D50 step reads; each input is read only when the step gets that far. */
export interface StepInputs {
  readonly state: TriggerState;
  /**
   * The compactions, clock and estimator; called only when the trigger
   * fires, with the range the band covers (what its estimate reads).
   */
  readonly firing: (range: TurnRange) => FiringContext | Promise<FiringContext>;
  /** Without it, a summary rule stops at `needs_summary`. */
  readonly summarize?: SummarizeRange;
}

/** The outcome of one D50 step. */
export type AutoCompactionStep =
  | { readonly kind: "skip"; readonly decision: SkipDecision }
  | { readonly kind: "needs_summary"; readonly decision: FireDecision }
  | {
      readonly kind: "fire";
      readonly decision: FireDecision;
      readonly band: Band;
      readonly summary?: BandSummary;
    };

/**
 * Runs the D50 step: decide, summarize if the rule asks (and can), build the
 * band, and hold it back as `low_gain` when it removes less than
 * `min_gain_tokens` and the view does not exceed the window.
 */
export async function stepAutoCompaction(inputs: StepInputs): Promise<AutoCompactionStep> {
  const decision = decide(inputs.state);
  if (!decision.fire) return { kind: "skip", decision };
  const rule = inputs.state.config.rule.summary;
  let summary: BandSummary | undefined;
  if (rule) {
    if (!inputs.summarize) return { kind: "needs_summary", decision };
    summary = await inputs.summarize(decision.range, rule);
  }
  const context = await inputs.firing(decision.range);
  const band = buildBand(inputs.state, decision, context, summary);
  const { config } = inputs.state;
  const gain = decision.estimated_tokens - band.estimated_tokens_after;
  if (
    lowGain(config, gain) &&
    !exceedsWindow(config, decision.estimated_tokens, decision.context_window)
  ) {
    return {
      kind: "skip",
      decision: { ...decision, fire: false, reason: "low_gain", gain_tokens: gain },
    };
  }
  return summary ? { kind: "fire", decision, band, summary } : { kind: "fire", decision, band };
}
