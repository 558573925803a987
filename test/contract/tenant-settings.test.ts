/**
 * The contract of {@link TenantSettings} (functions/ports.ts) with the
 * {@link TenantDirectory} reads that give the settings back, against the
 * in-memory directory and DynamoDB Local (never mocks): each write replaces
 * its setting whole, an empty one removes it, the other setting and the
 * tenant's limits stay, and a tenant that does not exist is refused with
 * nothing created.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { ConditionFailedError } from "../../functions/errors.ts";
import { hashApiKey } from "../../functions/keys.ts";
import type { TenantDirectory, TenantLimits, TenantSettings } from "../../functions/ports.ts";
import { DynamoTenantDirectory, SECRETS_NOT_READ } from "../../functions/store/tenants-dynamodb.ts";
import { StaticTenantDirectory } from "../../functions/store/tenants-memory.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

/** A tenant to create: its id, its API key and its limits. */
interface NewTenant {
  readonly id: string;
  readonly key: string;
  readonly limits?: TenantLimits;
}

type Directory = TenantDirectory & TenantSettings;

function tenantSettingsContract(
  name: string,
  make: (tenants: readonly NewTenant[]) => Promise<Directory>,
) {
  describe(`TenantSettings contract: ${name}`, () => {
    const fresh = (limits?: TenantLimits): NewTenant => ({
      id: `tenant-${randomUUID()}`,
      key: `ak_${randomUUID()}`,
      ...(limits ? { limits } : {}),
    });

    it("gives back a default config and models, by id and by key, each replaced whole", async () => {
      const t = fresh();
      const directory = await make([t]);
      expect(await directory.getTenant(t.id)).toEqual({ id: t.id });
      await directory.setConfig(t.id, { enabled: true, rule: { keep_last: 2, tool_calls: null } });
      await directory.setModels(t.id, { "acme-coder-1": 64_000, "GPT-5.1": 300_000 });
      const read = {
        id: t.id,
        config: { enabled: true, rule: { keep_last: 2, tool_calls: null } },
        models: { "acme-coder-1": 64_000, "GPT-5.1": 300_000 },
      };
      expect(await directory.getTenant(t.id)).toEqual(read);
      expect(await directory.findByKeyHash(hashApiKey(t.key))).toEqual(read);
      // Replaced, not merged: what the new value leaves out is gone.
      await directory.setConfig(t.id, { trigger_ratio: 0.5 });
      await directory.setModels(t.id, { "acme-coder-2": 128_000 });
      expect(await directory.getTenant(t.id)).toEqual({
        id: t.id,
        config: { trigger_ratio: 0.5 },
        models: { "acme-coder-2": 128_000 },
      });
    });

    it("removes a setting written empty, keeping the other one and the tenant's limits", async () => {
      const t = fresh({ burst: 7 });
      const directory = await make([t]);
      await directory.setConfig(t.id, { enabled: true });
      await directory.setModels(t.id, { "acme-coder-1": 64_000 });
      await directory.setConfig(t.id, {});
      expect(await directory.getTenant(t.id)).toEqual({
        id: t.id,
        models: { "acme-coder-1": 64_000 },
        limits: { burst: 7 },
      });
      await directory.setModels(t.id, {});
      expect(await directory.getTenant(t.id)).toEqual({ id: t.id, limits: { burst: 7 } });
    });

    it("changes one tenant's settings only", async () => {
      const [t, u] = [fresh(), fresh()];
      const directory = await make([t, u]);
      await directory.setConfig(t.id, { enabled: true });
      await directory.setModels(t.id, { "acme-coder-1": 64_000 });
      expect(await directory.getTenant(u.id)).toEqual({ id: u.id });
      expect(await directory.findByKeyHash(hashApiKey(u.key))).toEqual({ id: u.id });
    });

    it("refuses a tenant that does not exist, creating nothing", async () => {
      const directory = await make([]);
      const id = `nobody-${randomUUID()}`;
      await expect(directory.setConfig(id, { enabled: true })).rejects.toBeInstanceOf(
        ConditionFailedError,
      );
      await expect(directory.setModels(id, { m: 1 })).rejects.toBeInstanceOf(ConditionFailedError);
      expect(await directory.getTenant(id)).toBeUndefined();
    });

    it("keeps what it was given, not the caller's object changed afterwards", async () => {
      const t = fresh();
      const directory = await make([t]);
      const models: Record<string, number> = { "acme-coder-1": 64_000 };
      await directory.setModels(t.id, models);
      models["acme-coder-1"] = 1;
      expect((await directory.getTenant(t.id))?.models).toEqual({ "acme-coder-1": 64_000 });
    });
  });
}

tenantSettingsContract(
  "StaticTenantDirectory",
  async (tenants) =>
    new StaticTenantDirectory(
      tenants.map(({ id, key, limits }) => ({
        id,
        key_hashes: [hashApiKey(key)],
        ...(limits ? { limits } : {}),
      })),
    ),
);

const client = localClient();
afterAll(() => client.destroy());
let table: Promise<string> | undefined;

tenantSettingsContract("DynamoTenantDirectory on DynamoDB Local", async (tenants) => {
  table ??= freshTable(client, "tenant-settings");
  const directory = new DynamoTenantDirectory(client, await table, SECRETS_NOT_READ);
  for (const { id, key, limits } of tenants) {
    await directory.createTenant(id, limits ? { limits } : {});
    // The key createTenant answers is random: the local runtime's way gives the tenant the test's key.
    await directory.setDevKey(id, key);
  }
  return directory;
});
