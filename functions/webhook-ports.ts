/**
 * The ports of webhooks: the receipts of signed turn posts coming in
 * (Standard Webhooks' `webhook-id`s), and the notifications going out to a
 * tenant's endpoint (docs/architecture.md §16). Re-exported by ports.ts, which
 * holds the service's other ports.
 */

/**
 * What {@link WebhookReceipts.remember} found: no unexpired receipt of the id
 * (this delivery's is now kept), one for the same message (a redelivery), or
 * one for a different one (the id was already used for another message).
 */
export type WebhookReceiptMatch = "new" | "same" | "different";

/** One signed delivery, as {@link WebhookReceipts} keeps it. */
export interface WebhookReceipt {
  readonly tenant: string;
  /** The `webhook-id` header: the message's id, the same on every redelivery. */
  readonly id: string;
  /** SHA-256 (hex) of the message: what it posts to and its body exactly as received. */
  readonly digest: string;
}

/**
 * The `webhook-id`s of signed turn posts, kept per tenant for at least the
 * signature tolerance window, so a redelivery of a message is told from a
 * reuse of its id for another one. Strongly consistent: of concurrent first
 * deliveries of one id, exactly one finds it "new".
 */
export interface WebhookReceipts {
  /**
   * Keeps `receipt` until `expiresAtSeconds` (Unix seconds) unless an
   * unexpired receipt of the same tenant and id is already kept (one whose
   * expiry is after `nowSeconds`); then that one stays as it is and its body
   * digest decides between "same" and "different".
   */
  remember(
    receipt: WebhookReceipt,
    nowSeconds: number,
    expiresAtSeconds: number,
  ): Promise<WebhookReceiptMatch>;
}

/** The events a tenant's notification endpoint can receive (docs/architecture.md §16). */
export const NOTIFICATION_TYPES = [
  "compaction.fired",
  "compaction.still_over_threshold",
  "compactions.reset",
] as const;

/** One of {@link NOTIFICATION_TYPES}. */
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** The body of a notification, as its receiver gets it. */
export interface NotificationBody {
  readonly type: NotificationType;
  /** When the event happened (ISO 8601): a band's own timestamp, so a redelivery carries the same body. */
  readonly timestamp: string;
  /**
   * The conversation and the band (with its `trigger` audit), or the bands a reset removed;
   * references instead of summary texts, with `truncated: true`, when they would not fit (size.ts).
   */
  readonly data: { readonly conversation: string } & Readonly<Record<string, unknown>>;
}

/** A notification for one tenant: a Standard Webhooks message once signed. */
export interface Notification {
  readonly tenant: string;
  /** The `webhook-id`: derived from the event's identity, so every redelivery keeps it. */
  readonly id: string;
  readonly body: NotificationBody;
}

/**
 * Publishes notifications: onto the stack's EventBridge bus on AWS (a rule
 * feeds the notifier function), straight to the endpoint locally. Resolves
 * once they are accepted for delivery (not delivered); throws when they are
 * not, so the caller's message is retried and they are published again.
 */
export interface NotificationPublisher {
  publish(notifications: readonly Notification[]): Promise<void>;
}

/** A tenant's notification endpoint: where to POST, and which events (all when absent). */
export interface NotificationEndpoint {
  readonly url: string;
  readonly events?: readonly NotificationType[];
}

/** A stored endpoint with its outbound signing secret (`whsec_…`). */
export interface SignedEndpoint extends NotificationEndpoint {
  readonly secret: string;
}

/**
 * Each tenant's one notification endpoint and its signing secret, stored
 * sealed like the inbound webhook secrets (functions/secrets/).
 */
export interface NotificationEndpoints {
  getEndpoint(tenant: string): Promise<SignedEndpoint | undefined>;
  /** Replaces the tenant's endpoint (and its secret). */
  putEndpoint(tenant: string, endpoint: SignedEndpoint): Promise<void>;
  /** Removes it; false when there was none. */
  deleteEndpoint(tenant: string): Promise<boolean>;
}
