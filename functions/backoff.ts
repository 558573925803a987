/**
 * Full-jitter exponential backoff, the one home of both of our own retries
 * (the DynamoDB store's transaction conflicts, the conversation log's lost
 * races): before retry `n` (1 for the first) wait a random time below
 * `min(maxDelayMs, baseDelayMs * 2^(n-1))`, so writers that collided once
 * spread out instead of colliding again.
 */

/** The backoff's bounds, and its clock and dice for tests. */
export interface BackoffOptions {
  /** Upper bound of the first wait; doubles per retry. */
  readonly baseDelayMs?: number;
  /** Cap of one wait. */
  readonly maxDelayMs?: number;
  /** Injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Injectable for tests; in [0, 1). */
  readonly random?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits before retry `retry` (1-based); `defaults` give the bounds the options leave out. */
export function jitteredBackoff(
  options: BackoffOptions,
  defaults: { readonly baseDelayMs: number; readonly maxDelayMs: number },
): (retry: number) => Promise<void> {
  const baseDelayMs = options.baseDelayMs ?? defaults.baseDelayMs;
  const maxDelayMs = options.maxDelayMs ?? defaults.maxDelayMs;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  return (retry) =>
    sleep(Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1))));
}
