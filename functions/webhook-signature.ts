/**
 * Standard Webhooks signing and verification, the one home of both: the API
 * verifies signed posts, the notifier signs its deliveries and the CLI's
 * `replay` signs the turns it posts. `webhook-signature: v1,<base64
 * HMAC-SHA256 of "id.timestamp.body">` under a `whsec_<base64>` secret,
 * timestamps within ±300 s, constant-time comparison, several signatures (and
 * secrets) accepted so keys can rotate.
 *
 * The `standardwebhooks` package decodes secrets and signs. Its `verify` is
 * not used: it reads the wall clock (`Date.now`), where the service checks the
 * timestamp against its own clock, and it cannot tell which check failed.
 */
import { timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { INVALID_SIGNATURE, UnauthorizedError } from "./errors.ts";

/** Canonical base64: whole 4-character groups, padding only at the end. */
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Allowed clock difference between signer and verifier. */
export const TOLERANCE_SECONDS = 300;

/** Signs a payload (for the notifier, clients, tests and the CLI's `replay`). */
export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
}

/** The headers a signed request carries. */
export interface WebhookHeaders {
  readonly id: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
}

/** The signature's bytes under one secret, or undefined for a secret that is not `whsec_<base64>`. */
function expectedSignature(secret: string, id: string, timestamp: number, body: string) {
  try {
    return Buffer.from(signWebhook(secret, id, timestamp, body).slice(3), "base64");
  } catch {
    return undefined;
  }
}

/** A message whose signature verified: its id and its timestamp (Unix seconds). */
export interface VerifiedWebhook {
  readonly id: string;
  readonly timestamp: number;
}

/** Throws {@link UnauthorizedError} (`invalid-signature`) unless one of the signatures matches one of the secrets. */
export function verifyWebhook(
  secrets: readonly string[],
  headers: WebhookHeaders,
  body: string,
  nowSeconds: number,
): VerifiedWebhook {
  if (!headers.id || !headers.timestamp || !headers.signature) {
    throw new UnauthorizedError(
      "this tenant requires signed turns: send webhook-id, webhook-timestamp and webhook-signature headers",
      INVALID_SIGNATURE,
    );
  }
  if (!/^\d+$/.test(headers.timestamp))
    throw new UnauthorizedError("webhook-timestamp must be Unix seconds", INVALID_SIGNATURE);
  const timestamp = Number(headers.timestamp);
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) {
    throw new UnauthorizedError(
      `webhook-timestamp is more than ${TOLERANCE_SECONDS} s away from the server's clock`,
      INVALID_SIGNATURE,
    );
  }
  // Node's base64 decoder skips characters it does not know: decode only
  // canonical base64, so a valid signature with junk appended is no match.
  const offered = headers.signature
    .split(" ")
    .filter((part) => part.startsWith("v1,") && STRICT_BASE64.test(part.slice(3)))
    .map((part) => Buffer.from(part.slice(3), "base64"));
  for (const secret of secrets) {
    const expected = expectedSignature(secret, headers.id, timestamp, body);
    if (
      expected &&
      offered.some(
        (candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected),
      )
    )
      return { id: headers.id, timestamp };
  }
  throw new UnauthorizedError(
    "no webhook-signature matches: check the signing secret and that the body is sent unchanged",
    INVALID_SIGNATURE,
  );
}
