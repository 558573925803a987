/**
 * The API's key lookups, kept per instance for a few seconds: without it
 * every request reads the key item and then the tenant item (two GetItems
 * in sequence) before its own work. A key's tenant is kept for at most
 * {@link TENANT_CACHE_TTL_MS} from the start of the read that found it, so a
 * revoked key, or a change to the tenant (its webhook secrets, config layer
 * or limits), reaches a running API instance within that bound
 * (docs/deploy.md, "Create a tenant and an API key"). An unknown key is never kept (a
 * key just created works at once), nor a failed read.
 */

import type { ModelCatalog } from "../../core/catalog.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import {
  type Clock,
  systemClock,
  type Tenant,
  type TenantDirectory,
  type TenantSettings,
} from "../ports.ts";

/** How long an instance keeps a key's tenant: the delay of a revocation or a tenant change. */
export const TENANT_CACHE_TTL_MS = 5_000;

/** Keys kept at most per instance (the oldest, which also expires first, makes room). */
export const TENANT_CACHE_MAX_KEYS = 1_000;

interface Kept {
  /** The read, shared by the lookups that arrive while it runs. */
  readonly tenant: Promise<Tenant | undefined>;
  readonly expiresAtMs: number;
  /** The tenant's id, once the read has found it. */
  id?: string;
}

/**
 * A {@link TenantDirectory} whose `findByKeyHash` answers from this
 * instance's recent lookups (see the module comment); `getTenant` always
 * reads. A tenant's settings written through it are read back at once on
 * this instance: the write forgets the tenant's kept keys.
 *
 * @example
 * const tenants = new CachedTenantDirectory(new DynamoTenantDirectory(client, table, sealer));
 * await tenants.findByKeyHash(hash); // reads the key and the tenant
 * await tenants.findByKeyHash(hash); // within 5 s: no read
 */
export class CachedTenantDirectory implements TenantDirectory, TenantSettings {
  /** In insertion order, which is expiry order (one TTL for all). */
  readonly #kept = new Map<string, Kept>();
  readonly #ttlMs: number;
  readonly #maxKeys: number;

  constructor(
    private readonly inner: TenantDirectory & TenantSettings,
    private readonly clock: Clock = systemClock,
    options: { readonly ttlMs?: number; readonly maxKeys?: number } = {},
  ) {
    this.#ttlMs = options.ttlMs ?? TENANT_CACHE_TTL_MS;
    this.#maxKeys = options.maxKeys ?? TENANT_CACHE_MAX_KEYS;
  }

  async findByKeyHash(keyHash: string): Promise<Tenant | undefined> {
    const now = this.clock.nowMillis();
    const kept = this.#kept.get(keyHash);
    if (kept !== undefined && kept.expiresAtMs > now) return kept.tenant;
    this.#kept.delete(keyHash);
    const entry: Kept = {
      tenant: this.inner.findByKeyHash(keyHash),
      expiresAtMs: now + this.#ttlMs,
    };
    this.#kept.set(keyHash, entry);
    for (const oldest of this.#kept.keys()) {
      if (this.#kept.size <= this.#maxKeys) break;
      this.#kept.delete(oldest);
    }
    const forget = () => {
      if (this.#kept.get(keyHash) === entry) this.#kept.delete(keyHash);
    };
    try {
      const tenant = await entry.tenant;
      if (tenant === undefined) forget();
      else entry.id = tenant.id;
      return tenant;
    } catch (error) {
      forget();
      throw error;
    }
  }

  getTenant(id: string): Promise<Tenant | undefined> {
    return this.inner.getTenant(id);
  }

  async setConfig(id: string, config: AutoConfigLayer): Promise<void> {
    await this.inner.setConfig(id, config);
    this.#forgetTenant(id);
  }

  async setModels(id: string, models: ModelCatalog): Promise<void> {
    await this.inner.setModels(id, models);
    this.#forgetTenant(id);
  }

  /** Forgets every kept key of tenant `id` (and the reads still running, whose tenant is not known yet). */
  #forgetTenant(id: string): void {
    for (const [keyHash, kept] of this.#kept) {
      if (kept.id === undefined || kept.id === id) this.#kept.delete(keyHash);
    }
  }
}
