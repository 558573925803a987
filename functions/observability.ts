/**
 * The names operators find the service by, in one place for the functions,
 * the local runtime and the stack's dashboard, alarms and saved queries.
 */

/**
 * Why the compactor's delivery guard skipped a message before the trigger
 * decided: with core's `SKIP_REASONS`, the values of the `reason` dimension of
 * its `Skipped` metric (the stack's alarms and dashboard list them all).
 */
export const DELIVERY_SKIPS = ["stale", "already_evaluated", "unknown_turn"] as const;

/** One of {@link DELIVERY_SKIPS}. */
export type DeliverySkip = (typeof DELIVERY_SKIPS)[number];

/** The EMF namespace of every function's metrics (the compactor's, the notifier's, the api's). */
export const METRICS_NAMESPACE = "Autocompact";

/** Powertools `serviceName` of each function: the `service` key of its log lines and of its metrics. */
export const SERVICE_NAMES = {
  api: "autocompact-api",
  compactor: "autocompact-compactor",
  notifier: "autocompact-notifier",
} as const;
