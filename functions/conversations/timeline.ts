/**
 * A conversation's timeline (`GET /v1/conversations/{id}/timeline`,
 * docs/architecture.md §8): per turn, the raw size so far, what the evaluation after
 * it saw (projected estimate, threshold) and what it did (the band it fired,
 * or why it skipped). Computed from the turns' size records, where the
 * compactor keeps each evaluation, and the band audits (CMP items): never
 * from event bodies. Raw sizes are in the conversation's estimator's tokens
 * now; a projected estimate is the one its evaluation compared with the
 * threshold, in that evaluation's estimator (chars / 4 for records kept
 * before evaluations recorded it).
 */
import type { SkipReason } from "../../core/auto-compaction.ts";
import { type Estimator, estimateTokens } from "../../core/calibration.ts";
import { tokensFromChars } from "../../core/estimate.ts";
import type {
  ConversationHead,
  ConversationRef,
  ConversationStore,
  StoredCompaction,
} from "../ports.ts";
import { rawChars } from "./counters.ts";
import { requireHead } from "./manual-compaction.ts";
import { autoKey } from "./state.ts";

/** The band an evaluation fired. */
export interface FiredBand {
  /** Its 1-based position among the compactions now; `null` once it has been removed. */
  readonly position: number | null;
  readonly from_turn: number;
  readonly to_turn: number;
  readonly source: "auto";
}

/** One turn of a timeline; `null` where unknown. */
export interface TimelineTurn {
  readonly turn: number;
  /** The estimate of turns 0..turn with no compaction (a running total), in the conversation's estimator. */
  readonly raw_tokens: number;
  /** The estimate the evaluation after this turn saw, before its own band. */
  readonly projected_tokens: number | null;
  /** `context_window * trigger_ratio` as that evaluation saw it. */
  readonly threshold: number | null;
  readonly fired: FiredBand | null;
  readonly skip_reason: SkipReason | null;
  /** With `low_gain`: the estimated tokens the band would have removed. */
  readonly gain_tokens?: number;
  /** With `deferred_until_idle`: when the idle re-evaluation is due (RFC 3339). */
  readonly deferred_until?: string;
}

/**
 * The timeline of a conversation. A turn not evaluated yet, skipped as
 * stale, or evaluated before evaluations were recorded has `null`s, except
 * that an automatic band still stored speaks for the turn that fired it
 * (its `trigger` audit has the estimate and threshold).
 */
export async function conversationTimeline(
  store: ConversationStore,
  ref: ConversationRef,
  estimatorOf: (head: ConversationHead) => Estimator,
): Promise<{ turns: TimelineTurn[] }> {
  const estimator = estimatorOf(requireHead(ref, await store.getHead(ref)));
  const [records, compactions] = await Promise.all([
    store.listTurnSizes(ref),
    store.listCompactions(ref),
  ]);
  const byKey = new Map<string, { position: number; stored: StoredCompaction }>(
    compactions.map((stored, index) => [stored.key, { position: index + 1, stored }]),
  );
  let rawSoFar = 0;
  const turns = records.map((record): TimelineTurn => {
    rawSoFar += rawChars(record.size);
    const raw_tokens = estimateTokens(estimator, rawSoFar);
    const evaluation = record.evaluation;
    if (evaluation) {
      const band = evaluation.outcome === "fired" ? evaluation.band : undefined;
      return {
        turn: record.turn,
        raw_tokens,
        projected_tokens:
          evaluation.estimated_tokens ?? tokensFromChars(evaluation.projected_chars),
        threshold: evaluation.threshold,
        fired: band
          ? {
              position: byKey.get(band.key)?.position ?? null,
              from_turn: band.from_turn,
              to_turn: band.to_turn,
              source: "auto",
            }
          : null,
        skip_reason: evaluation.outcome === "skipped" ? evaluation.reason : null,
        ...(evaluation.outcome === "skipped" && evaluation.gain_tokens !== undefined
          ? { gain_tokens: evaluation.gain_tokens }
          : {}),
        ...(evaluation.outcome === "skipped" && evaluation.deferred_until !== undefined
          ? { deferred_until: evaluation.deferred_until }
          : {}),
      };
    }
    const audited = byKey.get(autoKey(record.turn));
    const trigger = audited?.stored.compaction.trigger;
    return {
      turn: record.turn,
      raw_tokens,
      projected_tokens: trigger?.estimated_tokens ?? null,
      threshold: trigger?.threshold ?? null,
      fired:
        audited && trigger
          ? {
              position: audited.position,
              from_turn: audited.stored.compaction.from_turn,
              to_turn: audited.stored.compaction.to_turn,
              source: "auto",
            }
          : null,
      skip_reason: null,
    };
  });
  return { turns };
}
