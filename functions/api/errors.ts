/**
 * Errors raised by the HTTP layer itself, and the one mapping from an error
 * to its RFC 9457 problem. Every {@link AutocompactError} carries its status,
 * type and title; only internal faults (500) hide their message. Bad input is
 * never a 5xx.
 */
import { AutocompactError, type ErrorOptions } from "../../core/errors.ts";

/** The problem variant of an {@link UnauthorizedError} for a missing or wrong webhook signature. */
export const INVALID_SIGNATURE = { slug: "invalid-signature", title: "Invalid webhook signature" };

/** Missing or unknown API key, or (`invalid-signature`) no valid webhook signature (401). */
export class UnauthorizedError extends AutocompactError {
  override readonly name = "UnauthorizedError";
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, { status: 401, slug: "unauthorized", title: "Unauthorized" }, options);
  }
}

/** A body that is not sent as JSON (415). */
export class UnsupportedMediaTypeError extends AutocompactError {
  override readonly name = "UnsupportedMediaTypeError";
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, { status: 415, slug: "unsupported-media-type", title: "Send JSON" }, options);
  }
}

/** A body above the configured limit (413). */
export class PayloadTooLargeError extends AutocompactError {
  override readonly name = "PayloadTooLargeError";
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, { status: 413, slug: "payload-too-large", title: "Payload too large" }, options);
  }
}

/** An RFC 9457 problem document. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: unknown;
}

/** Maps an error to its problem; an internal fault or an unknown error becomes an opaque 500. */
export function toProblem(error: unknown): Problem {
  if (error instanceof AutocompactError && error.status !== 500) {
    return {
      type: error.type,
      title: error.title,
      status: error.status,
      detail: error.message,
      ...error.problemExtensions(),
    };
  }
  return {
    type: "/problems/internal",
    title: "Internal error",
    status: 500,
    detail: "an unexpected error occurred; it has been logged",
  };
}
