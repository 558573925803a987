/**
 * Generating a band's summary from the RAW events of its turns (RFD 064
 * "Raw-Stream Invariant"): no code path feeds a projected view to a
 * summarizer, and an empty answer is never committed.
 */
import type { SummaryRuleConfig } from "../../core/config.ts";
import type { TurnRange } from "../../core/rules.ts";
import type { ConversationRef, ConversationStore, Summarizer, SummaryResult } from "../ports.ts";
import { EmptySummaryError, SummarizerUnavailableError } from "./errors.ts";

/** A band needs a summary and this service has no summarizer. */
export function missingSummarizerError(range: TurnRange): SummarizerUnavailableError {
  return new SummarizerUnavailableError(
    `turns ${range.from_turn}..${range.to_turn} need a summary but no summarizer is configured`,
  );
}

/** Summarizes turns `range` of a stored conversation with the rule's settings. */
export async function summarizeBand(
  summarizer: Summarizer,
  store: ConversationStore,
  ref: ConversationRef,
  range: TurnRange,
  rule: SummaryRuleConfig,
): Promise<SummaryResult> {
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
