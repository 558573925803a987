/** API keys: generated once, shown once, stored only as their SHA-256. */
import { createHash, randomBytes } from "node:crypto";

/** SHA-256 (hex) of an API key: the only form in which keys are stored. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Generates a new API key. */
export function generateApiKey(): string {
  return `ak_${randomBytes(24).toString("base64url")}`;
}
