/**
 * The local runtime's sealer: AES-256-GCM under a 32-byte key kept in a file
 * only the owner can read (0600) at the top of the data directory, so
 * `autocompact tenant --data-dir` finds the same key; with `--in-memory`, a
 * random key per process. Rotation: replace the file and add the secrets
 * again (a secret sealed under another key refuses to open, naming it).
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SetupError } from "../errors.ts";
import { decrypt, encrypt, KEY_BYTES, type SealedSecret, type SecretSealer } from "./sealer.ts";

/** The key file under a data directory. */
export const SECRETS_KEY_FILE = "webhook-secrets.key";

/** Seals under one 32-byte key held in memory. */
export class LocalSecretSealer implements SecretSealer {
  readonly #key: Buffer;
  /** `local:` and the first 16 hex digits of the key's SHA-256 (names the key, reveals nothing). */
  readonly keyId: string;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) {
      throw new SetupError(`a local secrets key is ${KEY_BYTES} bytes (got ${key.length})`);
    }
    this.#key = Buffer.from(key);
    this.keyId = `local:${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
  }

  /** A sealer under a random key that lives as long as the process (`--in-memory`). */
  static ephemeral(): LocalSecretSealer {
    return new LocalSecretSealer(randomBytes(KEY_BYTES));
  }

  async seal(plaintext: string, context: string): Promise<SealedSecret> {
    return { key_id: this.keyId, ...encrypt(this.#key, plaintext, context) };
  }

  async open(sealed: SealedSecret, context: string): Promise<string> {
    if (sealed.key_id !== this.keyId) {
      throw new SetupError(
        `a webhook secret is sealed under ${sealed.key_id}, but this data directory's key is ${this.keyId}: the key file was replaced; add the tenant's secrets again (the next add-secret drops the ones sealed under the old key)`,
      );
    }
    return decrypt(this.#key, sealed, context);
  }
}

/**
 * The sealer of a data directory: its key file, created at random (0600) on
 * first use by whichever process comes first (the service or the CLI).
 */
export function dataDirSecretSealer(dataDir: string): LocalSecretSealer {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return fileSecretSealer(join(dataDir, SECRETS_KEY_FILE), { create: true });
}

/** The sealer of a key file (base64 of 32 bytes, 0600); `create` makes a missing one. */
export function fileSecretSealer(path: string, options: { create: boolean }): LocalSecretSealer {
  const read = (): Buffer | undefined => {
    let text: string;
    try {
      text = readFileSync(path, "utf8").trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new SetupError(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
    const key = Buffer.from(text, "base64");
    if (key.length !== KEY_BYTES || key.toString("base64") !== text) {
      throw new SetupError(
        `${path} is not a secrets key (the base64 of ${KEY_BYTES} bytes): restore it, or delete it and add every tenant's webhook secrets again`,
      );
    }
    // An earlier umask or a copy may have widened it: owner only.
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    return key;
  };
  let key = read();
  if (!key && !options.create) throw new SetupError(`no secrets key file at ${path}`);
  if (!key) {
    try {
      // "wx": two processes starting at once cannot each write their own key.
      writeFileSync(path, `${randomBytes(KEY_BYTES).toString("base64")}\n`, {
        mode: 0o600,
        flag: "wx",
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new SetupError(`cannot write ${path}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    key = read();
    if (!key) throw new SetupError(`${path} vanished while it was created`);
  }
  return new LocalSecretSealer(key);
}
