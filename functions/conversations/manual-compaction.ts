/**
 * A manual compaction (RFD 064) prepared from a conversation's stored state:
 * planned, its summary generated, built. `POST …/compactions` writes it
 * (service.ts `compact`); `?dry_run=true` answers it with the estimate it
 * would leave, writing nothing ({@link dryRunCompaction}).
 */

import { estimateTokens } from "../../core/calibration.ts";
import { UnprocessableError } from "../../core/errors.ts";
import type { Compaction } from "../../core/events.ts";
import { type ManualRequest, planManualCompaction } from "../../core/manual.ts";
import { buildCompaction, nextCompactionTimestamp } from "../../core/rules.ts";
import { projectedCharsFromSizes } from "../../core/sizes.ts";
import { NotFoundError } from "../errors.ts";
import type {
  Clock,
  ConversationHead,
  ConversationRef,
  ConversationStore,
  StoredCompaction,
  Summarizer,
  SummaryResult,
  Tenant,
} from "../ports.ts";
import { requestDigest } from "./idempotency.ts";
import { conversationEstimator, effectiveConfig, type ServiceSettings } from "./state.ts";
import { missingSummarizerError, summarizeBand } from "./summaries.ts";
import type { DryRunCache, SummaryBudget } from "./summary-budget.ts";

/**
 * The head of a conversation that exists (has a turn or its own config, and
 * is not being deleted); else {@link NotFoundError}.
 */
export function requireHead(
  ref: ConversationRef,
  head: ConversationHead | undefined,
): ConversationHead {
  if (!head || head.deleting || (head.turn_count === 0 && head.config === undefined)) {
    throw new NotFoundError(`no conversation "${ref.conversation}"`);
  }
  return head;
}

/** What preparing a manual compaction needs. */
export interface ManualCompactionDeps {
  readonly store: ConversationStore;
  readonly clock: Clock;
  readonly settings: ServiceSettings;
  readonly summarizer: Summarizer | undefined;
  /** The tenants' summary budget (summary-budget.ts); none without it. */
  readonly budget?: SummaryBudget | undefined;
  /** Dry-run answers kept for identical requests on an unchanged conversation; none without it. */
  readonly dryRuns?: DryRunCache<DryRun> | undefined;
}

/**
 * The manual compaction `request` asks for, on the conversation as `head`
 * and its `stored` compactions are: a summary is generated from the raw
 * events of the (extended) range; nothing is written.
 */
export async function prepareManualCompaction(
  deps: ManualCompactionDeps,
  tenant: Tenant,
  ref: ConversationRef,
  head: ConversationHead,
  stored: readonly StoredCompaction[],
  request: ManualRequest,
): Promise<Compaction> {
  if (head.turn_count === 0)
    throw new UnprocessableError("the conversation has no turns to compact yet");
  const existing = stored.map((c) => c.compaction);
  const config = effectiveConfig(deps.settings, tenant, head);
  const plan = planManualCompaction(request, head.turn_count, existing, config.rule);
  // A DSL `s` has no settings of its own: it summarizes with the configured rule's prompt and model.
  const summaryRule = plan.rule.summary
    ? { ...config.rule.summary, ...plan.rule.summary }
    : undefined;
  let summary: SummaryResult | undefined;
  if (summaryRule) {
    if (!deps.summarizer) throw missingSummarizerError(plan.range);
    const summarizer = deps.budget
      ? deps.budget.charging(deps.summarizer, tenant)
      : deps.summarizer;
    summary = await summarizeBand(summarizer, deps.store, ref, plan.range, summaryRule);
  }
  return buildCompaction({
    rule: plan.rule,
    range: plan.range,
    timestamp: nextCompactionTimestamp(existing, deps.clock.nowMillis()),
    source: "manual",
    ...(summary ? { summaryText: summary.text } : {}),
  });
}

/** What a manual compaction would be and do (`POST …/compactions?dry_run=true`). */
export interface DryRun {
  /** The compaction, at the position it would take. */
  readonly compaction: Compaction & { position: number };
  /** The estimate of the projected view now. */
  readonly estimated_tokens_before: number;
  /** The estimate with the compaction added. */
  readonly estimated_tokens_after: number;
}

/**
 * The manual compaction `request` would add, and the estimate before and
 * after it, from reads alone: nothing is written (a summary is generated,
 * as the real one would be, and dropped).
 */
export async function dryRunCompaction(
  deps: ManualCompactionDeps,
  tenant: Tenant,
  conversation: string,
  request: ManualRequest,
): Promise<DryRun> {
  const ref = { tenant: tenant.id, conversation };
  const head = requireHead(ref, await deps.store.getHead(ref));
  if (!deps.dryRuns) return dryRunOn(deps, tenant, ref, head, request);
  // Everything the answer depends on: the conversation's life and state, the rule it resolves, the request.
  const key = requestDigest({
    ref,
    incarnation: head.incarnation ?? null,
    turn_count: head.turn_count,
    compactions_version: head.compactions_version,
    rule: effectiveConfig(deps.settings, tenant, head).rule,
    // The estimates' unit: a config change to the estimator alone changes the answer.
    estimator: conversationEstimator(deps.settings, tenant, head),
    request,
  });
  return deps.dryRuns.answer(key, () => dryRunOn(deps, tenant, ref, head, request));
}

/** {@link dryRunCompaction} on the conversation as `head` is. */
async function dryRunOn(
  deps: ManualCompactionDeps,
  tenant: Tenant,
  ref: ConversationRef,
  head: ConversationHead,
  request: ManualRequest,
): Promise<DryRun> {
  const [stored, records] = await Promise.all([
    deps.store.listCompactions(ref),
    deps.store.listTurnSizes(ref),
  ]);
  const compaction = await prepareManualCompaction(deps, tenant, ref, head, stored, request);
  const sizes = records.map((record) => record.size);
  const existing = stored.map((c) => c.compaction);
  // In the conversation's estimator, as GET /v1/conversations/{id} answers.
  const estimator = conversationEstimator(deps.settings, tenant, head);
  return {
    compaction: { position: stored.length + 1, ...compaction },
    estimated_tokens_before: estimateTokens(estimator, projectedCharsFromSizes(sizes, existing)),
    estimated_tokens_after: estimateTokens(
      estimator,
      projectedCharsFromSizes(sizes, [...existing, compaction]),
    ),
  };
}
