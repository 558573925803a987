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
 *
 * Idle compaction (issue 29): a decision `deferred_until_idle` schedules a
 * timer (before the decision is recorded, so a crash between the two leaves
 * a timer, never a decision without one), and the timer's message
 * (`idle_from_ms`) re-evaluates its turn. It does nothing unless its turn is
 * still the newest and the head's last decision is still that turn's
 * deferral: a newer turn decides for itself, and once the idle band fired
 * (or anything else was decided) a duplicate or late timer finds another
 * decision. Its band has the same key and the same conditional write as
 * the turn's own.
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
import { CorruptDataError, SetupError } from "../errors.ts";
import type { DeliverySkip } from "../observability.ts";
import {
  type Clock,
  type ConversationHead,
  type ConversationStore,
  type EvaluationMessage,
  type IdleTimers,
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
  /** Where deferred decisions schedule their re-evaluation; without it `when: "idle"` cannot defer. */
  readonly timers?: IdleTimers;
}

/** Whether the head's last decision is `turn`'s deferral: what a timer of `turn` acts on. */
function deferredAt(head: ConversationHead, turn: number): boolean {
  const last = head.last_decision;
  return last?.turn === turn && last.outcome === "skipped" && last.reason === "deferred_until_idle";
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
    const timer = message.idle_from_ms;
    // A newer turn was stored since the timer's: that turn's evaluation decides.
    if (timer !== undefined && message.turn < head.turn_count - 1)
      return { result: { outcome: "skipped", reason: "stale" } };
    if (
      timer === undefined ? head.evaluated_through >= message.turn : !deferredAt(head, message.turn)
    ) {
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
    const nowMillis = clock.nowMillis();
    // The rest starts when the turn was stored; the turn's own evaluation has not rested yet.
    const restFrom = timer ?? message.posted_at_ms ?? nowMillis;
    const state = {
      ...triggerStateOf(settings, tenant, head),
      ...(timer === undefined ? {} : { rested_seconds: Math.max(0, nowMillis - timer) / 1000 }),
    };
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
    if (step.kind === "skip" && step.decision.reason === "deferred_until_idle") {
      const due = restFrom + state.config.idle_seconds * 1000;
      if (!deps.timers)
        throw new SetupError('auto.when is "idle" but this compactor has no idle timers');
      const { posted_at_ms: _lagStart, ...rest } = message;
      await deps.timers.schedule({ ...rest, idle_from_ms: restFrom }, due);
      const deferred_until = new Date(due).toISOString();
      // A timer's re-deferral (it came early) keeps the turn's recorded decision.
      if (timer === undefined) {
        const decision = {
          turn: message.turn,
          outcome: "skipped" as const,
          reason: step.decision.reason,
          deferred_until,
        };
        await log.markEvaluated(life, message.turn, decision, measures);
      }
      return {
        result: { outcome: "skipped", reason: step.decision.reason, decision: step.decision },
      };
    }
    // A timer that finds nothing to fire leaves the turn's decision as it was.
    if (step.kind === "skip" && timer !== undefined) {
      return {
        result: { outcome: "skipped", reason: step.decision.reason, decision: step.decision },
      };
    }
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
