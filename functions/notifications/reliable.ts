/**
 * A publisher that never fails its caller unless asked to (docs/architecture.md §16): a
 * notification reports a write that has happened (a reset's removed bands),
 * so a failed publish must not turn that write's answer into an error, nor
 * undo it. A failed attempt is retried after the project's full-jitter
 * backoff (backoff.ts); after the last one the notifications are logged as
 * `notification.publish_failed` (their ids, tenant and conversation) and
 * counted in the `NotificationsPublishFailed` metric, and the call resolves.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { type BackoffOptions, jitteredBackoff } from "../backoff.ts";
import type { Notification, NotificationPublisher } from "../ports.ts";

/** The backoff between attempts: short, as a request waits for it. */
export const PUBLISH_RETRY = { baseDelayMs: 100, maxDelayMs: 1_000 } as const;

/** Attempts before the notifications are given up (the SDK retries within each). */
export const PUBLISH_ATTEMPTS = 3;

/** Settings of {@link ReliablePublisher}; the backoff's clock and dice are injectable. */
export interface ReliablePublishing extends BackoffOptions {
  readonly attempts?: number;
  readonly logger?: Pick<Logger, "warn" | "error">;
  /** Where the given-up notifications are counted (flushed at once, as a single metric). */
  readonly metrics?: Pick<Metrics, "singleMetric">;
  /**
   * Rethrow the last error once given up (logged and counted first): for a
   * caller whose own retry publishes again, as the compactor's record does.
   */
  readonly rethrow?: boolean;
}

/**
 * Wraps a publisher so that `publish` always resolves (or, with `rethrow`,
 * fails only after its retries).
 *
 * @example
 * const notifier = new ReliablePublisher(new EventBridgePublisher(client, bus), { logger, metrics });
 * await notifier.publish(resetNotifications(ref, removed, Date.now())); // never throws
 */
export class ReliablePublisher implements NotificationPublisher {
  readonly #inner: NotificationPublisher;
  readonly #options: ReliablePublishing;
  readonly #backoff: (retry: number) => Promise<void>;

  constructor(inner: NotificationPublisher, options: ReliablePublishing = {}) {
    this.#inner = inner;
    this.#options = options;
    this.#backoff = jitteredBackoff(options, PUBLISH_RETRY);
  }

  /** Publishes, retrying; resolves once published or given up (logged and counted; rethrown with `rethrow`). */
  async publish(notifications: readonly Notification[]): Promise<void> {
    if (notifications.length === 0) return;
    const { logger, metrics } = this.#options;
    const attempts = this.#options.attempts ?? PUBLISH_ATTEMPTS;
    const first = notifications[0] as Notification;
    const ids = {
      tenant: first.tenant,
      conversation: first.body.data.conversation,
      types: [...new Set(notifications.map((notification) => notification.body.type))],
      webhook_ids: notifications.map((notification) => notification.id),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#inner.publish(notifications);
        return;
      } catch (error) {
        if (attempt >= attempts) {
          logger?.error("notification.publish_failed", { ...ids, attempt, error });
          metrics
            ?.singleMetric()
            .addMetric("NotificationsPublishFailed", MetricUnit.Count, notifications.length);
          if (this.#options.rethrow) throw error;
          return;
        }
        logger?.warn("notification.publish_retrying", { ...ids, attempt, error });
        await this.#backoff(attempt);
      }
    }
  }
}
