/**
 * Envelope encryption under the stack's KMS key: each seal asks KMS for a
 * fresh data key (GenerateDataKey, AES_256), encrypts the secret with it
 * (AES-256-GCM) and stores only the data key's KMS ciphertext beside it.
 * Opening decrypts the data key (Decrypt, pinned to the key it names) once
 * per cold start and keeps it in memory. The KMS encryption context names
 * the tenant, so CloudTrail shows whose secret was opened and a data key
 * moved to another tenant does not decrypt.
 *
 * Rotation: with KMS automatic rotation the key ARN stays the same and KMS
 * keeps every earlier key material, so stored secrets keep opening.
 */
import {
  DecryptCommand,
  type DecryptCommandOutput,
  GenerateDataKeyCommand,
  type KMSClient,
} from "@aws-sdk/client-kms";
import { CorruptDataError, SetupError } from "../errors.ts";
import { decrypt, encrypt, KEY_BYTES, type SealedSecret, type SecretSealer } from "./sealer.ts";

const encryptionContext = (context: string) => ({
  purpose: "autocompact-webhook-secret",
  tenant: context,
});

/** Decrypt's errors for a key the caller cannot use, whatever the ciphertext (AWS KMS API reference). */
const UNUSABLE_KEY = new Set([
  "AccessDeniedException",
  "NotFoundException",
  "DisabledException",
  "KMSInvalidStateException",
]);

export class KmsSecretSealer implements SecretSealer {
  /** Data keys opened so far, by encrypted data key and context. */
  readonly #dataKeys = new Map<string, Promise<Buffer>>();

  /**
   * @param keyId the key that seals (ARN, id or alias); opening uses the key
   *   each sealed secret names.
   */
  constructor(
    private readonly client: KMSClient,
    private readonly keyId?: string,
  ) {}

  async seal(plaintext: string, context: string): Promise<SealedSecret> {
    if (!this.keyId) {
      throw new SetupError(
        "no KMS key to seal webhook secrets with: give the stack's key (output WebhookSecretsKeyArn)",
      );
    }
    const answer = await this.client.send(
      new GenerateDataKeyCommand({
        KeyId: this.keyId,
        KeySpec: "AES_256",
        EncryptionContext: encryptionContext(context),
      }),
    );
    if (!answer.Plaintext || !answer.CiphertextBlob || !answer.KeyId) {
      throw new SetupError(`KMS GenerateDataKey under ${this.keyId} returned no data key`);
    }
    const key = Buffer.from(answer.Plaintext);
    try {
      return {
        key_id: answer.KeyId,
        encrypted_data_key: Buffer.from(answer.CiphertextBlob).toString("base64"),
        ...encrypt(key, plaintext, context),
      };
    } finally {
      key.fill(0);
      answer.Plaintext.fill(0);
    }
  }

  async open(sealed: SealedSecret, context: string): Promise<string> {
    const wrapped = sealed.encrypted_data_key;
    if (!wrapped) {
      throw new CorruptDataError(
        `a webhook secret sealed under ${sealed.key_id} has no encrypted data key: it was sealed by another sealer (a local data directory's key?)`,
      );
    }
    const cacheKey = `${context}\0${wrapped}`;
    let dataKey = this.#dataKeys.get(cacheKey);
    if (!dataKey) {
      dataKey = this.#decryptDataKey(sealed.key_id, wrapped, context);
      this.#dataKeys.set(cacheKey, dataKey);
      // A failure (throttling, a missing grant) is not remembered.
      dataKey.catch(() => this.#dataKeys.delete(cacheKey));
    }
    return decrypt(await dataKey, sealed, context);
  }

  async #decryptDataKey(keyId: string, wrapped: string, context: string): Promise<Buffer> {
    let answer: DecryptCommandOutput;
    try {
      answer = await this.client.send(
        new DecryptCommand({
          KeyId: keyId,
          CiphertextBlob: Buffer.from(wrapped, "base64"),
          EncryptionContext: encryptionContext(context),
        }),
      );
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === "InvalidCiphertextException" || name === "IncorrectKeyException") {
        throw new CorruptDataError(
          `the data key of a webhook secret sealed under ${keyId} does not decrypt (another tenant's, or altered)`,
          { cause: error },
        );
      }
      // The key the secret names is not usable here: another account's or
      // stack's (no grant: AccessDenied, or NotFound), disabled, or deleted.
      if (name !== undefined && UNUSABLE_KEY.has(name)) {
        throw new SetupError(
          `a webhook secret was sealed under the KMS key ${keyId}, which this service cannot use (${name}): add the tenant's secrets again`,
          { cause: error },
        );
      }
      throw error;
    }
    if (answer.Plaintext?.length !== KEY_BYTES) {
      throw new SetupError(`KMS Decrypt under ${keyId} returned no ${KEY_BYTES}-byte data key`);
    }
    const key = Buffer.from(answer.Plaintext);
    answer.Plaintext.fill(0);
    return key;
  }
}
