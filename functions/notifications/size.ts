/**
 * How big a notification may be (docs/architecture.md §16), the one home of
 * that rule: every notification is sized as the EventBridge entry it becomes
 * on AWS, so the same bodies go out on AWS (PutEvents) and locally (the
 * webhook POST, whose body is smaller than the entry's detail).
 *
 * EventBridge sizes a PutEvents entry as the UTF-8 bytes of `Source`,
 * `DetailType` and `Detail`, each of `Resources`, and 14 bytes for `Time`
 * when set (AWS, "Calculating PutEvents event entry size"); an entry, and the
 * entries of one call together, must stay within 256 KB (262,144 bytes).
 */
import type { Notification } from "../ports.ts";

/** The `source` of every event autocompact puts on its bus. */
export const EVENT_SOURCE = "autocompact";

/** PutEvents' limit on one entry, and on the entries of one call together. */
export const PUT_EVENTS_LIMIT_BYTES = 262_144;

/**
 * What a notification's entry may take: the limit less room for the
 * envelope (`version`, `id`, `account`, `time`, `region`, `resources`, under
 * 400 bytes) that the bus's rule adds when it forwards the event to the
 * notifier's queue, so the forwarded message fits a 256 KiB queue too.
 */
export const NOTIFICATION_BUDGET_BYTES = PUT_EVENTS_LIMIT_BYTES - 1_024;

/** The entry's `Time` counts 14 bytes when set: we never set it, but count it anyway. */
const TIME_BYTES = 14;

/** The `Detail` of a notification's entry: the whole notification, so the notifier gets its tenant and id. */
export function eventDetail(notification: Notification): string {
  return JSON.stringify(notification);
}

/** The size EventBridge counts for the notification's PutEvents entry (no `Resources`). */
export function entryBytes(notification: Notification): number {
  return (
    TIME_BYTES +
    Buffer.byteLength(EVENT_SOURCE) +
    Buffer.byteLength(notification.body.type) +
    Buffer.byteLength(eventDetail(notification))
  );
}

/** Whether the notification's entry is within {@link NOTIFICATION_BUDGET_BYTES}. */
export function fitsBudget(notification: Notification): boolean {
  return entryBytes(notification) <= NOTIFICATION_BUDGET_BYTES;
}
