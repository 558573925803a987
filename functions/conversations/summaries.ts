/**
 * Generating a band's summary from the RAW events of its turns (RFD 064
 * "Raw-Stream Invariant"): no code path feeds a projected view to a
 * summarizer. An empty answer never gets here: the summarizer throws
 * `EmptySummaryError` (the port's contract).
 */
import type { SummaryRuleConfig } from "../../core/config.ts";
import { SummaryRequiredError } from "../../core/errors.ts";
import type { TurnRange } from "../../core/rules.ts";
import { SummarizerError } from "../errors.ts";
import {
  type ConversationRef,
  type ConversationStore,
  type StoredTurn,
  type SummarizeOptions,
  type Summarizer,
  type SummaryResult,
  summaryRequest,
} from "../ports.ts";

/** A band needs a summary and this service has no summarizer. */
export function missingSummarizerError(range: TurnRange): SummaryRequiredError {
  return new SummaryRequiredError(
    `turns ${range.from_turn}..${range.to_turn} need a summary but no summarizer is configured`,
  );
}

/**
 * Summarizes turns `range` of a stored conversation with the rule's settings.
 * With `options.signal` (the compactor's deadline for the record), the summary
 * fails as a timeout ({@link SummarizerError} with `timeoutMs`) once it aborts,
 * even from a summarizer that ignores the signal.
 */
export async function summarizeBand(
  summarizer: Summarizer,
  store: ConversationStore,
  ref: ConversationRef,
  range: TurnRange,
  rule: SummaryRuleConfig,
  options: SummarizeOptions = {},
): Promise<SummaryResult> {
  const turns = await store.readTurns(ref, range.from_turn, range.to_turn);
  return summarizeTurns(summarizer, turns, range, rule, options);
}

/**
 * {@link summarizeBand} of turns already read (`turns`: the stored turns of
 * `range`), for a caller that keeps them (the compactor builds the band's
 * materialized form from them).
 */
export async function summarizeTurns(
  summarizer: Summarizer,
  turns: readonly StoredTurn[],
  range: TurnRange,
  rule: SummaryRuleConfig,
  options: SummarizeOptions = {},
): Promise<SummaryResult> {
  const request = summaryRequest(
    range,
    turns.flatMap((t) => t.events),
    rule,
  );
  const signal = options.signal;
  if (!signal) return summarizer.summarize(request);
  const started = performance.now();
  const summary = summarizer.summarize(request, { signal });
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      // A turn of the event loop first, so an adapter that honours the signal
      // reports its own (more precise) timeout.
      setTimeout(() => {
        const waited = Math.round(performance.now() - started);
        reject(
          new SummarizerError(
            `turns ${range.from_turn}..${range.to_turn}: no summary before the deadline (${waited} ms)`,
            { timeoutMs: waited, cause: signal.reason },
          ),
        );
      }, 0);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([summary, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
    summary.catch(() => {}); // a late failure after the deadline is nobody's to handle
  }
}
