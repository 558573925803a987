/**
 * The D50 trigger: given the stored state after a turn, decide whether to
 * append an automatic compaction, and build it. Pure: the caller supplies the
 * current estimate and a way to estimate the stream with a candidate band
 * appended (from the full projection or from per-turn sizes).
 */
import type { AutoConfig } from "./config.ts";
import type { Compaction, CompactionTrigger } from "./events.ts";
import { buildCompaction, nextCompactionTimestamp, rollingRange, type TurnRange } from "./rules.ts";

/** Why a decision did not fire, or `over_threshold` when it did. */
export type DecisionReason =
  | "disabled"
  | "min_turns"
  | "context_window_unknown"
  | "under_threshold"
  | "empty_range"
  | "over_threshold";

/** The reasons a decision can skip for, in the order they are checked. */
export const SKIP_REASONS = [
  "disabled",
  "min_turns",
  "context_window_unknown",
  "under_threshold",
  "empty_range",
] as const satisfies readonly DecisionReason[];

/** What the trigger needs to know about a stored conversation: a few numbers, no events. */
export interface TriggerState {
  readonly config: AutoConfig;
  readonly turnCount: number;
  /** The turn after the furthest-compacted one, 0 without compactions. */
  readonly afterLastCompaction: number;
  /** Estimate of the current projected view. */
  readonly estimatedTokens: number;
  readonly contextWindow: number | undefined;
}

/** What building a band needs beyond the state: only read when the trigger fires. */
export interface FiringContext {
  /** The stream's compactions, in stream order. */
  readonly compactions: readonly Compaction[];
  /** The clock reading (ms since the epoch) the new band's timestamp starts from. */
  readonly nowMillis: number;
  /** Estimate of the projected view with `compaction` appended. */
  readonly estimateWith: (compaction: Compaction) => number;
}

/** The outcome of one evaluation. */
export interface Decision {
  readonly fire: boolean;
  readonly reason: DecisionReason;
  readonly turn_count: number;
  /** The rolling range, when non-empty (also on skips, for the log). */
  readonly range: TurnRange | null;
  readonly estimated_tokens: number;
  readonly threshold: number | null;
  readonly context_window: number | null;
  /** The band to append, once built ({@link buildFiring}). */
  readonly compaction?: Compaction;
  readonly estimated_tokens_after?: number;
  /** Set when the rule summarizes: the band needs generated text before it can exist. */
  readonly needs_summary?: true;
}

/**
 * Decides per D50: fire only when enabled, `turn_count > min_turns`, the
 * window is known, `estimated_tokens > context_window * trigger_ratio`
 * (strictly), and the rolling range is non-empty. Needs no events, so the
 * no-fire path costs one small read.
 */
export function decide(state: TriggerState): Decision {
  const { config, turnCount, estimatedTokens } = state;
  const window = state.contextWindow ?? null;
  const threshold = window === null ? null : window * config.trigger_ratio;
  const range = rollingRange(turnCount, state.afterLastCompaction, config.rule) ?? null;
  const skip = (reason: DecisionReason): Decision => ({
    fire: false,
    reason,
    turn_count: turnCount,
    range,
    estimated_tokens: estimatedTokens,
    threshold,
    context_window: window,
  });
  if (!config.enabled) return skip("disabled");
  if (turnCount <= config.min_turns) return skip("min_turns");
  if (threshold === null) return skip("context_window_unknown");
  if (!(estimatedTokens > threshold)) return skip("under_threshold");
  if (range === null) return skip("empty_range");
  return {
    fire: true,
    reason: "over_threshold",
    turn_count: turnCount,
    range,
    estimated_tokens: estimatedTokens,
    threshold,
    context_window: window,
    ...(config.rule.summary ? { needs_summary: true as const } : {}),
  };
}

/**
 * Builds the band of a firing decision (with `summaryText` for a summary
 * rule), estimates the view with it, and records the trigger audit. A
 * decision that did not fire is returned unchanged.
 */
export function buildFiring(
  state: TriggerState,
  decision: Decision,
  context: FiringContext,
  summaryText?: string,
): Decision {
  if (
    !decision.fire ||
    !decision.range ||
    decision.threshold === null ||
    decision.context_window === null
  ) {
    return decision;
  }
  const draft = {
    rule: state.config.rule,
    range: decision.range,
    timestamp: nextCompactionTimestamp(context.compactions, context.nowMillis),
    source: "auto" as const,
    summaryText,
  };
  const estimatedAfter = context.estimateWith(buildCompaction(draft));
  const trigger: CompactionTrigger = {
    turn: state.turnCount - 1,
    estimated_tokens: decision.estimated_tokens,
    threshold: decision.threshold,
    context_window: decision.context_window,
    estimated_tokens_after: estimatedAfter,
  };
  const { needs_summary: _pending, ...rest } = decision;
  return {
    ...rest,
    compaction: buildCompaction({ ...draft, trigger }),
    estimated_tokens_after: estimatedAfter,
  };
}
