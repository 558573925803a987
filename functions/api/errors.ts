/**
 * Errors raised by the HTTP layer itself, and the one mapping from every
 * known error to an RFC 9457 problem (status, type, title, detail). Bad input
 * is never a 5xx.
 */
import { ConfigError } from "../../core/config.ts";
import { NoPolicyError } from "../../core/manual.ts";
import { EmptyRangeError, SpecError } from "../../core/spec.ts";
import {
  CompactionRequestError,
  ContentionError,
  ConversationNotFoundError,
  InvalidTurnError,
  SummarizerUnavailableError,
  TurnConflictError,
} from "../conversations/errors.ts";
import { EmptySummaryError } from "../ports.ts";
import { WriteTooLargeError } from "../store/errors.ts";
import { SummarizerError, SummaryTimeoutError } from "../summarizers/errors.ts";

/** A request whose body or parameters do not validate; `errors` locate each problem. */
export class RequestValidationError extends Error {
  override readonly name = "RequestValidationError";
  constructor(
    message: string,
    readonly errors: readonly { pointer: string; detail: string }[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Missing or unknown API key. */
export class UnauthorizedError extends Error {
  override readonly name = "UnauthorizedError";
}

/** A turn post without a valid webhook signature for a tenant that requires one. */
export class SignatureError extends Error {
  override readonly name = "SignatureError";
}

/** A body that is not sent as JSON. */
export class UnsupportedMediaTypeError extends Error {
  override readonly name = "UnsupportedMediaTypeError";
}

/** A body above the configured limit. */
export class PayloadTooLargeError extends Error {
  override readonly name = "PayloadTooLargeError";
}

/** An RFC 9457 problem document. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: unknown;
}

const problem = (
  status: number,
  slug: string,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {},
): Problem => ({
  type: `/problems/${slug}`,
  title,
  status,
  detail,
  ...extra,
});

/** Maps an error to its problem; unknown errors become an opaque 500. */
export function toProblem(error: unknown): Problem {
  if (error instanceof RequestValidationError) {
    return problem(
      400,
      "invalid-request",
      "Invalid request",
      error.message,
      error.errors.length > 0 ? { errors: error.errors } : {},
    );
  }
  if (error instanceof InvalidTurnError)
    return problem(400, "invalid-turn", "Invalid turn", error.message);
  if (error instanceof ConfigError) {
    return problem(400, "invalid-config", "Invalid configuration", error.message, {
      errors: error.issues.map((detail) => ({ detail })),
    });
  }
  if (error instanceof SpecError)
    return problem(400, "invalid-spec", "Invalid compaction spec", error.message);
  if (error instanceof NoPolicyError)
    return problem(400, "invalid-compaction", "Compaction without a policy", error.message);
  if (error instanceof EmptyRangeError)
    return problem(422, "empty-range", "Nothing to compact", error.message);
  if (error instanceof CompactionRequestError)
    return problem(422, "invalid-compaction", "Compaction cannot apply", error.message);
  if (error instanceof UnauthorizedError)
    return problem(401, "unauthorized", "Unauthorized", error.message);
  if (error instanceof SignatureError)
    return problem(401, "invalid-signature", "Invalid webhook signature", error.message);
  if (error instanceof ConversationNotFoundError)
    return problem(404, "not-found", "Conversation not found", error.message);
  if (error instanceof TurnConflictError) {
    return problem(409, "turn-conflict", "Turn conflict", error.message, {
      expected_turn: error.expectedTurn,
    });
  }
  if (error instanceof UnsupportedMediaTypeError)
    return problem(415, "unsupported-media-type", "Send JSON", error.message);
  if (error instanceof PayloadTooLargeError)
    return problem(413, "payload-too-large", "Payload too large", error.message);
  if (error instanceof SummarizerUnavailableError)
    return problem(422, "summarizer-unavailable", "No summarizer configured", error.message);
  if (error instanceof EmptySummaryError)
    return problem(502, "empty-summary", "The summarizer returned nothing", error.message);
  if (error instanceof SummaryTimeoutError)
    return problem(504, "summary-timeout", "The summarizer timed out", error.message);
  if (error instanceof SummarizerError)
    return problem(502, "summarizer-failed", "The summarizer failed", error.message);
  if (error instanceof WriteTooLargeError)
    return problem(422, "too-large-to-store", "Too large to store", error.message);
  if (error instanceof ContentionError)
    return problem(503, "contention", "Too many concurrent writes", error.message);
  return problem(
    500,
    "internal",
    "Internal error",
    "an unexpected error occurred; it has been logged",
  );
}
