/**
 * Errors of the service around core: what ports and adapters raise (a stale
 * write, a summarizer failure, stored data that does not read back) and what
 * the use cases answer with (not found, turn conflict, contention), and the
 * unauthorized (no valid API key or webhook signature). All are
 * {@link AutocompactError}s (core/errors.ts), so each carries its HTTP answer;
 * an internal fault (status 500) never shows its message to a client.
 */
import { AutocompactError, type ErrorOptions } from "../core/errors.ts";

const INTERNAL = { status: 500, slug: "internal", title: "Internal error" } as const;

/**
 * An internal fault (500): its own class names what went wrong in the logs,
 * and the client is told only "Internal error".
 */
abstract class InternalError extends AutocompactError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, INTERNAL, options);
  }
}

/** The problem variant of an {@link UnauthorizedError} for a missing or wrong webhook signature. */
export const INVALID_SIGNATURE = { slug: "invalid-signature", title: "Invalid webhook signature" };

/** The challenge every 401 carries (RFC 9110 §11.6.1): API keys are bearer tokens (RFC 6750). */
export const BEARER_CHALLENGE = 'Bearer realm="autocompact"';

/**
 * Missing or unknown API key, or (`invalid-signature`) no valid webhook
 * signature (401). The answer carries `WWW-Authenticate: <challenge>`
 * ({@link BEARER_CHALLENGE} unless a more precise one is given).
 */
export class UnauthorizedError extends AutocompactError {
  override readonly name = "UnauthorizedError";
  readonly challenge: string;
  constructor(message: string, options: ErrorOptions & { challenge?: string } = {}) {
    super(message, { status: 401, slug: "unauthorized", title: "Unauthorized" }, options);
    this.challenge = options.challenge ?? BEARER_CHALLENGE;
  }

  override responseHeaders(): Record<string, string> {
    return { "WWW-Authenticate": this.challenge };
  }
}

/** The posted turn does not fit the stored stream (a gap, or different content for a stored turn). */
export class TurnConflictError extends AutocompactError {
  override readonly name = "TurnConflictError";
  constructor(
    message: string,
    /** The turn the conversation expects next. */
    readonly expectedTurn: number,
    options: ErrorOptions = {},
  ) {
    super(message, { status: 409, slug: "turn-conflict", title: "Turn conflict" }, options);
  }

  override problemExtensions(): Record<string, unknown> {
    return { expected_turn: this.expectedTurn };
  }
}

/** No conversation with that id for this tenant (another tenant's is not found either). */
export class NotFoundError extends AutocompactError {
  override readonly name = "NotFoundError";
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, { status: 404, slug: "not-found", title: "Conversation not found" }, options);
  }
}

/** Optimistic or transactional writes kept losing races; the caller may retry later (503). */
export class ContentionError extends AutocompactError {
  override readonly name = "ContentionError";
  /** How many times the write was tried, when one bounded retry gave up. */
  readonly attempts: number | undefined;
  /** The `Retry-After` the answer carries, in seconds. */
  readonly retryAfterSeconds: number;

  constructor(
    message: string,
    options: ErrorOptions & { attempts?: number; retryAfterSeconds?: number } = {},
  ) {
    super(
      message,
      { status: 503, slug: "contention", title: "Too many concurrent writes" },
      options,
    );
    this.attempts = options.attempts;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }

  override responseHeaders(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/** The local runtime listens before its database is up (a busy port fails at once); until then it answers this (503). */
export class ServiceStartingError extends AutocompactError {
  override readonly name = "ServiceStartingError";
  constructor(options: ErrorOptions = {}) {
    super(
      "the service is starting: retry in a second",
      { status: 503, slug: "starting", title: "Starting" },
      options,
    );
  }

  override responseHeaders(): Record<string, string> {
    return { "Retry-After": "1" };
  }
}

/**
 * A read asked for the view as evaluated after a turn (`after_turn`) and the
 * wait ran out before an evaluation had decided on a state holding it (503
 * with `Retry-After`): an older view is never handed back as if it were current.
 */
export class EvaluationPendingError extends AutocompactError {
  override readonly name = "EvaluationPendingError";

  constructor(
    message: string,
    /** The turn the read waits for. */
    readonly afterTurn: number,
    /** How far evaluations have finished, stale skips included (`evaluated_through`), and decided. */
    readonly reached: {
      readonly evaluated_through: number | null;
      readonly decided_through: number | null;
    },
    readonly retryAfterSeconds = 1,
  ) {
    super(message, {
      status: 503,
      slug: "evaluation-pending",
      title: "The evaluation of that turn has not finished",
    });
  }

  override problemExtensions(): Record<string, unknown> {
    return { after_turn: this.afterTurn, ...this.reached };
  }

  override responseHeaders(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/**
 * The summarizer's service failed, timed out (504) or answered something
 * unusable (502); `cause` is the underlying error. A summary failure is
 * thrown, never turned into a summary: nothing is committed from it.
 */
export class SummarizerError extends AutocompactError {
  override readonly name: string = "SummarizerError";
  /** The HTTP status the summarizer's service answered with, when it answered. */
  readonly upstreamStatus: number | undefined;
  /** The model the summary was asked of. */
  readonly model: string | undefined;
  /** The timeout that elapsed, in ms, when the request was aborted for it. */
  readonly timeoutMs: number | undefined;

  constructor(
    message: string,
    options: ErrorOptions & { upstreamStatus?: number; model?: string; timeoutMs?: number } = {},
  ) {
    super(
      message,
      options.timeoutMs === undefined
        ? { status: 502, slug: "summarizer-failed", title: "The summarizer failed" }
        : { status: 504, slug: "summary-timeout", title: "The summarizer timed out" },
      options,
    );
    this.upstreamStatus = options.upstreamStatus;
    this.model = options.model;
    this.timeoutMs = options.timeoutMs;
  }
}

/** A summarizer answered with no text (empty or blank): the summarizer port's contract. */
export class EmptySummaryError extends SummarizerError {
  override readonly name = "EmptySummaryError";
  constructor(message: string, options: { cause?: unknown; model?: string } = {}) {
    super(message, { ...options, slug: "empty-summary", title: "The summarizer returned nothing" });
  }
}

/** A conditional write lost a race or found different state: re-read and decide again. */
export class ConditionFailedError extends InternalError {
  override readonly name = "ConditionFailedError";
}

/**
 * Stored data that does not read back (a turn's chunks missing or not
 * matching their hash, a queue journal that is not JSON). Never expected:
 * it means the data was changed outside autocompact.
 */
export class CorruptDataError extends InternalError {
  override readonly name = "CorruptDataError";
}

/** The in-process or SQS queue could not take, keep or hand over a message. */
export class QueueError extends InternalError {
  override readonly name = "QueueError";
  /** The message ends with the cause's name and message, so one log line says why. */
  constructor(message: string, options: ErrorOptions = {}) {
    const cause = options.cause;
    const why =
      cause === undefined
        ? ""
        : ` (${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)})`;
    super(`${message}${why}`, options);
  }
}

/** The two 409s of an `Idempotency-Key` (functions/conversations/idempotency.ts). */
export const IDEMPOTENCY_CONFLICTS = {
  /** The key was already used for another request (another body, or dry run or not). */
  reused: { status: 409, slug: "idempotency-key-reused", title: "Idempotency key already used" },
  /** The first request under the key has not answered yet. */
  inProgress: {
    status: 409,
    slug: "idempotency-key-in-progress",
    title: "Request under this idempotency key still running",
  },
} as const;

/** A request whose `Idempotency-Key` cannot be honoured: one of {@link IDEMPOTENCY_CONFLICTS}. */
export class IdempotencyConflictError extends AutocompactError {
  override readonly name = "IdempotencyConflictError";
  readonly #retryAfter: boolean;
  constructor(
    kind: (typeof IDEMPOTENCY_CONFLICTS)[keyof typeof IDEMPOTENCY_CONFLICTS],
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message, kind, options);
    this.#retryAfter = kind === IDEMPOTENCY_CONFLICTS.inProgress;
  }

  override responseHeaders(): Record<string, string> {
    return this.#retryAfter ? { "Retry-After": "1" } : {};
  }
}

/**
 * The service cannot start as configured: an invalid environment variable
 * (the message names it), Java missing for DynamoDB Local, or DynamoDB Local
 * not answering. Said in one line, never with a stack trace.
 */
export class SetupError extends InternalError {
  override readonly name = "SetupError";
}

/**
 * A tenant over one of its per-process limits (functions/api/limits.ts): its
 * request rate, or its concurrent waiting reads (429 with `Retry-After`).
 */
export class RateLimitedError extends AutocompactError {
  override readonly name = "RateLimitedError";
  constructor(
    message: string,
    /** Which limit: `requests_per_second` or `waiting_reads`. */
    readonly limit: "requests_per_second" | "waiting_reads",
    /** The `Retry-After` the answer carries, in whole seconds (at least 1). */
    readonly retryAfterSeconds: number,
  ) {
    super(message, { status: 429, slug: "rate-limited", title: "Too many requests" });
  }

  override problemExtensions(): Record<string, unknown> {
    return { limit: this.limit, retry_after: this.retryAfterSeconds };
  }

  override responseHeaders(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/**
 * A manual or dry-run summary refused: the tenant's summary tokens of the
 * (UTC) day are used up (429 with `Retry-After` until the day resets).
 */
export class SummaryBudgetError extends AutocompactError {
  override readonly name = "SummaryBudgetError";
  constructor(
    message: string,
    /** The day's budget and what was used of it, in tokens. */
    readonly budget: { readonly limit: number; readonly used: number },
    /** When the budget resets (the next UTC midnight), ms since the epoch. */
    readonly resetsAtMs: number,
    /** Now, ms since the epoch: `Retry-After` is counted from it. */
    nowMs: number,
  ) {
    super(message, { status: 429, slug: "summary-budget", title: "Summary budget used up" });
    this.retryAfterSeconds = Math.max(1, Math.ceil((resetsAtMs - nowMs) / 1000));
  }

  /** Seconds until the budget resets (at least 1). */
  readonly retryAfterSeconds: number;

  override problemExtensions(): Record<string, unknown> {
    return {
      summary_tokens_per_day: this.budget.limit,
      summary_tokens_used: this.budget.used,
      resets_at: new Date(this.resetsAtMs).toISOString(),
    };
  }

  override responseHeaders(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/**
 * A paged read's cursor given for another life or compactions version of the
 * conversation (409): the pages already read may not join up with the next
 * ones, so the read starts again from the first page.
 */
export class StaleCursorError extends AutocompactError {
  override readonly name = "StaleCursorError";
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, { status: 409, slug: "stale-cursor", title: "Cursor outdated" }, options);
  }
}
