/**
 * The compactor's Lambda handler: one SQS FIFO batch of evaluation messages,
 * answered with a partial batch response (docs/architecture.md §2, §10).
 *
 * Records are processed one after another by Powertools' `BatchProcessor`
 * (SQS), and a failed record fails itself alone: the later records of its
 * conversation (message group) in the same batch are still evaluated and
 * deleted, so a poison message never takes them with it (no receive count of
 * theirs climbs with its own, none is dead-lettered beside it). That is safe
 * because evaluation does not depend on delivery order (docs/architecture.md
 * §2): only the newest stored turn is evaluated, so a later turn's message
 * decides for the earlier one, whose retry then skips as `already_evaluated`.
 * (Powertools' FIFO processor would fail them unrun, `skipGroupOnError`, or
 * fail the whole rest of the batch without it.) Each record has
 * a deadline, its share of the invocation's remaining time (Lambda's context,
 * or the in-process queue's visibility timeout) less a margin: a summary still
 * running then is aborted and fails its record, so a hanging summarizer never
 * makes the invocation time out (which would fail the whole batch). A body that
 * is not an evaluation message fails its record (it ends in the DLQ after
 * 5 receives instead of disappearing). Each outcome is logged as one JSON
 * line and counted in EMF metrics, flushed once per invocation; a decided
 * evaluation also reports its lag (`EvaluationLagMs`, from the turn's
 * `posted_at_ms` to the decision, in milliseconds). A failed
 * evaluation is also recorded on its conversation (turn, error class,
 * message, time), which `autocompact dlq list` shows beside a dead letter.
 * A firing is then published as notifications (`compaction.fired`, and
 * `compaction.still_over_threshold`, docs/architecture.md §16); a redelivery of a
 * turn that fired publishes them again, under the same `webhook-id`s, so a
 * publish that failed after its retries in place (and failed the record) is
 * made good by the redelivery.
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Logger } from "@aws-lambda-powertools/logger";
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { summaryAudit } from "../../core/auto-compaction.ts";
import { InvalidInputError } from "../../core/errors.ts";
import type { Compaction } from "../../core/events.ts";
import type { BackoffOptions } from "../backoff.ts";
import { autoKey } from "../conversations/state.ts";
import { firingNotifications } from "../notifications/events.ts";
import { ReliablePublisher } from "../notifications/reliable.ts";
import {
  type Clock,
  type ConversationRef,
  type EvaluationFailure,
  type EvaluationMessage,
  evaluationFailure,
  type NotificationPublisher,
  systemClock,
} from "../ports.ts";
import { decodeMessageBody } from "../queue/message.ts";
import type { EvaluateOptions, EvaluationOutcome } from "./evaluate-turn.ts";

/**
 * Time kept back from the invocation's remaining time, for answering the batch
 * after the last record: 10% of it, at most 5 s.
 */
export const DEADLINE_MARGIN = { ratio: 0.1, maxMs: 5_000 } as const;

/** What the handler needs; the wiring (index.ts, the local runtime) supplies it. */
export interface CompactorHandlerDeps {
  /** Evaluates one message; `options.signal` aborts at the record's deadline. */
  readonly evaluate: (
    message: EvaluationMessage,
    options: EvaluateOptions,
  ) => Promise<EvaluationOutcome>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Monotonic milliseconds, for `duration_ms` (default `performance.now`). */
  readonly now?: () => number;
  /**
   * Keeps a failed evaluation on its conversation (the store's
   * `recordFailure`), for `autocompact dlq list`: SQS keeps no error text.
   * A failure to record it is logged and does not change the record's outcome.
   */
  readonly recordFailure?: (ref: ConversationRef, failure: EvaluationFailure) => Promise<void>;
  /** The wall clock of a failure's `at` and of the evaluation lag's end (default the system's). */
  readonly clock?: Clock;
  /** Where firings are published as notifications (none without it). */
  readonly notifier?: NotificationPublisher;
  /** The publish retries' backoff (functions/notifications/reliable.ts); injectable for tests. */
  readonly publishing?: BackoffOptions;
}

/**
 * What the handler reads of its invocation: a Lambda context, or the
 * in-process queue's equivalent (the time left before the batch's messages
 * become visible again).
 */
export type InvocationContext = Context | Pick<Context, "getRemainingTimeInMillis">;

/** The handler: usable as a Lambda `SQSHandler` and by the in-process queue. */
export type CompactorHandler = (
  event: SQSEvent,
  context?: InvocationContext,
) => Promise<SQSBatchResponse>;

/** Which policies a band applies, for the log: `summary`, or `reasoning`/`tool_calls` joined by `+`. */
export function policyOf(compaction: Compaction | undefined): string {
  if (!compaction) return "none";
  const kinds: string[] = [];
  if (compaction.summary) kinds.push("summary");
  if (compaction.reasoning) kinds.push("reasoning");
  if (compaction.tool_calls) kinds.push("tool_calls");
  return kinds.length === 0 ? "none" : kinds.join("+");
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

export function createCompactorHandler(deps: CompactorHandlerDeps): CompactorHandler {
  const { evaluate, logger, metrics } = deps;
  const now = deps.now ?? (() => performance.now());
  const clock = deps.clock ?? systemClock;
  const notifier =
    deps.notifier &&
    new ReliablePublisher(deps.notifier, { ...deps.publishing, logger, metrics, rethrow: true });

  /** One record; `budgetMs` is its share of the invocation's remaining time (none without a context). */
  const handleRecord = async (record: SQSRecord, budgetMs: number | undefined): Promise<void> => {
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? "0") || undefined;
    const decoded = decodeMessageBody(record.body);
    if (!decoded.ok) {
      logger.error("auto_compaction.invalid_message", {
        message_id: record.messageId,
        receive_count: receiveCount,
        reason: decoded.error,
        body: record.body.length > 1024 ? `${record.body.slice(0, 1024)}…` : record.body,
      });
      metrics.addMetric("Failed", MetricUnit.Count, 1);
      throw new InvalidInputError(`message ${record.messageId}: ${decoded.error}`);
    }
    const message = decoded.message;
    const ids = { tenant: message.tenant, conversation: message.conversation, turn: message.turn };
    const started = now();
    // The record's deadline: a summary still running then is aborted (and fails
    // the record), so a hanging summarizer cannot make the whole batch time out.
    const deadline = budgetMs === undefined ? undefined : new AbortController();
    const timer = deadline && setTimeout(() => deadline.abort(), budgetMs);
    let outcome: EvaluationOutcome;
    try {
      outcome = await evaluate(message, deadline ? { signal: deadline.signal } : {});
    } catch (error) {
      logger.error("auto_compaction.failed", {
        ...ids,
        message_id: record.messageId,
        receive_count: receiveCount,
        duration_ms: round(now() - started),
        ...(budgetMs === undefined ? {} : { deadline_ms: Math.round(budgetMs) }),
        error,
      });
      metrics.addMetric("Failed", MetricUnit.Count, 1);
      if (deps.recordFailure) {
        const failure = evaluationFailure(message.turn, error, new Date(clock.nowMillis()));
        await deps
          .recordFailure(ids, failure)
          .catch((recordError: unknown) =>
            logger.warn("auto_compaction.failure_not_recorded", { ...ids, error: recordError }),
          );
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const durationMs = round(now() - started);
    metrics.addMetric("EvaluationMs", MetricUnit.Milliseconds, durationMs);
    // The evaluation lag: from the turn's post (the API's clock) to this
    // decision (the compactor's), for evaluations that decided on a state
    // holding the turn (fired or a trigger skip). A delivery skip decided
    // nothing: a stale turn is decided by its newer turn's evaluation, whose
    // lag is counted then.
    const lagMs =
      message.posted_at_ms !== undefined && outcome.decision !== undefined
        ? Math.max(0, Math.round(clock.nowMillis() - message.posted_at_ms))
        : undefined;
    if (lagMs !== undefined) metrics.addMetric("EvaluationLagMs", MetricUnit.Milliseconds, lagMs);
    const lag = lagMs === undefined ? {} : { evaluation_lag_ms: lagMs };

    /**
     * Publishes a stored band's notifications, retried in place; once given up
     * (logged and counted as NotificationsPublishFailed) the record fails, so
     * SQS redelivers it and the redelivery publishes again.
     */
    const publish = async (key: string, compaction: Compaction) => {
      if (!notifier) return;
      try {
        await notifier.publish(firingNotifications(ids, key, compaction));
      } catch (error) {
        metrics.addMetric("Failed", MetricUnit.Count, 1);
        throw error;
      }
    };

    if (outcome.outcome === "skipped") {
      if ("fired" in outcome && outcome.fired)
        await publish(outcome.fired.key, outcome.fired.compaction);
      const decision = outcome.decision;
      logger.info("auto_compaction.skipped", {
        ...ids,
        reason: outcome.reason,
        duration_ms: durationMs,
        ...lag,
        ...(decision
          ? {
              turn_count: decision.turn_count,
              estimated_tokens: decision.estimated_tokens,
              threshold: decision.threshold,
              context_window: decision.context_window,
            }
          : {}),
      });
      metrics
        .singleMetric()
        .addDimension("reason", outcome.reason)
        .addMetric("Skipped", MetricUnit.Count, 1);
      return;
    }

    const { decision, summary } = outcome;
    const band = outcome.band.compaction;
    const before = decision.estimated_tokens;
    const after = outcome.band.estimated_tokens_after;
    const firing = {
      ...ids,
      from_turn: band.from_turn,
      to_turn: band.to_turn,
      policy: policyOf(band),
      estimated_tokens: before,
      estimated_tokens_after: after,
      threshold: decision.threshold,
      context_window: decision.context_window,
    };
    logger.info("auto_compaction.fired", {
      ...firing,
      duration_ms: durationMs,
      ...lag,
      ...(summary ? summaryAudit(summary) : {}),
    });
    metrics.addMetric("Fired", MetricUnit.Count, 1);
    metrics.addMetric("TokensRemoved", MetricUnit.Count, before - after);
    if (after > decision.threshold) {
      logger.warn("auto_compaction.still_over_threshold", firing);
      metrics.addMetric("StillOverThreshold", MetricUnit.Count, 1);
    }
    await publish(autoKey(message.turn), band);
  };

  return async (event, context) => {
    const lambda = context && "awsRequestId" in context ? context : undefined;
    if (lambda) logger.addContext(lambda);
    // Each record may use an equal share of the time left for it and the records
    // after it (less the margin): one that hangs until its deadline leaves the
    // others their time, and the invocation answers before it times out.
    const records = event.Records;
    const margin = context
      ? Math.min(DEADLINE_MARGIN.maxMs, context.getRemainingTimeInMillis() * DEADLINE_MARGIN.ratio)
      : 0;
    const budgetOf = (record: SQSRecord): number | undefined => {
      if (!context) return undefined;
      const index = records.findIndex((r) => r.messageId === record.messageId);
      const left = index < 0 ? 1 : records.length - index;
      return Math.max(0, (context.getRemainingTimeInMillis() - margin) / left);
    };
    try {
      // A processor per invocation: the local runtime may run batches concurrently.
      return await processPartialResponse(
        event,
        (record: SQSRecord) => handleRecord(record, budgetOf(record)),
        new BatchProcessor(EventType.SQS),
        {
          ...(lambda ? { context: lambda } : {}),
          // One record at a time, in the batch's order: each gets its share of the
          // time left (budgetOf), and two records of one conversation never race.
          // A failure fails its own record only (docs/architecture.md §2).
          processInParallel: false,
          // Report every record as failed instead of throwing: same redelivery,
          // and the invocation is not counted as a Lambda error.
          throwOnFullBatchFailure: false,
        },
      );
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}
