/**
 * The compactor's per-record function: evaluate D50 for one turn message.
 * Correct under at-least-once, late, out-of-order and concurrent delivery:
 * only the newest stored turn is evaluated (`stale` otherwise), the band is
 * written once per triggering turn (`AUTO#<turn>`, if absent) and only if
 * the head is still the one the decision was computed from. A conversation
 * deleted (or being deleted) is not there: its messages skip as
 * `unknown_turn`, and a band decided before the delete began can no longer
 * land (the tombstone bumped the version its write is conditional on). Once
 * the id is created again, the old life's messages name another incarnation
 * than the head's and skip as `stale`, writing nothing.
 */
import {
  type Band,
  type BandSummary,
  type FireDecision,
  type SkipDecision,
  stepAutoCompaction,
} from "../../core/auto-compaction.ts";
import type { SummaryRuleConfig } from "../../core/config.ts";
import { tokensFromChars } from "../../core/estimate.ts";
import type { Compaction } from "../../core/events.ts";
import type { TurnRange } from "../../core/rules.ts";
import { ConversationLog, type Decision, type RetryPolicy } from "../conversations/log.ts";
import { autoKey, type ServiceSettings, triggerStateOf } from "../conversations/state.ts";
import { missingSummarizerError, summarizeTurns } from "../conversations/summaries.ts";
import { CorruptDataError } from "../errors.ts";
import type { DeliverySkip } from "../observability.ts";
import {
  type Clock,
  type ConversationStore,
  type EvaluationMessage,
  type StoredCompaction,
  type StoredTurn,
  type Summarizer,
  systemClock,
  type TenantDirectory,
} from "../ports.ts";

/** What one evaluation did. */
export type EvaluationOutcome =
  | {
      readonly outcome: "fired";
      readonly decision: FireDecision;
      readonly band: Band;
      readonly summary?: BandSummary;
    }
  | {
      readonly outcome: "skipped";
      readonly reason: SkipDecision["reason"];
      readonly decision: SkipDecision;
    }
  | {
      readonly outcome: "skipped";
      readonly reason: DeliverySkip;
      readonly decision?: undefined;
      /**
       * For a redelivery of a turn whose evaluation fired: the band it wrote,
       * so its notifications are published again (the first run may have
       * stopped before publishing them; receivers drop duplicates by id).
       */
      readonly fired?: StoredCompaction;
    };

/** Dependencies of the evaluation. */
export interface EvaluatorDeps {
  readonly store: ConversationStore;
  readonly tenants: TenantDirectory;
  readonly clock?: Clock;
  readonly settings?: ServiceSettings;
  readonly summarizer?: Summarizer;
  /** How long a band's write that keeps losing races is retried (defaults in {@link ConversationLog}). */
  readonly retry?: RetryPolicy;
}

/** Per-message options of {@link evaluateTurn}. */
export interface EvaluateOptions {
  /**
   * The record's deadline (the compactor handler's share of the invocation's
   * remaining time): a summary still running when it aborts fails as a
   * timeout, and nothing is committed.
   */
  readonly signal?: AbortSignal;
}

/** Evaluates the trigger after `message.turn` and writes the band if it fires. */
export async function evaluateTurn(
  deps: EvaluatorDeps,
  message: EvaluationMessage,
  options: EvaluateOptions = {},
): Promise<EvaluationOutcome> {
  try {
    return await evaluate(deps, message, options);
  } catch (error) {
    // A delete running meanwhile removed the events a summary was reading: nothing to evaluate.
    if (error instanceof CorruptDataError) {
      const head = await deps.store.getHead(message);
      if (!head || head.deleting) return { outcome: "skipped", reason: "unknown_turn" };
    }
    throw error;
  }
}

async function evaluate(
  deps: EvaluatorDeps,
  message: EvaluationMessage,
  options: EvaluateOptions,
): Promise<EvaluationOutcome> {
  const ref = { tenant: message.tenant, conversation: message.conversation };
  const clock = deps.clock ?? systemClock;
  const log = new ConversationLog(deps.store, deps.retry);
  const what = `turn ${message.turn} of ${message.conversation}`;
  // A summary costs a model call: a retry after a lost race reuses it when the band is the same.
  // Its turns stay with it: the band's materialized form is built from them (materialized.ts).
  let cached: { key: string; result: BandSummary; turns: readonly StoredTurn[] } | undefined;
  return log.update(ref, what, async (snapshot): Promise<Decision<EvaluationOutcome>> => {
    const head = snapshot.head;
    if (!head) return { result: { outcome: "skipped", reason: "unknown_turn" } };
    // A message of an earlier life of this conversation id (deleted, then
    // created again): it decides nothing and writes nothing on this one.
    if (message.incarnation !== undefined && message.incarnation !== head.incarnation)
      return { result: { outcome: "skipped", reason: "stale" } };
    if (message.turn >= head.turn_count)
      return { result: { outcome: "skipped", reason: "unknown_turn" } };
    // A mark lands on the life this head is only (the id may be deleted and created again meanwhile).
    const life = head.incarnation === undefined ? ref : { ...ref, incarnation: head.incarnation };
    if (head.evaluated_through >= message.turn) {
      // A band under this turn's key is the one its evaluation fired (a reset may have removed it).
      const fired = (await snapshot.compactions()).find((c) => c.key === autoKey(message.turn));
      return {
        result: { outcome: "skipped", reason: "already_evaluated", ...(fired && { fired }) },
      };
    }
    if (message.turn < head.turn_count - 1) {
      await log.markEvaluated(life, message.turn);
      return { result: { outcome: "skipped", reason: "stale" } };
    }
    const tenant = await deps.tenants.getTenant(message.tenant);
    const settings = deps.settings ?? {};
    const state = triggerStateOf(settings, tenant, head);
    // Read only when the trigger fires: the no-fire path costs the head read alone. A firing
    // reads the size records at its band's ends and no band (log.ts Snapshot.charsWithBand).
    const firing = async (range: TurnRange) => {
      const [withBand, latest] = await Promise.all([
        snapshot.charsWithBand(range),
        snapshot.latestBandTimestamp(),
      ]);
      return {
        compactions: latest === undefined ? [] : [{ timestamp: latest }],
        nowMillis: clock.nowMillis(),
        estimateWith: (c: Compaction) => tokensFromChars(withBand(c)),
      };
    };
    const summarizer = deps.summarizer;
    const step = await stepAutoCompaction({
      state,
      firing,
      ...(summarizer
        ? {
            summarize: async (range: TurnRange, rule: SummaryRuleConfig) => {
              const key = JSON.stringify([range, rule]);
              if (cached?.key !== key) {
                const turns = await deps.store.readTurns(ref, range.from_turn, range.to_turn);
                cached = {
                  key,
                  result: await summarizeTurns(summarizer, turns, range, rule, options),
                  turns,
                };
              }
              return cached.result;
            },
          }
        : {}),
    });
    // What the evaluation saw, kept on the turn's size record for the timeline.
    const measures = {
      projected_chars: head.projected_chars,
      estimated_tokens: step.decision.estimated_tokens,
      threshold: step.decision.threshold,
    };
    if (step.kind === "skip") {
      await log.markEvaluated(
        life,
        message.turn,
        {
          turn: message.turn,
          outcome: "skipped",
          reason: step.decision.reason,
          ...(step.decision.reason === "low_gain"
            ? { gain_tokens: step.decision.gain_tokens }
            : {}),
        },
        measures,
      );
      return {
        result: { outcome: "skipped", reason: step.decision.reason, decision: step.decision },
      };
    }
    if (step.kind === "needs_summary") throw missingSummarizerError(step.decision.range);
    return {
      write: {
        kind: "add_compaction",
        compaction: {
          key: autoKey(message.turn),
          after_turn: message.turn,
          seq: head.compactions_version + 1,
          compaction: step.band.compaction,
        },
        decision: {
          turn: message.turn,
          outcome: "fired",
          band: {
            key: autoKey(message.turn),
            from_turn: step.band.compaction.from_turn,
            to_turn: step.band.compaction.to_turn,
          },
        },
        measures,
        ...(step.summary && cached ? { turns: cached.turns } : {}),
      },
      result: {
        outcome: "fired",
        decision: step.decision,
        band: step.band,
        ...(step.summary ? { summary: step.summary } : {}),
      },
    };
  });
}
