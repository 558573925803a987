/**
 * The compactor's Lambda handler: one SQS FIFO batch of evaluation messages,
 * answered with a partial batch response (ARCHITECTURE §2, §10).
 *
 * Records are processed in order by Powertools' FIFO processor with
 * `skipGroupOnError`: a failed record fails the later records of its own
 * message group (its conversation) and no others, so a conversation's messages
 * are never evaluated out of order and a poison message holds back only its
 * own conversation; other conversations in the batch go on. A body that
 * is not an evaluation message fails its record (it ends in the DLQ after
 * 5 receives instead of disappearing). Each outcome is logged as one JSON
 * line and counted in EMF metrics, flushed once per invocation.
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from "@aws-lambda-powertools/batch";
import type { Logger } from "@aws-lambda-powertools/logger";
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { summaryAudit } from "../../core/auto-compaction.ts";
import { InvalidInputError } from "../../core/errors.ts";
import type { Compaction } from "../../core/events.ts";
import type { EvaluationMessage } from "../ports.ts";
import { decodeMessageBody } from "../queue/message.ts";
import type { EvaluationOutcome } from "./evaluate-turn.ts";

/** The EMF namespace of the compactor's metrics. */
export const METRICS_NAMESPACE = "Autocompact";

/** What the handler needs; the wiring (index.ts, the local runtime) supplies it. */
export interface CompactorHandlerDeps {
  readonly evaluate: (message: EvaluationMessage) => Promise<EvaluationOutcome>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Monotonic milliseconds, for `duration_ms` (default `performance.now`). */
  readonly now?: () => number;
}

/** The handler: usable as a Lambda `SQSHandler` and by the in-process queue. */
export type CompactorHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

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

  const recordHandler = async (record: SQSRecord): Promise<void> => {
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
    let outcome: EvaluationOutcome;
    try {
      outcome = await evaluate(message);
    } catch (error) {
      logger.error("auto_compaction.failed", {
        ...ids,
        message_id: record.messageId,
        receive_count: receiveCount,
        duration_ms: round(now() - started),
        error,
      });
      metrics.addMetric("Failed", MetricUnit.Count, 1);
      throw error;
    }
    const durationMs = round(now() - started);
    metrics.addMetric("EvaluationMs", MetricUnit.Milliseconds, durationMs);

    if (outcome.outcome === "skipped") {
      const decision = outcome.decision;
      logger.debug("auto_compaction.skipped", {
        ...ids,
        reason: outcome.reason,
        duration_ms: durationMs,
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
      ...(summary ? summaryAudit(summary) : {}),
    });
    metrics.addMetric("Fired", MetricUnit.Count, 1);
    metrics.addMetric("TokensRemoved", MetricUnit.Count, before - after);
    if (after > decision.threshold) {
      logger.warn("auto_compaction.still_over_threshold", firing);
      metrics.addMetric("StillOverThreshold", MetricUnit.Count, 1);
    }
  };

  return async (event, context) => {
    if (context) logger.addContext(context);
    try {
      // A processor per invocation: the local runtime may run batches concurrently.
      return await processPartialResponse(
        event,
        recordHandler,
        new SqsFifoPartialProcessorAsync(),
        {
          ...(context ? { context } : {}),
          // A failure holds back its own group (conversation) only (ARCHITECTURE §2);
          // without it every later record of the batch fails, other conversations' too.
          skipGroupOnError: true,
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
