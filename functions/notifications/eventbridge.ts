/**
 * The deployed notification publisher: PutEvents onto the stack's
 * EventBridge bus (source {@link EVENT_SOURCE}, detail-type the
 * notification's type, detail the notification), where a rule feeds the
 * notifier's queue and AWS-side consumers may attach rules of their own.
 * An entry EventBridge did not take fails the call, so the caller's message
 * is retried and every notification is put again (same `webhook-id`).
 */
import { type EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { QueueError } from "../errors.ts";
import type { Notification, NotificationPublisher } from "../ports.ts";

/** The `source` of every event autocompact puts on its bus. */
export const EVENT_SOURCE = "autocompact";

/** PutEvents takes at most this many entries per call. */
const MAX_ENTRIES = 10;

export class EventBridgePublisher implements NotificationPublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(notifications: readonly Notification[]): Promise<void> {
    for (let start = 0; start < notifications.length; start += MAX_ENTRIES) {
      const batch = notifications.slice(start, start + MAX_ENTRIES);
      const answer = await this.client.send(
        new PutEventsCommand({
          Entries: batch.map((notification) => ({
            EventBusName: this.busName,
            Source: EVENT_SOURCE,
            DetailType: notification.body.type,
            Detail: JSON.stringify(notification),
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
