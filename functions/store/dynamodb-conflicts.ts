/**
 * What the DynamoDB conversation store makes of a failed write: a failed
 * condition (the caller's head is stale: never retried, reported as
 * {@link ConditionFailedError} by the store), or a conflict with another
 * transaction (retried here, bounded, with jittered backoff).
 *
 * Throttling and transient errors (5xx, timeouts, resets) are NOT retried
 * here: the SDK client retries them (see dynamodb-client.ts), and a retry
 * loop stacked on the SDK's would multiply the sends of one throttled call.
 * The SDK cannot retry what DynamoDB reports inside a
 * TransactionCanceledException, so those reasons are the ones handled here:
 * `TransactionConflict` (another transaction held an item), and the
 * throttling codes a transaction is cancelled with when one of its items is
 * throttled. A plain `TransactionConflictException` (a single-item write
 * that met a transaction on its item) is the same conflict and is retried
 * too; the SDK does not classify it as retryable.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { type BackoffOptions, jitteredBackoff } from "../backoff.ts";
import { ContentionError } from "../errors.ts";
import type { ConversationHead } from "../ports.ts";
import { toHead } from "./dynamodb-items.ts";

/** One entry of a TransactionCanceledException's `CancellationReasons`, per transaction item. */
export interface CancellationReason {
  /** `None`, `ConditionalCheckFailed`, `TransactionConflict`, `ThrottlingError`, ... */
  readonly Code?: string;
  /** DynamoDB's explanation. */
  readonly Message?: string;
  /** The item's old image, when the item asked for `ReturnValuesOnConditionCheckFailure`. */
  readonly Item?: Record<string, AttributeValue>;
}

/** Cancellation reasons a later identical transaction may pass. */
const RETRYABLE_REASONS = new Set([
  "TransactionConflict",
  "ProvisionedThroughputExceeded",
  "ThrottlingError",
]);

function errorName(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "name" in error
    ? String((error as { name: unknown }).name)
    : undefined;
}

/** The per-item reasons of a TransactionCanceledException (none for any other error). */
export function cancellationReasons(error: unknown): readonly (CancellationReason | undefined)[] {
  if (errorName(error) !== "TransactionCanceledException") return [];
  const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons;
  return reasons ?? [];
}

/** True when a write's condition failed (plain or inside a transaction). */
export function isConditionFailure(error: unknown): boolean {
  return (
    errorName(error) === "ConditionalCheckFailedException" ||
    cancellationReasons(error).some((reason) => reason?.Code === "ConditionalCheckFailed")
  );
}

/**
 * True for a conflict with another transaction (or a throttled item of a
 * transaction), which an identical later request may pass, and which the
 * SDK's retry strategy does not retry. Never true for a failed condition,
 * even one reported beside a conflict: that write can never succeed as is.
 */
export function isTransactionConflict(error: unknown): boolean {
  if (errorName(error) === "TransactionConflictException") return true;
  if (isConditionFailure(error)) return false;
  return cancellationReasons(error).some(
    (reason) => reason?.Code !== undefined && RETRYABLE_REASONS.has(reason.Code),
  );
}

/** Our retry of transaction conflicts: jittered exponential backoff (default 25 ms doubling to 1,000 ms), bounded. */
export interface ConflictRetryOptions extends BackoffOptions {
  /** Sends per write, the first included (default 8). */
  readonly maxAttempts?: number;
}

/** A function that runs a write, retrying it while it fails with a transaction conflict. */
export type ConflictRetry = <T>(operation: string, write: () => Promise<T>) => Promise<T>;

/**
 * A {@link ConflictRetry} with full-jitter exponential backoff: attempt `n`
 * sleeps a random time below `min(maxDelayMs, baseDelayMs * 2^(n-1))`. Each
 * attempt must be a fresh request: a cancelled transaction was not applied,
 * so sending it again (with a new ClientRequestToken) is safe. Past the
 * bound it throws {@link ContentionError} (503) with the last conflict as
 * its cause; any other error is thrown as is, at once.
 */
export function conflictRetry(options: ConflictRetryOptions = {}): ConflictRetry {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 8);
  const backoff = jitteredBackoff(options, { baseDelayMs: 25, maxDelayMs: 1_000 });
  return async (operation, write) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (!isTransactionConflict(error)) throw error;
        if (attempt >= maxAttempts) {
          const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          throw new ContentionError(
            `${operation} still failing after ${attempt} attempts (${what})`,
            {
              attempts: attempt,
              cause: error,
            },
          );
        }
        await backoff(attempt);
      }
    }
  };
}

/**
 * The head a transaction item's failed condition saw: the old image DynamoDB
 * returns with `ReturnValuesOnConditionCheckFailure: "ALL_OLD"`
 * (`undefined`: there was no head).
 */
export function failedHead(reason: CancellationReason | undefined): ConversationHead | undefined {
  return reason?.Item ? toHead(reason.Item) : undefined;
}
