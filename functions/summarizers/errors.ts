/**
 * Errors of the summarizer adapters. Every failure of a summary (the model's
 * service erred, timed out, answered nothing usable) is thrown, never turned
 * into a summary: the compactor's record then fails and is retried (and ends
 * in the DLQ after 5 receives), and a manual compaction answers with an error.
 * Nothing is committed either way.
 */
import { EmptySummaryError } from "../ports.ts";

/** An answer with no summary text (empty or whitespace only): the port's own error (the API answers 502). */
export { EmptySummaryError };

/** The summarizer's service failed or answered something unusable; `cause` is the underlying error. */
export class SummarizerError extends Error {
  override readonly name: string = "SummarizerError";
  /** The HTTP status the service answered with, when it answered. */
  readonly status: number | undefined;
  /** The model the summary was asked of. */
  readonly model: string | undefined;

  constructor(message: string, options: { cause?: unknown; status?: number; model?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.model = options.model;
  }
}

/** No answer within the adapter's timeout; the request was aborted. */
export class SummaryTimeoutError extends SummarizerError {
  override readonly name: string = "SummaryTimeoutError";
  /** The timeout that elapsed, in ms. */
  readonly timeoutMs: number;

  constructor(message: string, options: { timeoutMs: number; cause?: unknown; model?: string }) {
    super(message, options);
    this.timeoutMs = options.timeoutMs;
  }
}
