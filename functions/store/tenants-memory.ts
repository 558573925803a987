/**
 * A fixed set of tenants held in memory: the tests' tenants. Keys are kept
 * as SHA-256 only, as in DynamoDB; their settings can change
 * ({@link TenantSettings}). Their notification endpoints are kept in memory
 * too (secrets unsealed: nothing here outlives the process).
 */

import type { ModelCatalog } from "../../core/catalog.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import { ConditionFailedError } from "../errors.ts";
import type {
  NotificationEndpoints,
  SignedEndpoint,
  Tenant,
  TenantDirectory,
  TenantSettings,
} from "../ports.ts";

/** A tenant with the SHA-256 (hex) of each of its API keys. */
export interface TenantRecord extends Tenant {
  readonly key_hashes: readonly string[];
}

export class StaticTenantDirectory implements TenantDirectory, TenantSettings {
  /** Key hash → tenant id. */
  readonly #byHash = new Map<string, string>();
  readonly #byId = new Map<string, Tenant>();

  constructor(records: readonly TenantRecord[]) {
    for (const { key_hashes, ...tenant } of records) {
      this.#byId.set(tenant.id, tenant);
      for (const hash of key_hashes) this.#byHash.set(hash, tenant.id);
    }
  }

  async findByKeyHash(keyHash: string): Promise<Tenant | undefined> {
    const id = this.#byHash.get(keyHash);
    return id === undefined ? undefined : this.#byId.get(id);
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    return this.#byId.get(id);
  }

  async setConfig(id: string, config: AutoConfigLayer): Promise<void> {
    this.#set(id, "config", config);
  }

  async setModels(id: string, models: ModelCatalog): Promise<void> {
    this.#set(id, "models", models);
  }

  /** Replaces one setting of tenant `id` (a copy: the caller's object may change later). */
  #set(id: string, name: "config" | "models", value: object): void {
    const tenant = this.#byId.get(id);
    if (!tenant) throw new ConditionFailedError(`no tenant "${id}"`);
    const { [name]: _old, ...rest } = tenant;
    const copy = structuredClone(value);
    this.#byId.set(id, Object.keys(copy).length === 0 ? rest : { ...rest, [name]: copy });
  }
}

/** Notification endpoints in memory, per tenant id. */
export class MemoryNotificationEndpoints implements NotificationEndpoints {
  readonly #endpoints = new Map<string, SignedEndpoint>();

  async getEndpoint(tenant: string): Promise<SignedEndpoint | undefined> {
    return this.#endpoints.get(tenant);
  }

  async putEndpoint(tenant: string, endpoint: SignedEndpoint): Promise<void> {
    this.#endpoints.set(tenant, endpoint);
  }

  async deleteEndpoint(tenant: string): Promise<boolean> {
    return this.#endpoints.delete(tenant);
  }
}
