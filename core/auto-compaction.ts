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
 */
import type { AutoConfig, SummaryRuleConfig } from "./config.ts";
import type { Compaction, CompactionTrigger } from "./events.ts";
import { buildCompaction, nextCompactionTimestamp, rollingRange, type TurnRange } from "./rules.ts";

/** What the trigger needs to know about a stored conversation: a few numbers, no events. */
export interface TriggerState {
  readonly config: AutoConfig;
  readonly turn_count: number;
  /** The turn after the furthest-compacted one, 0 without compactions. */
  readonly after_last_compaction: number;
  /** Estimate of the current projected view. */
  readonly estimated_tokens: number;
  readonly context_window: number | undefined;
}

/** The reasons a decision can skip for, in the order they are checked. */
export const SKIP_REASONS = [
  "disabled",
  "min_turns",
  "context_window_unknown",
  "under_threshold",
  "empty_range",
] as const;

/** Why a decision did not fire. */
export type SkipReason = (typeof SKIP_REASONS)[number];

/** The numbers every decision reports (the firing log, `autocompact evaluate`). */
interface Measures {
  readonly turn_count: number;
  /** The rolling range, or `null` when it is empty. */
  readonly range: TurnRange | null;
  readonly estimated_tokens: number;
  /** `context_window * trigger_ratio`, `null` while the window is unknown. */
  readonly threshold: number | null;
  readonly context_window: number | null;
}

/** A decision not to fire, and why. */
export interface SkipDecision extends Measures {
  readonly fire: false;
  readonly reason: SkipReason;
}

/** A decision to fire over the rolling range (the band is built by {@link buildBand}). */
export interface FireDecision extends Measures {
  readonly fire: true;
  readonly reason: "over_threshold";
  readonly range: TurnRange;
  readonly threshold: number;
  readonly context_window: number;
}

/** The outcome of {@link decide}. */
export type Decision = SkipDecision | FireDecision;

/**
 * Decides per D50: fire only when enabled, `turn_count > min_turns`, the
 * window is known, `estimated_tokens > context_window * trigger_ratio`
 * (strictly), and the rolling range is non-empty.
 */
export function decide(state: TriggerState): Decision {
  const { config, turn_count: turnCount, estimated_tokens: estimatedTokens } = state;
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
  const skip = (reason: SkipReason): SkipDecision => ({ fire: false, reason, ...measures });
  if (!config.enabled) return skip("disabled");
  if (turnCount <= config.min_turns) return skip("min_turns");
  if (limits === null) return skip("context_window_unknown");
  if (!(estimatedTokens > limits.threshold)) return skip("under_threshold");
  if (range === null) return skip("empty_range");
  return {
    fire: true,
    reason: "over_threshold",
    ...measures,
    range,
    threshold: limits.threshold,
    context_window: limits.window,
  };
}

/** What building a band needs beyond the state: only read when the trigger fires. */
export interface FiringContext {
  /**
   * Compactions the new band's timestamp must follow: the stream's, or only
   * its latest-stamped one (all the timestamp reads; `tune` passes just that).
   */
  readonly compactions: readonly Compaction[];
  /** The clock reading (ms since the epoch) the new band's timestamp starts from. */
  readonly nowMillis: number;
  /** Estimate of the projected view with `compaction` appended. */
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

/** A band ready to append, and the estimate of the view once it is. */
export interface Band {
  readonly compaction: Compaction;
  readonly estimated_tokens_after: number;
}

/**
 * Builds the band of a firing decision, stamped after every existing
 * compaction, with its `trigger` audit (and the summary's, for a summary
 * rule). A summary rule without summary text is refused
 * (`SummaryRequiredError`): a summary is never faked.
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
  const estimatedAfter = context.estimateWith(buildCompaction(draft));
  const trigger: CompactionTrigger = {
    turn: state.turn_count - 1,
    estimated_tokens: decision.estimated_tokens,
    threshold: decision.threshold,
    context_window: decision.context_window,
    estimated_tokens_after: estimatedAfter,
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
  /** The compactions, clock and estimator; called only when the trigger fires. */
  readonly firing: () => FiringContext | Promise<FiringContext>;
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

/** Runs the D50 step: decide, summarize if the rule asks (and can), build the band. */
export async function stepAutoCompaction(inputs: StepInputs): Promise<AutoCompactionStep> {
  const decision = decide(inputs.state);
  if (!decision.fire) return { kind: "skip", decision };
  const rule = inputs.state.config.rule.summary;
  let summary: BandSummary | undefined;
  if (rule) {
    if (!inputs.summarize) return { kind: "needs_summary", decision };
    summary = await inputs.summarize(decision.range, rule);
  }
  const context = await inputs.firing();
  const band = buildBand(inputs.state, decision, context, summary);
  return summary ? { kind: "fire", decision, band, summary } : { kind: "fire", decision, band };
}
