/**
 * The SecretSealer contract against the local key-file sealer and the KMS
 * envelope sealer (KMS answered by a fake that keeps its data keys and checks
 * the encryption context, as KMS does); then what is particular to each.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  DecryptCommand,
  type DecryptCommandInput,
  GenerateDataKeyCommand,
  type GenerateDataKeyCommandInput,
  KMSClient,
} from "@aws-sdk/client-kms";
import { mockClient } from "aws-sdk-client-mock";
import { describe, expect, it } from "vitest";
import { SetupError } from "../../functions/errors.ts";
import { KmsSecretSealer } from "../../functions/secrets/kms.ts";
import {
  dataDirSecretSealer,
  fileSecretSealer,
  LocalSecretSealer,
  SECRETS_KEY_FILE,
} from "../../functions/secrets/local.ts";
import { scratchDir } from "../helpers/scratch.ts";
import { secretSealerContract } from "./secret-sealer.contract.ts";

const KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
const OTHER_ARN = "arn:aws:kms:eu-west-1:123456789012:key/other";

/** A KMS holding one key: data keys it issued decrypt only with their context and key. */
function fakeKms(keyArn: string) {
  const client = new KMSClient({ region: "eu-west-1" });
  const mock = mockClient(client);
  const issued = new Map<string, { key: Buffer; context: string }>();
  mock.on(GenerateDataKeyCommand).callsFake((input: GenerateDataKeyCommandInput) => {
    const key = randomBytes(32);
    const blob = randomBytes(48);
    issued.set(blob.toString("hex"), { key, context: JSON.stringify(input.EncryptionContext) });
    return { KeyId: keyArn, Plaintext: Uint8Array.from(key), CiphertextBlob: blob };
  });
  mock.on(DecryptCommand).callsFake((input: DecryptCommandInput) => {
    const found = issued.get(Buffer.from(input.CiphertextBlob ?? []).toString("hex"));
    if (input.KeyId !== keyArn) {
      throw Object.assign(new Error("wrong key"), { name: "IncorrectKeyException" });
    }
    if (!found || found.context !== JSON.stringify(input.EncryptionContext)) {
      throw Object.assign(new Error("bad ciphertext"), { name: "InvalidCiphertextException" });
    }
    return { KeyId: keyArn, Plaintext: Uint8Array.from(found.key) };
  });
  return { client, mock };
}

secretSealerContract("LocalSecretSealer", async () => ({
  sealer: LocalSecretSealer.ephemeral(),
  other: LocalSecretSealer.ephemeral(),
}));

secretSealerContract("KmsSecretSealer (fake KMS)", async () => ({
  sealer: new KmsSecretSealer(fakeKms(KEY_ARN).client, "alias/autocompact/table"),
  other: new KmsSecretSealer(fakeKms(OTHER_ARN).client, OTHER_ARN),
}));

describe("KmsSecretSealer", () => {
  it("asks KMS for one AES-256 data key per seal, under the tenant's context, and stores it wrapped", async () => {
    const { client, mock } = fakeKms(KEY_ARN);
    const sealer = new KmsSecretSealer(client, "alias/autocompact/table");
    const sealed = await sealer.seal("whsec_c2VjcmV0", "acme");
    await sealer.seal("whsec_c2VjcmV0", "acme");
    const calls = mock.commandCalls(GenerateDataKeyCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.args[0].input).toEqual({
      KeyId: "alias/autocompact/table",
      KeySpec: "AES_256",
      EncryptionContext: { purpose: "autocompact-webhook-secret", tenant: "acme" },
    });
    // The key's ARN (as KMS answered), so opening is pinned to it.
    expect(sealed.key_id).toBe(KEY_ARN);
    expect(Buffer.from(sealed.encrypted_data_key ?? "", "base64")).toHaveLength(48);
  });

  it("decrypts a data key once per cold start (pinned to the key the secret names), not after a failure", async () => {
    const { client, mock } = fakeKms(KEY_ARN);
    const sealed = await new KmsSecretSealer(client, KEY_ARN).seal("whsec_c2VjcmV0", "acme");
    const reader = new KmsSecretSealer(client);
    expect(await reader.open(sealed, "acme")).toBe("whsec_c2VjcmV0");
    expect(await reader.open(sealed, "acme")).toBe("whsec_c2VjcmV0");
    const decrypts = mock.commandCalls(DecryptCommand);
    expect(decrypts).toHaveLength(1);
    expect(decrypts[0]?.args[0].input).toMatchObject({
      KeyId: KEY_ARN,
      EncryptionContext: { purpose: "autocompact-webhook-secret", tenant: "acme" },
    });
    expect(await new KmsSecretSealer(client).open(sealed, "acme")).toBe("whsec_c2VjcmV0");
    expect(mock.commandCalls(DecryptCommand)).toHaveLength(2);

    const flaky = fakeKms(KEY_ARN);
    const stored = await new KmsSecretSealer(flaky.client, KEY_ARN).seal("whsec_bmV3", "acme");
    const throttled = Object.assign(new Error("slow down"), { name: "ThrottlingException" });
    flaky.mock.on(DecryptCommand).rejectsOnce(throttled);
    const opener = new KmsSecretSealer(flaky.client);
    await expect(opener.open(stored, "acme")).rejects.toThrow("slow down");
    flaky.mock.on(DecryptCommand).resolves({ Plaintext: new Uint8Array(32) });
    // Retried at KMS (not a remembered failure); a zero key does not open the secret.
    await expect(opener.open(stored, "acme")).rejects.toThrow(/does not open/);
  });

  it("cannot seal without a key, and refuses a secret sealed locally", async () => {
    const { client } = fakeKms(KEY_ARN);
    await expect(new KmsSecretSealer(client).seal("whsec_c2VjcmV0", "acme")).rejects.toThrow(
      SetupError,
    );
    const local = await LocalSecretSealer.ephemeral().seal("whsec_c2VjcmV0", "acme");
    await expect(new KmsSecretSealer(client, KEY_ARN).open(local, "acme")).rejects.toThrow(
      /no encrypted data key/,
    );
  });
});

describe("the local key file", () => {
  it("is created once per data directory, 0600, base64 of 32 bytes, and found again by the CLI", async () => {
    const dir = join(scratchDir("sealer-"), "data");
    const service = dataDirSecretSealer(dir);
    const path = join(dir, SECRETS_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(Buffer.from(readFileSync(path, "utf8").trim(), "base64")).toHaveLength(32);
    const sealed = await service.seal("whsec_c2VjcmV0", "acme");
    expect(await dataDirSecretSealer(dir).open(sealed, "acme")).toBe("whsec_c2VjcmV0");
    expect(await fileSecretSealer(path, { create: false }).open(sealed, "acme")).toBe(
      "whsec_c2VjcmV0",
    );
    // A widened mode is narrowed again when the key is read.
    chmodSync(path, 0o644);
    dataDirSecretSealer(dir);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("replaced: secrets sealed under the old key are refused by name; a broken or missing file is a setup error", async () => {
    const dir = scratchDir("sealer-");
    const path = join(dir, SECRETS_KEY_FILE);
    const sealed = await dataDirSecretSealer(dir).seal("whsec_c2VjcmV0", "acme");
    writeFileSync(path, `${randomBytes(32).toString("base64")}\n`);
    await expect(dataDirSecretSealer(dir).open(sealed, "acme")).rejects.toThrow(
      /key file was replaced; add the tenant's secrets again/,
    );
    writeFileSync(path, `${randomBytes(16).toString("base64")}\n`);
    expect(() => dataDirSecretSealer(dir)).toThrow(SetupError);
    expect(() => fileSecretSealer(join(dir, "absent.key"), { create: false })).toThrow(
      /no secrets key file/,
    );
  });
});
