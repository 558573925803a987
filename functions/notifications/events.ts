/**
 * The notifications of docs/architecture.md §16, built from what was stored: a band
 * the compactor wrote (`compaction.fired`, and `compaction.still_over_threshold`
 * when its own `trigger` audit says the view is still over the threshold) and
 * the bands a reset removed (`compactions.reset`). Everything in a
 * notification, its `webhook-id` included, comes from the stored band, so a
 * compactor that runs again for the same turn (at-least-once delivery)
 * publishes the very same message and receivers can drop the duplicate.
 */
import { createHash } from "node:crypto";
import type { Compaction } from "../../core/events.ts";
import type { ConversationRef, Notification, NotificationType } from "../ports.ts";

/**
 * The `webhook-id` of an event: a digest of its identity (tenant,
 * conversation, type, and what tells the event from every other one of the
 * conversation, e.g. the band's storage key and timestamp).
 */
export function notificationId(
  ref: ConversationRef,
  type: NotificationType,
  identity: readonly (string | number)[],
): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([ref.tenant, ref.conversation, type, ...identity]))
    .digest("base64url");
  return `msg_${digest.slice(0, 32)}`;
}

/**
 * The notifications of an automatic band stored under `key` (`AUTO#<turn>`):
 * `compaction.fired`, and `compaction.still_over_threshold` when the band
 * left the estimate above the threshold. Both carry the band with its
 * `trigger` audit and are stamped with the band's timestamp.
 */
export function firingNotifications(
  ref: ConversationRef,
  key: string,
  band: Compaction,
): Notification[] {
  const types: NotificationType[] = ["compaction.fired"];
  if (band.trigger && band.trigger.estimated_tokens_after > band.trigger.threshold)
    types.push("compaction.still_over_threshold");
  return types.map((type) => ({
    tenant: ref.tenant,
    id: notificationId(ref, type, [key, band.timestamp]),
    body: { type, timestamp: band.timestamp, data: { conversation: ref.conversation, band } },
  }));
}

/**
 * The notification of a reset that removed `removed` (none for a reset that
 * removed nothing). Its identity is the removed bands' timestamps, which no
 * other reset of the conversation can share (band timestamps only increase).
 */
export function resetNotifications(
  ref: ConversationRef,
  removed: readonly (Compaction & { readonly position: number })[],
  nowMillis: number,
): Notification[] {
  if (removed.length === 0) return [];
  const type = "compactions.reset";
  return [
    {
      tenant: ref.tenant,
      id: notificationId(
        ref,
        type,
        removed.map((band) => band.timestamp),
      ),
      body: {
        type,
        timestamp: new Date(nowMillis).toISOString(),
        data: { conversation: ref.conversation, removed },
      },
    },
  ];
}

/** Whether an endpoint subscribed to `type` (all events when it names none). */
export function wants(endpoint: { readonly events?: readonly NotificationType[] }, type: string) {
  return endpoint.events === undefined || endpoint.events.some((event) => event === type);
}
