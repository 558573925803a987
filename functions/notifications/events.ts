/**
 * The notifications of docs/architecture.md §16, built from what was stored: a band
 * the compactor wrote (`compaction.fired`, and `compaction.still_over_threshold`
 * when its own `trigger` audit says the view is still over the threshold) and
 * the bands a reset removed (`compactions.reset`). Everything in a
 * notification, its `webhook-id` included, comes from the stored band, so a
 * compactor that runs again for the same turn (at-least-once delivery)
 * publishes the very same message and receivers can drop the duplicate.
 * A body too big for the budget of size.ts carries references instead of
 * texts (`truncated: true`), for every type, on AWS and locally alike.
 */
import { createHash } from "node:crypto";
import type { Compaction } from "../../core/events.ts";
import type { ConversationRef, Notification, NotificationType } from "../ports.ts";
import { fitsBudget } from "./size.ts";

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

/** What a notification's `data` holds besides its conversation. */
type Data = Readonly<Record<string, unknown>>;

/**
 * A notification of `type` carrying the first of `data`'s forms (the full
 * one first, then smaller ones) whose entry fits the budget (size.ts); the
 * last form is taken whatever its size. The id depends on the identity only,
 * so every form of an event has the same `webhook-id`.
 */
function fitted(
  ref: ConversationRef,
  type: NotificationType,
  identity: readonly (string | number)[],
  timestamp: string,
  data: readonly (() => Data)[],
): Notification {
  const id = notificationId(ref, type, identity);
  const build = (form: () => Data): Notification => ({
    tenant: ref.tenant,
    id,
    body: { type, timestamp, data: { conversation: ref.conversation, ...form() } },
  });
  let chosen: Notification | undefined;
  for (const form of data) {
    chosen = build(form);
    if (fitsBudget(chosen)) break;
  }
  return chosen as Notification;
}

type Positioned = Compaction & { readonly position?: number };

/** What names a band and its range: a reference a receiver can find it by, with no text in it. */
function bandKey(band: Positioned) {
  return {
    type: "compaction",
    ...(band.position === undefined ? {} : { position: band.position }),
    timestamp: band.timestamp,
    from_turn: band.from_turn,
    to_turn: band.to_turn,
    source: band.source,
  };
}

/** A band without its summary text (its length instead) and without extra keys. */
function bandReference(band: Positioned) {
  return {
    ...bandKey(band),
    ...(band.summary ? { summary_chars: band.summary.summary.length } : {}),
    ...(band.reasoning ? { reasoning: band.reasoning } : {}),
    ...(band.tool_calls ? { tool_calls: band.tool_calls } : {}),
    ...(band.trigger ? { trigger: band.trigger } : {}),
  };
}

/**
 * The notifications of an automatic band stored under `key` (`AUTO#<turn>`):
 * `compaction.fired`, and `compaction.still_over_threshold` when the band
 * left the estimate above the threshold. Both carry the band with its
 * `trigger` audit and are stamped with the band's timestamp; a band too big
 * for a notification is sent as a reference (`truncated: true`, no summary
 * text), which `GET …/compactions` completes.
 */
export function firingNotifications(
  ref: ConversationRef,
  key: string,
  band: Compaction,
): Notification[] {
  const types: NotificationType[] = ["compaction.fired"];
  if (band.trigger && band.trigger.estimated_tokens_after > band.trigger.threshold)
    types.push("compaction.still_over_threshold");
  return types.map((type) =>
    fitted(ref, type, [key, band.timestamp], band.timestamp, [
      () => ({ band }),
      () => ({ band: bandReference(band), truncated: true }),
      () => ({ band: bandKey(band), truncated: true }),
    ]),
  );
}

/**
 * The notification of a reset that removed `removed` (none for a reset that
 * removed nothing). Its identity is the removed bands' timestamps, which no
 * other reset of the conversation can share (band timestamps only increase).
 * Bands too many or too big for one notification are sent as references
 * (`truncated: true`, `removed_count`, positions and ranges, no summary
 * text); if even those do not fit, as many as fit, in order.
 */
export function resetNotifications(
  ref: ConversationRef,
  removed: readonly (Compaction & { readonly position: number })[],
  nowMillis: number,
): Notification[] {
  if (removed.length === 0) return [];
  const type = "compactions.reset";
  const identity = removed.map((band) => band.timestamp);
  const timestamp = new Date(nowMillis).toISOString();
  const references = (bands: readonly Positioned[], of: (band: Positioned) => Data) => () => ({
    removed: bands.map(of),
    removed_count: removed.length,
    truncated: true,
  });
  const full = fitted(ref, type, identity, timestamp, [
    () => ({ removed }),
    references(removed, bandReference),
    references(removed, bandKey),
  ]);
  if (fitsBudget(full)) return [full];
  // The longest prefix whose keys fit (sizes grow with the prefix): a binary search.
  let fits = 0;
  let over = removed.length;
  while (over - fits > 1) {
    const middle = Math.floor((fits + over) / 2);
    const candidate = fitted(ref, type, identity, timestamp, [
      references(removed.slice(0, middle), bandKey),
    ]);
    if (fitsBudget(candidate)) fits = middle;
    else over = middle;
  }
  return [fitted(ref, type, identity, timestamp, [references(removed.slice(0, fits), bandKey)])];
}

/** Whether an endpoint subscribed to `type` (all events when it names none). */
export function wants(endpoint: { readonly events?: readonly NotificationType[] }, type: string) {
  return endpoint.events === undefined || endpoint.events.some((event) => event === type);
}
