/**
 * Errors the DynamoDB store adapter adds to the port's own
 * {@link ConditionFailedError}. Each keeps the underlying error as `cause`.
 */

/**
 * A transaction conflict persisted past the store's retry bound. (Throttling
 * past the SDK's bound surfaces as the SDK's own error, e.g. ThrottlingException.)
 */
export class RetriesExhaustedError extends Error {
  override readonly name = "RetriesExhaustedError";
  /** How many times the store sent the request. */
  readonly attempts: number;

  constructor(operation: string, attempts: number, options: ErrorOptions) {
    const cause = options.cause;
    const what = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`${operation} still failing after ${attempts} attempts (${what})`, options);
    this.attempts = attempts;
  }
}

/**
 * A committed turn's events could not be read back: chunks missing or not
 * matching the hash its TURN item recorded. Never expected; means the table
 * was modified outside the adapter.
 */
export class CorruptTurnError extends Error {
  override readonly name = "CorruptTurnError";
}

/** An identifier or number that cannot be stored as a key (lone UTF-16 surrogate, turn out of range). */
export class InvalidKeyError extends Error {
  override readonly name = "InvalidKeyError";
}

/** A write that cannot fit DynamoDB's limits (items per transaction, bytes per item). */
export class WriteTooLargeError extends Error {
  override readonly name = "WriteTooLargeError";
}
