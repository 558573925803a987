/**
 * How every DynamoDB client of the service is configured to retry. The
 * stores (functions/store/*dynamodb.ts) retry nothing the SDK can retry:
 * they expect a client built with {@link dynamoClientConfig}, whose retry
 * strategy handles throttling and transient errors. The store's own retry
 * is for transaction conflicts only (dynamodb-conflicts.ts).
 */
import type { DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";

/**
 * The SDK retry settings of every DynamoDB client.
 *
 * - `retryMode: "adaptive"`: the standard strategy (exponential backoff with
 *   full jitter, 1 s base for throttling, a retry-token budget per client)
 *   plus client-side rate limiting once DynamoDB throttles, so one Lambda
 *   instance slows down instead of hammering a hot partition.
 * - `maxAttempts: 5`: the first send and 4 retries. Throttling backoff is
 *   capped at 1, 2, 4 and 8 s, so a call throttled throughout gives up after
 *   at most 15 s of waiting, inside the API function's 29 s timeout.
 */
export const DYNAMODB_RETRY = {
  retryMode: "adaptive",
  maxAttempts: 5,
} as const satisfies Pick<DynamoDBClientConfig, "retryMode" | "maxAttempts">;

/** `config` with the service's {@link DYNAMODB_RETRY} settings (which `config` may override). */
export function dynamoClientConfig(config: DynamoDBClientConfig = {}): DynamoDBClientConfig {
  return { ...DYNAMODB_RETRY, ...config };
}
