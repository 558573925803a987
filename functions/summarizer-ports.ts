/** The summarizer's port (re-exported by ports.ts): what a summarizer is asked and answers. */

import type { BandSummary } from "../core/auto-compaction.ts";
import type { SummaryRuleConfig } from "../core/config.ts";
import type { Entry } from "../core/events.ts";
import type { TurnRange } from "../core/rules.ts";

/** What a summarizer is asked: the RAW events of a band (never a projected view). */
export interface SummaryRequest {
  readonly from_turn: number;
  readonly to_turn: number;
  readonly events: readonly Entry[];
  readonly instructions?: string;
  readonly model?: string;
}

/**
 * What a summarizer is asked for `range`: its raw events and the rule's prompt
 * and model (the compactor's and the CLI's requests are built here alike).
 */
export function summaryRequest(
  range: TurnRange,
  events: readonly Entry[],
  rule: SummaryRuleConfig,
): SummaryRequest {
  return {
    from_turn: range.from_turn,
    to_turn: range.to_turn,
    events,
    ...(rule.instructions ? { instructions: rule.instructions } : {}),
    ...(rule.model?.id ? { model: rule.model.id } : {}),
  };
}

/** A generated summary and what it cost (core's {@link BandSummary}). */
export type SummaryResult = BandSummary;

/**
 * Generates summaries (Bedrock Converse, or any OpenAI-compatible endpoint).
 * `summarize` resolves with non-blank text or throws ({@link EmptySummaryError}
 * for an empty answer), so callers never check the text again.
 */
export interface Summarizer {
  summarize(request: SummaryRequest, options?: SummarizeOptions): Promise<SummaryResult>;
}

/** Per-call options of {@link Summarizer.summarize}. */
export interface SummarizeOptions {
  /**
   * The caller's deadline (the compactor's, per record): when it aborts, the
   * request is abandoned and the summary fails as a timeout (`SummarizerError`
   * with `timeoutMs`, 504), whichever of it and the summarizer's own timeout
   * comes first.
   */
  readonly signal?: AbortSignal;
}
