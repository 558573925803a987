/**
 * The local runtime's notification publisher: no bus and no queue, it
 * delivers each notification itself, in the background, retrying a failed
 * attempt after a full-jitter backoff capped at 30 s (docs/architecture.md §16), so a
 * receiver that comes back gets everything within a minute. Every attempt
 * reads the tenant's endpoint as registered then (a removed endpoint stops
 * the retries). Pending deliveries live in memory: a restart drops them.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { type BackoffOptions, jitteredBackoff } from "../backoff.ts";
import type { Notification, NotificationEndpoints, NotificationPublisher } from "../ports.ts";
import { deliverToTenant } from "./delivery.ts";
import type { Resolver, UrlPolicy } from "./url-safety.ts";

/** The backoff between attempts: the cap is what bounds the wait after a receiver recovers. */
export const LOCAL_RETRY = { baseDelayMs: 500, maxDelayMs: 30_000 } as const;

/** Attempts before a notification is given up (about 20 minutes at the cap). */
export const LOCAL_MAX_ATTEMPTS = 40;

/** Settings of {@link LocalNotificationDelivery}; the backoff's clock and dice are injectable. */
export interface LocalDeliveryOptions extends BackoffOptions {
  readonly endpoints: NotificationEndpoints;
  readonly policy: UrlPolicy;
  readonly resolve?: Resolver;
  readonly timeoutMs?: number;
  readonly maxAttempts?: number;
  readonly logger?: Pick<Logger, "info" | "warn" | "error">;
}

/** A timer that does not keep the process alive (a stopped runtime exits). */
const unrefSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class LocalNotificationDelivery implements NotificationPublisher {
  readonly #options: LocalDeliveryOptions;
  readonly #backoff: (retry: number) => Promise<void>;
  readonly #pending = new Set<Promise<void>>();
  #stopped = false;

  constructor(options: LocalDeliveryOptions) {
    this.#options = options;
    this.#backoff = jitteredBackoff({ sleep: unrefSleep, ...options }, LOCAL_RETRY);
  }

  /** Starts delivering each notification; resolves at once. */
  async publish(notifications: readonly Notification[]): Promise<void> {
    for (const notification of notifications) {
      const run = this.#deliver(notification).finally(() => this.#pending.delete(run));
      this.#pending.add(run);
    }
  }

  /** Resolves once every delivery started so far has succeeded or been given up. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  /** Stops retrying: pending deliveries end after their current attempt or wait. */
  stop(): void {
    this.#stopped = true;
  }

  async #deliver(notification: Notification): Promise<void> {
    const { logger } = this.#options;
    const maxAttempts = this.#options.maxAttempts ?? LOCAL_MAX_ATTEMPTS;
    const ids = { tenant: notification.tenant, webhook_id: notification.id };
    for (let attempt = 1; !this.#stopped; attempt++) {
      try {
        const outcome = await deliverToTenant(this.#options.endpoints, notification, {
          policy: this.#options.policy,
          ...(this.#options.resolve ? { resolve: this.#options.resolve } : {}),
          ...(this.#options.timeoutMs ? { timeoutMs: this.#options.timeoutMs } : {}),
        });
        logger?.info(`notification.${outcome}`, { ...ids, type: notification.body.type, attempt });
        return;
      } catch (error) {
        if (attempt >= maxAttempts) {
          logger?.error("notification.given_up", { ...ids, attempt, error });
          return;
        }
        logger?.warn("notification.retrying", { ...ids, attempt, error });
        await this.#backoff(attempt);
      }
    }
  }
}
