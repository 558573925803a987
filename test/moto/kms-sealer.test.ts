/**
 * The KMS envelope sealer (functions/secrets/kms.ts) on moto's KMS: the
 * SecretSealer contract with real GenerateDataKey and Decrypt calls (moto
 * binds a ciphertext to its key and its encryption context with AES-GCM, as
 * KMS does), then what the fake KMS of test/contract/secret-sealer.test.ts
 * cannot show.
 */
import { CreateAliasCommand, CreateKeyCommand, type KMSClient } from "@aws-sdk/client-kms";
import { describe, expect, it } from "vitest";
import { AutocompactError } from "../../core/errors.ts";
import { KmsSecretSealer } from "../../functions/secrets/kms.ts";
import { secretSealerContract } from "../contract/secret-sealer.contract.ts";
import { motoKms, uniqueName } from "../helpers/moto.ts";

/** A new symmetric key; its ARN. */
async function createKey(client: KMSClient): Promise<string> {
  const { KeyMetadata } = await client.send(
    new CreateKeyCommand({ KeySpec: "SYMMETRIC_DEFAULT", KeyUsage: "ENCRYPT_DECRYPT" }),
  );
  return KeyMetadata?.Arn as string;
}

// "Another key" is another account's: a key the sealer's role has no grant
// on, as a table restored under another stack's key would name.
secretSealerContract("KmsSecretSealer (moto KMS)", async () => {
  const client = motoKms();
  const other = motoKms("210987654321");
  return {
    sealer: new KmsSecretSealer(client, await createKey(client)),
    other: new KmsSecretSealer(other, await createKey(other)),
  };
});

describe("KmsSecretSealer on moto's KMS", () => {
  it("seals under an alias, names the key's ARN, and opens with a reader that has no key of its own", async () => {
    const client = motoKms();
    const arn = await createKey(client);
    const alias = `alias/${uniqueName("autocompact")}`;
    await client.send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: arn }));
    const sealed = await new KmsSecretSealer(client, alias).seal("whsec_c2VjcmV0", "acme");
    expect(sealed.key_id).toBe(arn);
    expect(await new KmsSecretSealer(motoKms()).open(sealed, "acme")).toBe("whsec_c2VjcmV0");
  });

  it("refuses a secret whose key id was changed to another key of the account, naming that key", async () => {
    const client = motoKms();
    const sealed = await new KmsSecretSealer(client, await createKey(client)).seal(
      "whsec_c2VjcmV0",
      "acme",
    );
    const other = await createKey(client);
    // KMS answers IncorrectKeyException (a CorruptDataError here); moto answers
    // AccessDeniedException (a SetupError): both refuse, naming the key.
    const error = await new KmsSecretSealer(client)
      .open({ ...sealed, key_id: other }, "acme")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AutocompactError);
    expect((error as Error).message).toContain(other);
  });
});
