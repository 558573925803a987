/**
 * Generating a band's summary from the RAW events of its turns (RFD 064
 * "Raw-Stream Invariant"): no code path feeds a projected view to a
 * summarizer, and an empty answer is never committed.
 */
import type { SummaryRuleConfig } from "../../core/config.ts";
import type { TurnRange } from "../../core/rules.ts";
import type { ConversationRef, ConversationStore, Summarizer, SummaryResult } from "../ports.ts";
import { EmptySummaryError, SummarizerUnavailableError } from "./errors.ts";

/** Summarizes turns `range` of a stored conversation with the rule's settings. */
export async function summarizeBand(
  summarizer: Summarizer | undefined,
  store: ConversationStore,
  ref: ConversationRef,
  range: TurnRange,
  rule: SummaryRuleConfig,
): Promise<SummaryResult> {
  if (!summarizer) {
    throw new SummarizerUnavailableError(
      `turns ${range.from_turn}..${range.to_turn} need a summary but no summarizer is configured`,
    );
  }
  const turns = await store.readTurns(ref, range.from_turn, range.to_turn);
  const result = await summarizer.summarize({
    from_turn: range.from_turn,
    to_turn: range.to_turn,
    events: turns.flatMap((t) => t.events),
    ...(rule.instructions ? { instructions: rule.instructions } : {}),
    ...(rule.model?.id ? { model: rule.model.id } : {}),
  });
  if (result.text.trim() === "") {
    throw new EmptySummaryError(
      `the summarizer (${result.model}) returned an empty summary for turns ${range.from_turn}..${range.to_turn}`,
    );
  }
  return result;
}

/** The audit fields a summary adds to a band's `trigger` and to its firing log line. */
export function summaryAudit(result: SummaryResult): Record<string, string | number> {
  return {
    summary_model: result.model,
    ...(result.input_tokens === undefined ? {} : { summary_input_tokens: result.input_tokens }),
    ...(result.output_tokens === undefined ? {} : { summary_output_tokens: result.output_tokens }),
    summary_latency_ms: result.latency_ms,
  };
}
