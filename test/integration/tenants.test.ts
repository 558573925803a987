import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/api/app.ts";
import { ConversationService } from "../../functions/conversations/service.ts";
import { ConditionFailedError } from "../../functions/errors.ts";
import { hashApiKey } from "../../functions/keys.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { DynamoTenantDirectory } from "../../functions/store/tenants-dynamodb.ts";
import { freshTable, localClient, localEndpoint } from "../helpers/dynamodb.ts";
import { RecordingQueue } from "../helpers/service.ts";

const run = promisify(execFile);
const bin = new URL("../../cli/bin.mjs", import.meta.url).pathname;

describe("tenants in DynamoDB", () => {
  it("creates tenants with hashed keys, config and webhook secrets, and rotates keys", async () => {
    const client = localClient();
    const table = await freshTable(client, "tenants");
    const directory = new DynamoTenantDirectory(client, table);
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
    const args = [
      bin,
      "tenant",
      "create",
      "--table",
      table,
      "--id",
      "globex",
      "--endpoint",
      localEndpoint(),
    ];
    const { stdout } = await run(process.execPath, args);
    const { tenant, api_key } = JSON.parse(stdout) as { tenant: string; api_key: string };
    expect(tenant).toBe("globex");
    const duplicate = await run(process.execPath, args).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(duplicate).toMatchObject({ code: 1, stderr: expect.stringContaining("already exists") });

    const store = new DynamoConversationStore(client, table);
    const app = createApp({
      service: new ConversationService({ store, queue: new RecordingQueue() }),
      tenants: new DynamoTenantDirectory(client, table),
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
});
