/** Errors of the evaluation queue adapters. Each keeps the underlying error as `cause`. */

/** A message could not be sent to (or persisted by) the queue. */
export class QueueError extends Error {
  override readonly name = "QueueError";

  constructor(message: string, options?: ErrorOptions) {
    const cause = options?.cause;
    const why =
      cause === undefined
        ? ""
        : ` (${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)})`;
    super(`${message}${why}`, options);
  }
}
