import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../functions/api/app.ts";
import { ConversationService } from "../../functions/conversations/service.ts";
import { ConditionFailedError } from "../../functions/errors.ts";
import { hashApiKey } from "../../functions/keys.ts";
import { fileSecretSealer } from "../../functions/secrets/local.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { DynamoTenantDirectory } from "../../functions/store/tenants-dynamodb.ts";
import { MemoryWebhookReceipts } from "../../functions/store/webhook-receipts-memory.ts";
import { runCli } from "../helpers/cli.ts";
import { freshTable, localAwsEnv, localClient, localEndpoint } from "../helpers/dynamodb.ts";
import { scratchDir } from "../helpers/scratch.ts";
import { memoryNotifications, RecordingQueue } from "../helpers/service.ts";

/** The suite's secrets key file (the CLI seals with it through --secrets-key-file). */
const keyDir = mkdtempSync(join(tmpdir(), "tenants-key-"));
const keyFile = join(keyDir, "webhook-secrets.key");
afterAll(() => rmSync(keyDir, { recursive: true, force: true }));
const sealer = fileSecretSealer(keyFile, { create: true });

/** Runs the CLI in process with `input` on stdin, against the run's DynamoDB Local. */
const cli = (args: string[], input = "") => runCli(args, { stdin: input, env: localAwsEnv() });

/** The API on `table`, its tenants in `directory`. */
const appOn = (client: DynamoDBClient, table: string, directory: DynamoTenantDirectory) =>
  createApp({
    webhookReceipts: new MemoryWebhookReceipts(),
    notifications: memoryNotifications(),
    service: new ConversationService({
      store: new DynamoConversationStore(client, table),
      queue: new RecordingQueue(),
    }),
    tenants: directory,
  });

describe("tenants in DynamoDB", () => {
  it("creates tenants with hashed keys, config and webhook secrets, and rotates keys", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenants");
    const directory = new DynamoTenantDirectory(client, table, sealer);
    const key = await directory.createTenant("acme", {
      config: { enabled: true },
      webhookSecrets: ["whsec_c2VjcmV0"],
    });
    expect(key).toMatch(/^ak_/);
    expect(await directory.findByKeyHash(hashApiKey(key))).toEqual({
      id: "acme",
      config: { enabled: true },
      webhook_secrets: ["whsec_c2VjcmV0"],
    });
    expect(await directory.findByKeyHash(hashApiKey("ak_other"))).toBeUndefined();
    await expect(directory.createTenant("acme")).rejects.toBeInstanceOf(ConditionFailedError);
    const second = await directory.addApiKey("acme");
    expect((await directory.findByKeyHash(hashApiKey(second)))?.id).toBe("acme");
    await expect(directory.addApiKey("nobody")).rejects.toThrow(/no tenant/);
    client.destroy();
  });

  it("`autocompact tenant create` prints a key that authenticates against the API", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenant-cli");
    const args = ["tenant", "create", "--table", table, "--id", "globex"];
    const created = await cli([...args, "--endpoint", localEndpoint()]);
    expect(created.code).toBe(0);
    const { tenant, api_key } = JSON.parse(created.stdout) as { tenant: string; api_key: string };
    expect(tenant).toBe("globex");
    const duplicate = await cli([...args, "--endpoint", localEndpoint()]);
    expect(duplicate).toMatchObject({ code: 1, stderr: expect.stringContaining("already exists") });

    const store = new DynamoConversationStore(client, table);
    const app = createApp({
      webhookReceipts: new MemoryWebhookReceipts(),
      notifications: memoryNotifications(),
      service: new ConversationService({ store, queue: new RecordingQueue() }),
      tenants: new DynamoTenantDirectory(client, table, sealer),
    });
    const response = await app.request("/v1/conversations/c1/turns", {
      method: "POST",
      headers: { authorization: `Bearer ${api_key}`, "content-type": "application/json" },
      body: JSON.stringify({
        turn: 0,
        events: [{ type: "chat_request", timestamp: "2026-11-29T00:00:00Z", content: "hi" }],
      }),
    });
    expect(response.status).toBe(202);
    expect((await store.getHead({ tenant: "globex", conversation: "c1" }))?.turn_count).toBe(1);
    client.destroy();
  });

  it("`tenant create` keeps a default config and models, which the tenant's API reads; `set-config`, `set-models` replace them", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenant-settings-cli");
    const base = ["--table", table, "--endpoint", localEndpoint()];
    const dir = scratchDir("tenant-settings-");
    const toml = join(dir, "tenant.toml");
    writeFileSync(toml, "[conversation.compaction.auto]\nenabled = true\ntrigger_ratio = 0.6\n");
    const created = await cli([
      ...["tenant", "create", ...base, "--id", "hooli"],
      ...["--config", toml, "--models", '{"acme-coder-1":64000}'],
    ]);
    expect(created.code).toBe(0);
    const { api_key } = JSON.parse(created.stdout) as { api_key: string };
    const directory = new DynamoTenantDirectory(client, table, sealer);
    expect(await directory.findByKeyHash(hashApiKey(api_key))).toEqual({
      id: "hooli",
      config: { enabled: true, trigger_ratio: 0.6 },
      models: { "acme-coder-1": 64_000 },
    });
    const app = appOn(client, table, directory);
    const get = async (path: string) =>
      (await app.request(path, { headers: { authorization: `Bearer ${api_key}` } })).json();
    expect(await get("/v1/tenant/config")).toMatchObject({
      conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.6 } } },
      effective: { enabled: true, trigger_ratio: 0.6, min_turns: 5 },
    });
    expect(await get("/v1/tenant/models")).toEqual({ models: { "acme-coder-1": 64_000 } });

    const setConfig = await cli([
      ...["tenant", "set-config", ...base, "--id", "hooli"],
      ...["--config", '{"conversation":{"compaction":{"auto":{"min_turns":2}}}}'],
    ]);
    expect(setConfig).toMatchObject({ code: 0 });
    expect(JSON.parse(setConfig.stdout)).toEqual({
      tenant: "hooli",
      conversation: { compaction: { auto: { min_turns: 2 } } },
    });
    const json = join(dir, "models.json");
    writeFileSync(json, '{"acme-coder-2":128000}');
    const setModels = await cli([
      "tenant",
      "set-models",
      ...base,
      "--id",
      "hooli",
      "--models",
      json,
    ]);
    expect(JSON.parse(setModels.stdout)).toEqual({
      tenant: "hooli",
      models: { "acme-coder-2": 128_000 },
    });
    expect(await directory.getTenant("hooli")).toEqual({
      id: "hooli",
      config: { min_turns: 2 },
      models: { "acme-coder-2": 128_000 },
    });

    // Refused before anything is written, each bad key named in full.
    const other = ["tenant", "create", ...base, "--id", "other"];
    expect(
      await cli([
        ...other,
        "--config",
        '{"conversation":{"compaction":{"auto":{"trigger_ratio":3}}}}',
      ]),
    ).toMatchObject({
      code: 1,
      stderr:
        "autocompact: config (inline): conversation.compaction.auto.trigger_ratio: must be at most 1\n",
    });
    expect(await cli([...other, "--models", '{"acme-coder-1":0}'])).toMatchObject({
      code: 1,
      stderr:
        'autocompact: --models (inline): acme-coder-1: must be at least 1 token (e.g. {"my-model":128000})\n',
    });
    expect(await directory.getTenant("other")).toBeUndefined();
    expect(
      await cli(["tenant", "set-models", ...base, "--id", "nobody", "--models", "{}"]),
    ).toMatchObject({ code: 1, stderr: expect.stringContaining('no tenant "nobody"') });
    expect(
      await cli(["tenant", "add-key", ...base, "--id", "hooli", "--models", "{}"]),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--models is set by `tenant create` or `tenant set-models`"),
    });
    expect(await cli(["tenant", "set-config", ...base, "--id", "hooli"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("give the tenant's default config with --config F"),
    });
    client.destroy();
  });

  it("keeps a tenant's limits: `tenant create` and `tenant set-limits` flags, read back on the tenant", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenant-limits");
    const base = ["--table", table, "--id", "initrode", "--endpoint", localEndpoint()];
    const created = await cli([
      "tenant",
      "create",
      ...base,
      "--requests-per-second",
      "5",
      "--waiting-reads",
      "3",
    ]);
    expect(created.code).toBe(0);
    const { api_key } = JSON.parse(created.stdout) as { api_key: string };
    const directory = new DynamoTenantDirectory(client, table, sealer);
    expect(await directory.findByKeyHash(hashApiKey(api_key))).toEqual({
      id: "initrode",
      limits: { requests_per_second: 5, waiting_reads: 3 },
    });
    const set = await cli(["tenant", "set-limits", ...base, "--summary-tokens-per-day", "1000"]);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      tenant: "initrode",
      limits: { requests_per_second: 5, waiting_reads: 3, summary_tokens_per_day: 1_000 },
    });
    expect((await directory.getTenant("initrode"))?.limits).toEqual({
      requests_per_second: 5,
      waiting_reads: 3,
      summary_tokens_per_day: 1_000,
    });
    // A tenant created without limits gets its first ones set whole.
    await directory.createTenant("plain");
    expect(await directory.setLimits("plain", { burst: 7 })).toEqual({ burst: 7 });
    await expect(directory.setLimits("nobody", { burst: 7 })).rejects.toThrow(/no tenant/);
    expect(await cli(["tenant", "set-limits", ...base, "--burst", "0"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--burst must be a whole number from 1 (got "0")'),
    });
    expect(await cli(["tenant", "set-limits", ...base])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("give at least one limit"),
    });
    client.destroy();
  });

  it("revokes keys at once, and adds and removes webhook secrets checked as Standard Webhooks checks them", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenant-credentials");
    const directory = new DynamoTenantDirectory(client, table, sealer);
    const first = await directory.createTenant("initech");
    const second = await directory.addApiKey("initech");
    await directory.revokeApiKey("initech", hashApiKey(first));
    expect(await directory.findByKeyHash(hashApiKey(first))).toBeUndefined();
    expect((await directory.findByKeyHash(hashApiKey(second)))?.id).toBe("initech");
    await expect(directory.revokeApiKey("initech", hashApiKey(first))).rejects.toThrow(
      'tenant "initech" has no such API key',
    );
    const other = await directory.createTenant("hooli");
    await expect(directory.revokeApiKey("initech", hashApiKey(other))).rejects.toBeInstanceOf(
      ConditionFailedError,
    );
    expect((await directory.findByKeyHash(hashApiKey(other)))?.id).toBe("hooli");

    await directory.addWebhookSecret("initech", "whsec_b2xk");
    await directory.addWebhookSecret("initech", "whsec_bmV3");
    expect((await directory.getTenant("initech"))?.webhook_secrets).toEqual([
      "whsec_b2xk",
      "whsec_bmV3",
    ]);
    await expect(directory.addWebhookSecret("initech", "whsec_bmV3")).rejects.toThrow(
      "already has that webhook secret",
    );
    await directory.removeWebhookSecret("initech", "whsec_b2xk");
    expect((await directory.getTenant("initech"))?.webhook_secrets).toEqual(["whsec_bmV3"]);
    await expect(directory.removeWebhookSecret("initech", "whsec_b2xk")).rejects.toThrow(
      "has no such webhook secret",
    );
    await directory.removeWebhookSecret("initech", "whsec_bmV3");
    expect((await directory.getTenant("initech"))?.webhook_secrets).toBeUndefined();

    for (const [secret, reason] of [
      ["whsec_", "Secret can't be empty."],
      ["whsec_!!!", "incorrect padding"],
      ["c2VjcmV0", "a webhook secret looks like whsec_<base64>"],
    ] as const) {
      await expect(directory.addWebhookSecret("initech", secret)).rejects.toThrow(reason);
      await expect(
        directory.createTenant(`t-${secret.length}`, { webhookSecrets: [secret] }),
      ).rejects.toThrow(reason);
    }
    client.destroy();
  });

  it("the dev key follows the variable: the previous one stops authenticating", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenant-dev-key");
    const directory = new DynamoTenantDirectory(client, table, sealer);
    await directory.setDevKey("dev", "dk_first");
    await directory.setDevKey("dev", "dk_first");
    expect((await directory.findByKeyHash(hashApiKey("dk_first")))?.id).toBe("dev");
    await directory.setDevKey("dev", "dk_second");
    expect(await directory.findByKeyHash(hashApiKey("dk_first"))).toBeUndefined();
    expect((await directory.findByKeyHash(hashApiKey("dk_second")))?.id).toBe("dev");
    client.destroy();
  });

  it("`autocompact tenant` takes secrets and keys on stdin only, and a revoked key gets 401 at once", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenant-cli-secrets");
    const base = [
      ...["--table", table, "--id", "umbrella", "--endpoint", localEndpoint()],
      ...["--secrets-key-file", keyFile],
    ];
    const inArgv = await cli(["tenant", "create", ...base, "--webhook-secret", "whsec_c2VjcmV0"]);
    expect(inArgv).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("not taken on the command line"),
    });
    const created = await cli(
      ["tenant", "create", ...base, "--webhook-secret-stdin"],
      "whsec_c2VjcmV0\n",
    );
    expect(created.code).toBe(0);
    const { api_key } = JSON.parse(created.stdout) as { api_key: string };
    const directory = new DynamoTenantDirectory(client, table, sealer);
    expect((await directory.getTenant("umbrella"))?.webhook_secrets).toEqual(["whsec_c2VjcmV0"]);
    expect(await cli(["tenant", "add-secret", ...base], "whsec_bmV3\n")).toMatchObject({
      code: 0,
      stdout: '{"tenant":"umbrella","added":"webhook_secret"}\n',
    });
    expect(await cli(["tenant", "add-secret", ...base], "whsec_\n")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("Secret can't be empty."),
    });
    expect(await cli(["tenant", "remove-secret", ...base], "whsec_c2VjcmV0")).toMatchObject({
      code: 0,
    });
    expect((await directory.getTenant("umbrella"))?.webhook_secrets).toEqual(["whsec_bmV3"]);
    expect(await cli(["tenant", "add-secret", ...base], "")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("give exactly one webhook secret on stdin"),
    });

    const app = appOn(client, table, directory);
    const read = () =>
      app.request("/v1/conversations/c1", { headers: { authorization: `Bearer ${api_key}` } });
    expect((await read()).status).toBe(404);
    expect(await cli(["tenant", "revoke-key", ...base], `${api_key}\n`)).toMatchObject({
      code: 0,
      stdout: '{"tenant":"umbrella","revoked":"api_key"}\n',
    });
    expect((await read()).status).toBe(401);
    expect(await cli(["tenant", "revoke-key", ...base], `${api_key}\n`)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('tenant "umbrella" has no such API key'),
    });
    client.destroy();
  });
});
