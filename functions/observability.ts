/**
 * The names operators find the service by, in one place for the functions,
 * the local runtime and the stack's dashboard, alarms and saved queries.
 */

/** The EMF namespace of the compactor's metrics. */
export const METRICS_NAMESPACE = "Autocompact";

/** Powertools `serviceName` of each function: the `service` key of its log lines and of its metrics. */
export const SERVICE_NAMES = {
  api: "autocompact-api",
  compactor: "autocompact-compactor",
  notifier: "autocompact-notifier",
} as const;
