/**
 * The compactor's per-record function: evaluate D50 for one turn message.
 * Correct under at-least-once, late, out-of-order and concurrent delivery:
 * only the newest stored turn is evaluated (`stale` otherwise), the band is
 * written once per triggering turn (`AUTO#<turn>`, if absent) and only if
 * the head is still the one the decision was computed from.
 */
import { resolveContextWindow } from "../../core/catalog.ts";
import { tokensFromChars } from "../../core/estimate.ts";
import { projectedCharsFromSizes } from "../../core/sizes.ts";
import { buildFiring, type Decision, decide, type TriggerState } from "../../core/trigger.ts";
import { ContentionError } from "../conversations/errors.ts";
import { autoKey, effectiveConfig, type ServiceSettings } from "../conversations/state.ts";
import { summarizeBand, summaryAudit } from "../conversations/summaries.ts";
import {
  type Clock,
  ConditionFailedError,
  type ConversationStore,
  type EvaluationMessage,
  type Summarizer,
  type SummaryResult,
  systemClock,
  type TenantDirectory,
} from "../ports.ts";

/** Why a message was skipped without a decision of the trigger. */
export type DeliverySkip = "stale" | "already_evaluated" | "unknown_turn";

/** What one evaluation did. */
export type EvaluationOutcome =
  | { readonly outcome: "fired"; readonly decision: Decision; readonly summary?: SummaryResult }
  | {
      readonly outcome: "skipped";
      readonly reason: Decision["reason"];
      readonly decision: Decision;
    }
  | { readonly outcome: "skipped"; readonly reason: DeliverySkip; readonly decision?: undefined };

/** Dependencies of the evaluation. */
export interface EvaluatorDeps {
  readonly store: ConversationStore;
  readonly tenants: TenantDirectory;
  readonly clock?: Clock;
  readonly settings?: ServiceSettings;
  readonly summarizer?: Summarizer;
}

const MAX_ATTEMPTS = 8;

/** Evaluates the trigger after `message.turn` and writes the band if it fires. */
export async function evaluateTurn(
  deps: EvaluatorDeps,
  message: EvaluationMessage,
): Promise<EvaluationOutcome> {
  const ref = { tenant: message.tenant, conversation: message.conversation };
  const clock = deps.clock ?? systemClock;
  // A summary costs a model call: a retry after a lost race reuses it when the band is the same.
  let cached: { key: string; result: SummaryResult } | undefined;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const head = await deps.store.getHead(ref);
    if (!head || message.turn >= head.turn_count)
      return { outcome: "skipped", reason: "unknown_turn" };
    if (head.evaluated_through >= message.turn)
      return { outcome: "skipped", reason: "already_evaluated" };
    if (message.turn < head.turn_count - 1) {
      await deps.store.markEvaluated(ref, message.turn);
      return { outcome: "skipped", reason: "stale" };
    }
    const tenant = await deps.tenants.getTenant(message.tenant);
    const settings = deps.settings ?? {};
    const state: TriggerState = {
      config: effectiveConfig(settings, tenant, head),
      turnCount: head.turn_count,
      afterLastCompaction: head.max_compacted_turn + 1,
      estimatedTokens: tokensFromChars(head.projected_chars),
      contextWindow: resolveContextWindow(head.model, settings.catalog),
    };
    const decision = decide(state);
    if (!decision.fire || !decision.range) {
      await deps.store.markEvaluated(ref, message.turn);
      return { outcome: "skipped", reason: decision.reason, decision };
    }
    const [summaries, stored] = await Promise.all([
      deps.store.listTurnSummaries(ref),
      deps.store.listCompactions(ref),
    ]);
    const sizes = summaries.map((s) => s.size);
    const compactions = stored.map((c) => c.compaction);
    let summary: SummaryResult | undefined;
    const rule = state.config.rule.summary;
    if (rule) {
      const key = JSON.stringify([decision.range, rule]);
      if (cached?.key !== key) {
        cached = {
          key,
          result: await summarizeBand(deps.summarizer, deps.store, ref, decision.range, rule),
        };
      }
      summary = cached.result;
    }
    const fired = buildFiring(
      state,
      decision,
      {
        compactions,
        nowMillis: clock.nowMillis(),
        estimateWith: (c) => tokensFromChars(projectedCharsFromSizes(sizes, [...compactions, c])),
      },
      summary?.text,
    );
    const band = fired.compaction;
    if (!band || fired.estimated_tokens_after === undefined)
      return { outcome: "skipped", reason: decision.reason, decision };
    if (summary) {
      band.trigger = {
        ...(band.trigger as NonNullable<typeof band.trigger>),
        ...summaryAudit(summary),
      };
    }
    try {
      await deps.store.addCompaction(
        ref,
        {
          key: autoKey(message.turn),
          after_turn: message.turn,
          seq: head.compactions_version + 1,
          compaction: band,
        },
        head,
        {
          projected_chars: projectedCharsFromSizes(sizes, [...compactions, band]),
          max_compacted_turn: Math.max(head.max_compacted_turn, band.to_turn),
          evaluated_through: message.turn,
        },
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) continue;
      throw error;
    }
    return { outcome: "fired", decision: fired, ...(summary ? { summary } : {}) };
  }
  throw new ContentionError(
    `turn ${message.turn} of ${message.conversation}: the head kept changing during evaluation`,
  );
}
