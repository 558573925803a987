/**
 * Building compactions (RFD 064 "Strategies", D50 "The rolling range"):
 * turn ranges, rule → compaction, summary range extension and reset. Every
 * function returns new values; the stream itself is append-only.
 */

import { type CompactionRule, toolCallPolicyOf } from "./config.ts";
import { SummaryRequiredError, UnprocessableError } from "./errors.ts";
import type { Compaction, CompactionSource, CompactionTrigger } from "./events.ts";
import { formatTimestamp, timestampNanos } from "./timestamp.ts";

/** An inclusive range of 0-based turns. */
export interface TurnRange {
  readonly from_turn: number;
  readonly to_turn: number;
}

/** The turn after the furthest-compacted one (RFD 064 `AfterLastCompaction`), 0 without compactions. */
export function afterLastCompaction(compactions: readonly Compaction[]): number {
  let after = 0;
  for (const compaction of compactions) after = Math.max(after, compaction.to_turn + 1);
  return after;
}

/**
 * The rolling range of D50: `from = max(keep_first, after_last)`,
 * `to = last - keep_last`; `undefined` when empty. `afterLast` is
 * {@link afterLastCompaction} of the stream's compactions.
 */
export function rollingRange(
  turnCount: number,
  afterLast: number,
  rule: Pick<CompactionRule, "keep_first" | "keep_last">,
): TurnRange | undefined {
  const from = Math.max(rule.keep_first, afterLast);
  const to = turnCount - 1 - rule.keep_last;
  return from > to ? undefined : { from_turn: from, to_turn: to };
}

/**
 * A timestamp strictly later than every compaction in the stream and not
 * earlier than `nowMillis`, so a band written by a Lambda with a slow clock
 * still wins over every band before it.
 */
export function nextCompactionTimestamp(
  compactions: readonly Pick<Compaction, "timestamp">[],
  nowMillis: number,
): string {
  let next = BigInt(Math.trunc(nowMillis)) * 1_000_000n;
  for (const compaction of compactions) {
    const after = timestampNanos(compaction.timestamp) + 1_000n;
    // Stryker disable next-line EqualityOperator: `>=` assigns the same value when they are equal.
    if (after > next) next = after;
  }
  return formatTimestamp(next);
}

/** Everything needed to turn a rule into a compaction entry. */
export interface CompactionDraft {
  readonly rule: Pick<CompactionRule, "reasoning" | "tool_calls" | "summary">;
  readonly range: TurnRange;
  readonly timestamp: string;
  readonly source: CompactionSource;
  /** The generated summary text; required when the rule has a `summary` block. */
  readonly summaryText?: string;
  readonly trigger?: CompactionTrigger;
}

/**
 * Builds the compaction entry for a rule. A summary rule sets only `summary`
 * (it replaces everything in the range, so reasoning and tool policies would
 * be ignored anyway); a mechanical rule sets the policies it has opinions on.
 */
export function buildCompaction(draft: CompactionDraft): Compaction {
  const { rule, range } = draft;
  const base = {
    type: "compaction" as const,
    timestamp: draft.timestamp,
    from_turn: range.from_turn,
    to_turn: range.to_turn,
    source: draft.source,
  };
  let compaction: Compaction;
  if (rule.summary) {
    if (draft.summaryText === undefined || draft.summaryText.trim() === "") {
      throw new SummaryRequiredError(
        `turns ${range.from_turn}..${range.to_turn}: a summary rule needs generated summary text`,
      );
    }
    compaction = { ...base, summary: { summary: draft.summaryText } };
  } else {
    compaction = { ...base };
    if (rule.reasoning) compaction.reasoning = rule.reasoning;
    if (rule.tool_calls) compaction.tool_calls = toolCallPolicyOf(rule.tool_calls);
  }
  if (draft.trigger) compaction.trigger = draft.trigger;
  return compaction;
}

/**
 * Extends a new summary range to the union of every existing summary range it
 * intersects, repeated until stable (RFD 064 "Summary Overlap Resolution"), so
 * no two summaries ever split each other.
 */
export function extendSummaryRange(
  range: TurnRange,
  compactions: readonly Compaction[],
): TurnRange {
  let from = range.from_turn;
  let to = range.to_turn;
  let changed = true;
  while (changed) {
    changed = false;
    for (const compaction of compactions) {
      if (!compaction.summary) continue;
      const intersects = compaction.from_turn <= to && compaction.to_turn >= from;
      if (!intersects) continue;
      if (compaction.from_turn < from || compaction.to_turn > to) {
        from = Math.min(from, compaction.from_turn);
        to = Math.max(to, compaction.to_turn);
        changed = true;
      }
    }
  }
  return { from_turn: from, to_turn: to };
}

/** Which compactions a reset removes: all of them, narrowed to one 1-based position and/or one source. */
export interface ResetSelector {
  readonly position?: number;
  readonly source?: CompactionSource;
}

/**
 * The 0-based indices, among a conversation's compactions in stream order
 * (as they are listed), that a reset removes. Raw events are never touched.
 * A position that names no compaction is an {@link UnprocessableError}.
 */
export function resetSelection(
  compactions: readonly Pick<Compaction, "source">[],
  selector: ResetSelector,
): number[] {
  const { position, source } = selector;
  const count = compactions.length;
  if (position !== undefined && (!Number.isInteger(position) || position < 1 || position > count)) {
    throw new UnprocessableError(
      count === 0
        ? `no compaction at position ${position}: the conversation has no compactions`
        : `no compaction at position ${position}: positions are 1 to ${count}`,
    );
  }
  return compactions.flatMap((compaction, index) =>
    (position === undefined || position === index + 1) &&
    (source === undefined || source === compaction.source)
      ? [index]
      : [],
  );
}
