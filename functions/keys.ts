/**
 * Credentials: API keys (generated once, shown once, stored only as their
 * SHA-256) and the check every webhook signing secret passes.
 */
import { createHash, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { InvalidInputError } from "../core/errors.ts";

/** SHA-256 (hex) of an API key: the only form in which keys are stored. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Generates a new API key. */
export function generateApiKey(): string {
  return `ak_${randomBytes(24).toString("base64url")}`;
}

/**
 * Refuses a webhook secret the Standard Webhooks library would refuse, so an
 * HMAC under an empty or undecodable key can never pass: a secret is
 * `whsec_` and the base64 of at least one byte.
 */
export function checkWebhookSecret(secret: string): void {
  if (!secret.startsWith("whsec_")) {
    throw new InvalidInputError("a webhook secret looks like whsec_<base64>");
  }
  try {
    new Webhook(secret);
  } catch (error) {
    throw new InvalidInputError(
      `the webhook secret after whsec_ must be base64 of at least one byte (${(error as Error).message})`,
      { cause: error },
    );
  }
}
