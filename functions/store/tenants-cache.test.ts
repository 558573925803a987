import { describe, expect, it } from "vitest";
import type { ModelCatalog } from "../../core/catalog.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import type { Tenant, TenantDirectory, TenantSettings } from "../ports.ts";
import { CachedTenantDirectory } from "./tenants-cache.ts";

/** A directory whose keys the test changes, counting its key lookups. */
class CountingDirectory implements TenantDirectory, TenantSettings {
  readonly keys = new Map<string, Tenant>();
  lookups = 0;
  tenantReads = 0;
  failNext = false;

  async findByKeyHash(keyHash: string): Promise<Tenant | undefined> {
    this.lookups++;
    if (this.failNext) {
      this.failNext = false;
      throw new Error("throttled");
    }
    return this.keys.get(keyHash);
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    this.tenantReads++;
    return [...this.keys.values()].find((tenant) => tenant.id === id);
  }

  async setConfig(id: string, config: AutoConfigLayer): Promise<void> {
    this.#change(id, { config });
  }

  async setModels(id: string, models: ModelCatalog): Promise<void> {
    this.#change(id, { models });
  }

  #change(id: string, setting: Partial<Tenant>): void {
    for (const [hash, tenant] of this.keys) {
      if (tenant.id === id) this.keys.set(hash, { ...tenant, ...setting });
    }
  }
}

function setup(options: { maxKeys?: number } = {}) {
  const inner = new CountingDirectory();
  const clock = { now: 1_000_000, nowMillis: () => clock.now };
  const cached = new CachedTenantDirectory(inner, clock, options);
  return { inner, clock, cached };
}

describe("CachedTenantDirectory", () => {
  it("reads a tenant's settings back at once after writing them through it, other tenants' keys still kept", async () => {
    const { inner, cached } = setup();
    inner.keys.set("h1", { id: "acme" });
    inner.keys.set("h2", { id: "acme" });
    inner.keys.set("h3", { id: "globex" });
    for (const hash of ["h1", "h2", "h3"]) await cached.findByKeyHash(hash);
    await cached.setConfig("acme", { enabled: true });
    expect(await cached.findByKeyHash("h1")).toEqual({ id: "acme", config: { enabled: true } });
    await cached.setModels("acme", { "acme-coder-1": 64_000 });
    expect(await cached.findByKeyHash("h2")).toEqual({
      id: "acme",
      config: { enabled: true },
      models: { "acme-coder-1": 64_000 },
    });
    expect(await cached.findByKeyHash("h3")).toEqual({ id: "globex" });
    // Three first reads, then h1 once after the first write and h2 once after the second; h3 kept.
    expect(inner.lookups).toBe(5);
  });

  it("answers a key's second lookup within 5 s from the first, without a read", async () => {
    const { inner, clock, cached } = setup();
    inner.keys.set("h1", { id: "acme" });
    expect(await cached.findByKeyHash("h1")).toEqual({ id: "acme" });
    clock.now += 4_999;
    expect(await cached.findByKeyHash("h1")).toEqual({ id: "acme" });
    expect(inner.lookups).toBe(1);
  });

  it("sees a revoked key (or a changed tenant) 5 s after the read, not before", async () => {
    const { inner, clock, cached } = setup();
    inner.keys.set("h1", { id: "acme" });
    await cached.findByKeyHash("h1");
    inner.keys.set("h1", { id: "acme", webhook_secrets: ["whsec_x"] });
    inner.keys.delete("h1");
    clock.now += 4_999;
    expect(await cached.findByKeyHash("h1")).toEqual({ id: "acme" });
    clock.now += 1;
    expect(await cached.findByKeyHash("h1")).toBeUndefined();
    expect(inner.lookups).toBe(2);
  });

  it("keeps no unknown key: a key created after a miss works at once", async () => {
    const { inner, cached } = setup();
    expect(await cached.findByKeyHash("h1")).toBeUndefined();
    inner.keys.set("h1", { id: "acme" });
    expect(await cached.findByKeyHash("h1")).toEqual({ id: "acme" });
    expect(inner.lookups).toBe(2);
  });

  it("keeps no failed read: the next lookup reads again", async () => {
    const { inner, cached } = setup();
    inner.keys.set("h1", { id: "acme" });
    inner.failNext = true;
    await expect(cached.findByKeyHash("h1")).rejects.toThrow("throttled");
    expect(await cached.findByKeyHash("h1")).toEqual({ id: "acme" });
    expect(inner.lookups).toBe(2);
  });

  it("shares one read between lookups that arrive while it runs", async () => {
    const { inner, cached } = setup();
    inner.keys.set("h1", { id: "acme" });
    const both = await Promise.all([cached.findByKeyHash("h1"), cached.findByKeyHash("h1")]);
    expect(both).toEqual([{ id: "acme" }, { id: "acme" }]);
    expect(inner.lookups).toBe(1);
  });

  it("keeps at most maxKeys keys, dropping the oldest", async () => {
    const { inner, clock, cached } = setup({ maxKeys: 2 });
    for (const [hash, id] of [
      ["h1", "a"],
      ["h2", "b"],
      ["h3", "c"],
    ]) {
      inner.keys.set(hash as string, { id: id as string });
      await cached.findByKeyHash(hash as string);
      clock.now += 10;
    }
    expect(inner.lookups).toBe(3);
    await cached.findByKeyHash("h3");
    await cached.findByKeyHash("h2");
    expect(inner.lookups).toBe(3);
    await cached.findByKeyHash("h1");
    expect(inner.lookups).toBe(4);
  });

  it("reads a tenant by id every time", async () => {
    const { inner, cached } = setup();
    inner.keys.set("h1", { id: "acme" });
    expect(await cached.getTenant("acme")).toEqual({ id: "acme" });
    expect(await cached.getTenant("acme")).toEqual({ id: "acme" });
    expect(inner.tenantReads).toBe(2);
  });
});
