/**
 * Generating a band's summary from the RAW events of its turns (RFD 064
 * "Raw-Stream Invariant"): no code path feeds a projected view to a
 * summarizer. An empty answer never gets here: the summarizer throws
 * `EmptySummaryError` (the port's contract).
 */
import type { SummaryRuleConfig } from "../../core/config.ts";
import { SummaryRequiredError } from "../../core/errors.ts";
import type { Entry } from "../../core/events.ts";
import type { TurnRange } from "../../core/rules.ts";
import type {
  ConversationRef,
  ConversationStore,
  Summarizer,
  SummaryRequest,
  SummaryResult,
} from "../ports.ts";

/** A band needs a summary and this service has no summarizer. */
export function missingSummarizerError(range: TurnRange): SummaryRequiredError {
  return new SummaryRequiredError(
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
  return summarizer.summarize(
    summaryRequest(
      range,
      turns.flatMap((t) => t.events),
      rule,
    ),
  );
}

/** What a summarizer is asked for `range`: its raw events and the rule's prompt and model. */
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
