/**
 * The deployed notification publisher: PutEvents onto the stack's
 * EventBridge bus (source {@link EVENT_SOURCE}, detail-type the
 * notification's type, detail the notification), where a rule feeds the
 * notifier's queue and AWS-side consumers may attach rules of their own.
 * Entries are sent at most 10 per call and at most 256 KB per call, sized as
 * EventBridge sizes them (size.ts). An entry EventBridge did not take fails
 * the call; the caller retries (the api, docs/architecture.md §16) or fails its
 * message so it is retried (the compactor), and every notification is put
 * again (same `webhook-id`).
 */
import { type EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { QueueError } from "../errors.ts";
import type { Notification, NotificationPublisher } from "../ports.ts";
import { EVENT_SOURCE, entryBytes, eventDetail, PUT_EVENTS_LIMIT_BYTES } from "./size.ts";

/** PutEvents takes at most this many entries per call. */
const MAX_ENTRIES = 10;

/** The notifications in calls of at most {@link MAX_ENTRIES} entries and {@link PUT_EVENTS_LIMIT_BYTES} bytes. */
function calls(notifications: readonly Notification[]): Notification[][] {
  const batches: Notification[][] = [];
  let batch: Notification[] = [];
  let bytes = 0;
  for (const notification of notifications) {
    const size = entryBytes(notification);
    if (size > PUT_EVENTS_LIMIT_BYTES) {
      throw new QueueError(
        `notification ${notification.id} is ${size} bytes, over EventBridge's ${PUT_EVENTS_LIMIT_BYTES}`,
      );
    }
    if (batch.length === MAX_ENTRIES || bytes + size > PUT_EVENTS_LIMIT_BYTES) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(notification);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

export class EventBridgePublisher implements NotificationPublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(notifications: readonly Notification[]): Promise<void> {
    for (const batch of calls(notifications)) {
      const answer = await this.client.send(
        new PutEventsCommand({
          Entries: batch.map((notification) => ({
            EventBusName: this.busName,
            Source: EVENT_SOURCE,
            DetailType: notification.body.type,
            Detail: eventDetail(notification),
          })),
        }),
      );
      if ((answer.FailedEntryCount ?? 0) > 0) {
        const failed = (answer.Entries ?? []).find((entry) => entry.ErrorCode);
        throw new QueueError(
          `EventBridge refused ${answer.FailedEntryCount} of ${batch.length} notifications (${failed?.ErrorCode}: ${failed?.ErrorMessage})`,
        );
      }
    }
  }
}
