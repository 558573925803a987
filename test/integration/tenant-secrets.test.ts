/**
 * Webhook secrets in the table are sealed (issue 13 item 6): on DynamoDB
 * Local, what is stored, what is read back, a plain-text secret of an earlier
 * version (still read, reported, sealed by the next write), a process that
 * reads no secrets (the compactor), and a sealed secret moved to another tenant.
 */
import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { describe, expect, it } from "vitest";
import { CorruptDataError, SetupError } from "../../functions/errors.ts";
import { LocalSecretSealer } from "../../functions/secrets/local.ts";
import { DynamoTenantDirectory, SECRETS_NOT_READ } from "../../functions/store/tenants-dynamodb.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

const A = "whsec_c2VjcmV0LWE=";
const B = "whsec_c2VjcmV0LWI=";
const C = "whsec_c2VjcmV0LWM=";

describe("sealed webhook secrets in DynamoDB", () => {
  it("stores each secret sealed (no plain text in the item) and reads it back opened", async () => {
    const client = localClient();
    const table = await freshTable(client, "secrets-sealed");
    const sealer = LocalSecretSealer.ephemeral();
    const directory = new DynamoTenantDirectory(client, table, sealer);
    await directory.createTenant("acme", { webhookSecrets: [A] });
    await directory.addWebhookSecret("acme", B);
    const raw = async (id: string) =>
      unmarshall(
        (
          await client.send(
            new GetItemCommand({
              TableName: table,
              Key: marshall({ pk: `TENANT#${id}`, sk: "TENANT" }),
            }),
          )
        ).Item ?? {},
      );
    const stored = (await raw("acme")).webhook_secrets as Record<string, string>[];
    expect(stored).toHaveLength(2);
    for (const item of stored) {
      expect(Object.keys(item).sort()).toEqual(["ciphertext", "iv", "key_id", "tag"]);
      expect(item.key_id).toBe(sealer.keyId);
    }
    const text = JSON.stringify(await raw("acme"));
    for (const secret of [A, B]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(6));
    }
    expect((await directory.getTenant("acme"))?.webhook_secrets).toEqual([A, B]);

    // Another process with the same key reads them; one with another key fails closed.
    expect(
      (await new DynamoTenantDirectory(client, table, sealer).getTenant("acme"))?.webhook_secrets,
    ).toEqual([A, B]);
    await expect(
      new DynamoTenantDirectory(client, table, LocalSecretSealer.ephemeral()).getTenant("acme"),
    ).rejects.toThrow(SetupError);

    // A sealed secret copied onto another tenant does not open there.
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({ pk: "TENANT#thief", sk: "TENANT", webhook_secrets: [stored[0]] }),
      }),
    );
    await expect(directory.getTenant("thief")).rejects.toThrow(CorruptDataError);
    client.destroy();
  });

  it("reads a plain-text secret of an earlier version, reports it, and seals it on the next write (kept secrets unchanged)", async () => {
    const client = localClient();
    const table = await freshTable(client, "secrets-legacy");
    const reports: [string, number][] = [];
    const directory = new DynamoTenantDirectory(client, table, LocalSecretSealer.ephemeral(), {
      onPlaintextSecret: (tenant, count) => reports.push([tenant, count]),
    });
    await directory.createTenant("old");
    const sealedB = await (async () => {
      await directory.addWebhookSecret("old", B);
      const item = await client.send(
        new GetItemCommand({ TableName: table, Key: marshall({ pk: "TENANT#old", sk: "TENANT" }) }),
      );
      return (unmarshall(item.Item ?? {}).webhook_secrets as unknown[])[0];
    })();
    // As an earlier version wrote it: A in plain text beside the sealed B.
    const item = await client.send(
      new GetItemCommand({ TableName: table, Key: marshall({ pk: "TENANT#old", sk: "TENANT" }) }),
    );
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({ ...unmarshall(item.Item ?? {}), webhook_secrets: [A, sealedB] }),
      }),
    );
    expect(reports).toEqual([]);
    expect((await directory.getTenant("old"))?.webhook_secrets).toEqual([A, B]);
    expect((await directory.getTenant("old"))?.webhook_secrets).toEqual([A, B]);
    expect(reports).toEqual([["old", 1]]);

    await directory.addWebhookSecret("old", C);
    const after = unmarshall(
      (
        await client.send(
          new GetItemCommand({
            TableName: table,
            Key: marshall({ pk: "TENANT#old", sk: "TENANT" }),
          }),
        )
      ).Item ?? {},
    ).webhook_secrets as unknown[];
    expect(after).toHaveLength(3);
    expect(after.filter((s) => typeof s === "string")).toEqual([]);
    expect(JSON.stringify(after)).not.toContain(A);
    expect(after[1]).toEqual(sealedB);
    reports.length = 0;
    expect((await directory.getTenant("old"))?.webhook_secrets).toEqual([A, B, C]);
    expect(reports).toEqual([]);
    client.destroy();
  });

  it("after a key change, the next secrets write drops what no longer opens (said); transient trouble drops nothing", async () => {
    const client = localClient();
    const table = await freshTable(client, "secrets-rekeyed");
    await new DynamoTenantDirectory(client, table, LocalSecretSealer.ephemeral()).createTenant(
      "acme",
      { webhookSecrets: [A, B] },
    );
    const rekeyed = new DynamoTenantDirectory(client, table, LocalSecretSealer.ephemeral());
    await expect(rekeyed.getTenant("acme")).rejects.toThrow(/key file was replaced/);

    // A sealer that is only having a bad moment (KMS throttling) must not lose anything.
    const flaky = LocalSecretSealer.ephemeral();
    const troubled = new DynamoTenantDirectory(client, table, {
      seal: (plaintext, context) => flaky.seal(plaintext, context),
      open: async () => {
        throw Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
      },
    });
    await expect(troubled.addWebhookSecret("acme", C)).rejects.toThrow("Rate exceeded");

    expect(await rekeyed.addWebhookSecret("acme", C)).toEqual({ dropped: 2 });
    expect((await rekeyed.getTenant("acme"))?.webhook_secrets).toEqual([C]);
    expect(await rekeyed.addWebhookSecret("acme", A)).toEqual({ dropped: 0 });
    expect((await rekeyed.getTenant("acme"))?.webhook_secrets).toEqual([C, A]);
    client.destroy();
  });

  it("concurrent secret writes on sealed lists both land", async () => {
    const client = localClient();
    const table = await freshTable(client, "secrets-race");
    const sealer = LocalSecretSealer.ephemeral();
    const one = new DynamoTenantDirectory(client, table, sealer);
    const two = new DynamoTenantDirectory(client, table, sealer);
    await one.createTenant("race", { webhookSecrets: [A] });
    await Promise.all([one.addWebhookSecret("race", B), two.addWebhookSecret("race", C)]);
    expect([...((await one.getTenant("race"))?.webhook_secrets ?? [])].sort()).toEqual([A, B, C]);
    client.destroy();
  });

  it("a directory that reads no secrets (the compactor) sees the tenant without them and writes none", async () => {
    const client = localClient();
    const table = await freshTable(client, "secrets-not-read");
    await new DynamoTenantDirectory(client, table, LocalSecretSealer.ephemeral()).createTenant(
      "acme",
      { config: { enabled: true }, webhookSecrets: [A] },
    );
    const compactor = new DynamoTenantDirectory(client, table, SECRETS_NOT_READ);
    expect(await compactor.getTenant("acme")).toEqual({ id: "acme", config: { enabled: true } });
    await expect(compactor.addWebhookSecret("acme", B)).rejects.toThrow(SetupError);
    await expect(compactor.createTenant("other", { webhookSecrets: [B] })).rejects.toThrow(
      SetupError,
    );
    client.destroy();
  });
});
