/**
 * The notifier Lambda's handler (docs/architecture.md §16): one SQS batch of
 * notifications, each an EventBridge event the bus's rule forwarded, answered
 * with a partial batch response. Each record is delivered on its own: the
 * tenant's endpoint is read as registered now, the URL checked again after
 * DNS resolution, the body signed with the endpoint's secret and POSTed. A
 * failed POST (not 2xx, a timeout, a refused address) fails the record only:
 * SQS retries it after the visibility timeout and, after its last receive,
 * moves it to the dead-letter queue, whose depth the stack alarms on. The
 * `webhook-id` travels in the event, so every retry carries the same one.
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Logger } from "@aws-lambda-powertools/logger";
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import * as z from "zod";
import { InvalidInputError } from "../../core/errors.ts";
import { issueLines } from "../../core/issues.ts";
import { type DeliveryOptions, deliverToTenant } from "../notifications/delivery.ts";
import {
  type Clock,
  NOTIFICATION_TYPES,
  type Notification,
  type NotificationEndpoints,
  systemClock,
} from "../ports.ts";

/** What the handler needs; index.ts supplies it. */
export interface NotifierDeps {
  readonly endpoints: NotificationEndpoints;
  /** The URL policy and resolver every delivery checks with. */
  readonly delivery: Omit<DeliveryOptions, "nowMillis">;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The signatures' time (default the system's). */
  readonly clock?: Clock;
}

/** The EventBridge event a record carries: the notification is its `detail`. */
const ForwardedEvent = z.object({
  detail: z.object({
    tenant: z.string().min(1),
    id: z.string().min(1),
    body: z.object({
      type: z.enum(NOTIFICATION_TYPES),
      timestamp: z.string(),
      data: z.looseObject({ conversation: z.string() }),
    }),
  }),
});

/** The notification of a record's body, or why it is not one. */
export function notificationOf(body: string): Notification {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidInputError("the record's body is not JSON");
  }
  const parsed = ForwardedEvent.safeParse(json);
  if (!parsed.success) {
    throw new InvalidInputError(
      `the record's body is not a forwarded notification: ${issueLines(parsed.error.issues).join("; ")}`,
    );
  }
  return parsed.data.detail;
}

/** The handler, usable as a Lambda `SQSHandler`. */
export function createNotifierHandler(
  deps: NotifierDeps,
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const { logger, metrics } = deps;
  const clock = deps.clock ?? systemClock;

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? "0") || undefined;
    let notification: Notification;
    try {
      notification = notificationOf(record.body);
    } catch (error) {
      logger.error("notification.invalid_message", { message_id: record.messageId, error });
      metrics.addMetric("NotificationsFailed", MetricUnit.Count, 1);
      throw error;
    }
    const ids = {
      tenant: notification.tenant,
      webhook_id: notification.id,
      type: notification.body.type,
      conversation: notification.body.data.conversation,
      receive_count: receiveCount,
    };
    try {
      const outcome = await deliverToTenant(deps.endpoints, notification, {
        ...deps.delivery,
        nowMillis: clock.nowMillis(),
      });
      logger.info(`notification.${outcome}`, ids);
      if (outcome === "delivered") metrics.addMetric("NotificationsDelivered", MetricUnit.Count, 1);
    } catch (error) {
      logger.warn("notification.failed", { ...ids, error });
      metrics.addMetric("NotificationsFailed", MetricUnit.Count, 1);
      throw error;
    }
  };

  return async (event, context) => {
    if (context) logger.addContext(context);
    try {
      return await processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), {
        ...(context ? { context } : {}),
        throwOnFullBatchFailure: false,
      });
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}
