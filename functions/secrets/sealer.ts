/**
 * Webhook secrets are never stored in plain text: a {@link SecretSealer}
 * seals each one (AES-256-GCM) before it is written and opens it after it is
 * read. Two adapters: KMS envelope encryption on AWS (`kms.ts`, a data key
 * per seal, wrapped by the stack's key) and a 32-byte key file under the
 * local runtime's data directory (`local.ts`). A sealed secret is bound to
 * its context (the tenant id): moved to another tenant, it does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import * as z from "zod";
import { issueLines } from "../../core/issues.ts";
import { CorruptDataError } from "../errors.ts";

/** A sealed secret as stored (every binary field base64). */
export interface SealedSecret {
  /** The key that sealed it: a KMS key ARN, or `local:<fingerprint>` of a key file. */
  readonly key_id: string;
  /** The data key, encrypted under `key_id` (KMS only). */
  readonly encrypted_data_key?: string;
  readonly iv: string;
  readonly tag: string;
  readonly ciphertext: string;
}

/** Seals and opens secrets; `context` (the tenant id) must be the same for both. */
export interface SecretSealer {
  seal(plaintext: string, context: string): Promise<SealedSecret>;
  /** Throws CorruptDataError when the secret does not open (wrong key, context or bytes). */
  open(sealed: SealedSecret, context: string): Promise<string>;
}

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64");

const SealedSecretSchema = z.strictObject({
  key_id: z.string().min(1),
  encrypted_data_key: base64.min(1).optional(),
  iv: base64.min(1),
  tag: base64.min(1),
  ciphertext: base64.min(1),
});

/** A stored value as a sealed secret; CorruptDataError when it is not one. */
export function parseSealedSecret(value: unknown): SealedSecret {
  const result = SealedSecretSchema.safeParse(value);
  if (!result.success) {
    throw new CorruptDataError(
      `a stored webhook secret is neither sealed nor a legacy string: ${issueLines(result.error.issues, { root: "value" }).join("; ")}`,
    );
  }
  return result.data;
}

const IV_BYTES = 12;
export const KEY_BYTES = 32;

/** The additional authenticated data of a secret sealed for `context`. */
const aad = (context: string) => Buffer.from(`autocompact-webhook-secret\0${context}`, "utf8");

/** AES-256-GCM under `key`, bound to `context`. */
export function encrypt(
  key: Buffer,
  plaintext: string,
  context: string,
): Pick<SealedSecret, "iv" | "tag" | "ciphertext"> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return {
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ciphertext: ciphertext.toString("base64"),
  };
}

/** Opens what {@link encrypt} sealed; CorruptDataError (no detail about the secret) otherwise. */
export function decrypt(key: Buffer, sealed: SealedSecret, context: string): string {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(aad(context));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return Buffer.concat([
      decipher.update(Buffer.from(sealed.ciphertext, "base64")),
      decipher.final(),
    ]).toString("utf8");
  } catch (error) {
    throw new CorruptDataError(
      `a webhook secret sealed under ${sealed.key_id} does not open (another key, another tenant, or altered bytes)`,
      { cause: error },
    );
  }
}
