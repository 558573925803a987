/**
 * What every SecretSealer does (functions/secrets/): a sealed secret opens to
 * what was sealed, for the context it was sealed for only; its stored form
 * shows nothing of the secret; altered bytes and foreign keys refuse to open,
 * and no error message carries the secret.
 */
import { describe, expect, it } from "vitest";
import { AutocompactError } from "../../core/errors.ts";
import { CorruptDataError } from "../../functions/errors.ts";
import type { SealedSecret, SecretSealer } from "../../functions/secrets/sealer.ts";

/** A sealer, and another one under a different key. */
export interface SealerPair {
  readonly sealer: SecretSealer;
  readonly other: SecretSealer;
}

const SECRET = "whsec_MfKQ9r6+2dmJwNFp0KJgv1ZOo8y7kH5rZqkq7u1v6Xo=";
const PAYLOAD = SECRET.slice("whsec_".length);

/** Every way the secret could show in a stored form: as sent, its base64, its bytes in hex. */
function revealsSecret(text: string): boolean {
  return (
    text.includes(SECRET) ||
    text.includes(PAYLOAD) ||
    text.includes(Buffer.from(PAYLOAD, "base64").toString("hex")) ||
    text.includes(Buffer.from(SECRET).toString("base64"))
  );
}

const flip = (base64: string): string => {
  const bytes = Buffer.from(base64, "base64");
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  return bytes.toString("base64");
};

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

export function secretSealerContract(name: string, make: () => Promise<SealerPair>): void {
  describe(`SecretSealer contract: ${name}`, () => {
    it("opens what it sealed, for the same context", async () => {
      const { sealer } = await make();
      const sealed = await sealer.seal(SECRET, "acme");
      expect(await sealer.open(sealed, "acme")).toBe(SECRET);
      const unicode = "whsec_żółć-🔑";
      expect(await sealer.open(await sealer.seal(unicode, "acme"), "acme")).toBe(unicode);
    });

    it("stores nothing of the secret, and seals it differently every time", async () => {
      const { sealer } = await make();
      const first = await sealer.seal(SECRET, "acme");
      const second = await sealer.seal(SECRET, "acme");
      expect(revealsSecret(JSON.stringify(first))).toBe(false);
      expect(revealsSecret(JSON.stringify(second))).toBe(false);
      expect(first.ciphertext).not.toBe(second.ciphertext);
      expect(first.iv).not.toBe(second.iv);
      // The ciphertext is as long as the secret (GCM), the tag 16 bytes, the IV 12.
      expect(Buffer.from(first.ciphertext, "base64").length).toBe(SECRET.length);
      expect(Buffer.from(first.tag, "base64").length).toBe(16);
      expect(Buffer.from(first.iv, "base64").length).toBe(12);
    });

    it("refuses to open for another context (another tenant)", async () => {
      const { sealer } = await make();
      const sealed = await sealer.seal(SECRET, "acme");
      const error = await rejection(sealer.open(sealed, "globex"));
      expect(error).toBeInstanceOf(CorruptDataError);
      expect(revealsSecret(`${error.message} ${String(error.cause ?? "")}`)).toBe(false);
    });

    it("refuses altered bytes: ciphertext, tag, IV", async () => {
      const { sealer } = await make();
      const sealed = await sealer.seal(SECRET, "acme");
      for (const field of ["ciphertext", "tag", "iv"] as const) {
        const altered: SealedSecret = { ...sealed, [field]: flip(sealed[field]) };
        const error = await rejection(sealer.open(altered, "acme"));
        expect(error).toBeInstanceOf(CorruptDataError);
        expect(revealsSecret(error.message)).toBe(false);
      }
    });

    it("refuses a secret sealed under another key, saying so without the secret", async () => {
      const { sealer, other } = await make();
      const sealed = await other.seal(SECRET, "acme");
      const error = await rejection(sealer.open(sealed, "acme"));
      expect(error).toBeInstanceOf(AutocompactError);
      expect(error.message).toContain(sealed.key_id);
      expect(revealsSecret(error.message)).toBe(false);
    });
  });
}
