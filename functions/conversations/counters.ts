/**
 * What a conversation head must cache, defined once: the log computes every
 * write's numbers with these functions, and `verify` recomputes a head from
 * the stored turns and compactions with the same ones and reports where the
 * stored head (or a turn's stored sizes) differs.
 */
import { measureTurn, projectedCharsFromSizes, type TurnSize } from "../../core/sizes.ts";
import {
  type ConversationHead,
  HEAD_COUNTERS,
  type HeadCounters,
  type StoredCompaction,
  type StoredTurn,
} from "../ports.ts";

/** All characters of a turn before any compaction. */
export function rawChars(size: TurnSize): number {
  return size.text + size.reasoning + size.tool_requests + size.tool_responses;
}

/** The largest `to_turn` of any compaction, -1 without compactions. */
export function maxCompactedTurn(compactions: readonly StoredCompaction[]): number {
  return compactions.reduce((max, c) => Math.max(max, c.compaction.to_turn), -1);
}

/** The projected characters of every turn under every compaction. */
export function projectedChars(
  sizes: readonly TurnSize[],
  compactions: readonly StoredCompaction[],
): number {
  return projectedCharsFromSizes(
    sizes,
    compactions.map((c) => c.compaction),
  );
}

/**
 * The counters `head` must hold given the stored turns' sizes (in turn
 * order) and compactions: the turn count and projection of those turns, the
 * largest compacted turn, a `compactions_version` at least the `seq` of
 * every compaction (each was written by that version, and a new one takes
 * the next: a lower version would reuse a key), and an `evaluated_through`
 * no later than the last turn. The last two keep the head's value when it
 * is within those bounds.
 */
export function expectedCounters(
  head: HeadCounters,
  sizes: readonly TurnSize[],
  compactions: readonly StoredCompaction[],
): HeadCounters {
  return {
    turn_count: sizes.length,
    projected_chars: projectedChars(sizes, compactions),
    max_compacted_turn: maxCompactedTurn(compactions),
    compactions_version: compactions.reduce(
      (version, c) => Math.max(version, c.seq),
      head.compactions_version,
    ),
    evaluated_through: Math.min(head.evaluated_through, sizes.length - 1),
  };
}

/** The head's counters alone. */
export function countersOf(head: ConversationHead): HeadCounters {
  return Object.fromEntries(HEAD_COUNTERS.map((field) => [field, head[field]])) as HeadCounters;
}

/** One number that differs from what it must be. */
export interface Drift {
  /** A head counter (`projected_chars`), or a stored turn size (`turns[3].size.tool_responses`). */
  readonly field: string;
  readonly stored: number;
  readonly expected: number;
}

/** The head counters that differ from `expected`, in {@link HEAD_COUNTERS} order. */
export function headDrift(head: HeadCounters, expected: HeadCounters): Drift[] {
  return HEAD_COUNTERS.filter((field) => head[field] !== expected[field]).map((field) => ({
    field,
    stored: head[field],
    expected: expected[field],
  }));
}

/**
 * Each turn's sizes measured again from its stored events (core's
 * `measureTurn`, a tool response's name taken from the latest request of
 * its call id in that turn or an earlier one, as when the turn was stored).
 */
export function measureStoredTurns(turns: readonly StoredTurn[]): TurnSize[] {
  const names = new Map<string, string>();
  return turns.map((turn) => measureTurn(turn.events, names));
}

/** The stored sizes that differ from the ones measured from the events, turn by turn. */
export function sizeDrift(stored: readonly TurnSize[], measured: readonly TurnSize[]): Drift[] {
  return measured.flatMap((size, turn) => {
    const had = stored[turn];
    if (!had) return [];
    return (Object.keys(size) as (keyof TurnSize)[])
      .filter((key) => had[key] !== size[key])
      .map((key) => ({
        field: `turns[${turn}].size.${key}`,
        // The cross-turn counts are absent when zero (core/sizes.ts).
        stored: had[key] ?? 0,
        expected: size[key] ?? 0,
      }));
  });
}

/**
 * What verify finds against the stored turns: the head's counters that
 * differ (`head`, the ones a repair rewrites) and, after them, every drifted
 * size record (`all`).
 */
export function storedDrift(
  head: HeadCounters,
  sizes: readonly TurnSize[],
  compactions: readonly StoredCompaction[],
  turns: readonly StoredTurn[],
): { head: Drift[]; all: Drift[] } {
  const drifted = headDrift(head, expectedCounters(head, sizes, compactions));
  return { head: drifted, all: [...drifted, ...sizeDrift(sizes, measureStoredTurns(turns))] };
}
