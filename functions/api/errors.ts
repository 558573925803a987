/**
 * Errors raised by the HTTP layer itself (a 401 is functions/errors.ts's
 * `UnauthorizedError`, which the webhook signature check raises too), and the
 * one mapping from an error to its RFC 9457 problem. Every
 * {@link AutocompactError} carries its status, type and title; only internal
 * faults (500) hide their message. Bad input is never a 5xx.
 */
import { AutocompactError, type ErrorOptions, type ProblemKind } from "../../core/errors.ts";

/**
 * The kinds of {@link RequestRejectedError}: a request refused for its form
 * (headers, size, encoding, timing) before its content is looked at.
 */
export const REJECTED = {
  /** A body that is not sent as JSON, or not identity-encoded. */
  unsupportedMediaType: { status: 415, slug: "unsupported-media-type", title: "Send JSON" },
  /** A body above the configured limit. */
  payloadTooLarge: { status: 413, slug: "payload-too-large", title: "Payload too large" },
  /** Request headers larger than the local server accepts (node:http's parser refused them). */
  headersTooLarge: { status: 431, slug: "headers-too-large", title: "Request headers too large" },
  /** Headers or body that did not arrive in time (node:http's `headersTimeout` or `requestTimeout`). */
  requestTimeout: { status: 408, slug: "request-timeout", title: "Request timeout" },
  /** A signed post whose `webhook-id` was already used, within the tolerance window, for another message. */
  webhookIdReused: { status: 409, slug: "webhook-id-reused", title: "Webhook id already used" },
} as const satisfies Record<string, ProblemKind>;

/** A request refused for its form before its content is looked at: one of {@link REJECTED}. */
export class RequestRejectedError extends AutocompactError {
  override readonly name = "RequestRejectedError";
  constructor(
    kind: (typeof REJECTED)[keyof typeof REJECTED],
    message: string,
    options: Omit<ErrorOptions, "slug" | "title"> = {},
  ) {
    super(message, kind, options);
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

/** The headers of a problem answer: its content type and those the error carries (`WWW-Authenticate`, …). */
export function problemHeaders(error: unknown): Record<string, string> {
  const carried =
    error instanceof AutocompactError && error.status !== 500 ? error.responseHeaders() : {};
  return { ...carried, "content-type": "application/problem+json" };
}
