/**
 * What a snapshot of the conversation log (log.ts) reads for a new band:
 * the projected characters with it, from the records at its ends when it
 * covers only turns no compaction covers (docs/architecture.md §13), and
 * the timestamp it must follow, from the head; the full reads otherwise.
 */
import type { Compaction } from "../../core/events.ts";
import type { TurnRange } from "../../core/rules.ts";
import {
  bandEndTurns,
  projectedCharsFromSizes,
  projectedCharsWithBand,
  type TotaledSize,
} from "../../core/sizes.ts";
import { timestampNanos } from "../../core/timestamp.ts";
import type {
  BandCounts,
  ConversationHead,
  ConversationRef,
  ConversationStore,
  StoredCompaction,
} from "../ports.ts";
import type { Snapshot } from "./log.ts";

/** The later of two compaction timestamps (`at` may be absent). */
export function latestOf(at: string | undefined, other: string): string {
  return at !== undefined && timestampNanos(at) > timestampNanos(other) ? at : other;
}

/**
 * The head's band counts with `added`, when the head has them (every
 * compaction write sets them) or has no compaction; a head from before
 * they existed has none, and the bands are counted from the stored compactions.
 */
export function addedCounts(
  head: ConversationHead,
  added: StoredCompaction,
): BandCounts | undefined {
  // No compaction covers any turn: there is none.
  const counts = head.bands ?? (head.max_compacted_turn < 0 ? { auto: 0, manual: 0 } : undefined);
  if (!counts) return undefined;
  const auto = added.compaction.source === "auto";
  return { auto: counts.auto + (auto ? 1 : 0), manual: counts.manual + (auto ? 0 : 1) };
}

/** See {@link Snapshot.charsWithBand}. */
export async function charsWithBand(
  store: ConversationStore,
  ref: ConversationRef,
  head: ConversationHead | undefined,
  snapshot: Snapshot,
  range: TurnRange,
): Promise<(band: Compaction) => number> {
  if (head && range.from_turn > head.max_compacted_turn) {
    const turns = bandEndTurns(range, head.turn_count);
    const records = new Map(
      (await store.getTurnSizes(ref, turns)).map((record) => [record.turn, record]),
    );
    if (turns.every((turn) => records.get(turn)?.totals !== undefined)) {
      return (band) =>
        projectedCharsWithBand(
          head.projected_chars,
          head.turn_count,
          band,
          (turn) => records.get(turn) as TotaledSize,
        );
    }
  }
  const [sizes, stored] = await Promise.all([snapshot.turnSizes(), snapshot.compactions()]);
  const compactions = stored.map((c) => c.compaction);
  return (band) => projectedCharsFromSizes(sizes, [...compactions, band]);
}

/** See {@link Snapshot.latestBandTimestamp}. */
export async function latestBandTimestamp(
  head: ConversationHead | undefined,
  snapshot: Snapshot,
): Promise<string | undefined> {
  if (!head || head.max_compacted_turn < 0) return undefined;
  if (head.latest_band_at !== undefined) return head.latest_band_at;
  return (await snapshot.compactions()).reduce<string | undefined>(
    (at, c) => latestOf(at, c.compaction.timestamp),
    undefined,
  );
}
