/**
 * A fixed set of tenants held in memory: the local runtime's dev tenant and
 * the tests' tenants. Keys are kept as SHA-256 only, as in DynamoDB. Their
 * notification endpoints are kept in memory too (secrets unsealed: nothing
 * here outlives the process).
 */
import type { NotificationEndpoints, SignedEndpoint, Tenant, TenantDirectory } from "../ports.ts";

/** A tenant with the SHA-256 (hex) of each of its API keys. */
export interface TenantRecord extends Tenant {
  readonly key_hashes: readonly string[];
}

export class StaticTenantDirectory implements TenantDirectory {
  readonly #byHash = new Map<string, Tenant>();
  readonly #byId = new Map<string, Tenant>();

  constructor(records: readonly TenantRecord[]) {
    for (const { key_hashes, ...tenant } of records) {
      this.#byId.set(tenant.id, tenant);
      for (const hash of key_hashes) this.#byHash.set(hash, tenant);
    }
  }

  async findByKeyHash(keyHash: string): Promise<Tenant | undefined> {
    return this.#byHash.get(keyHash);
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    return this.#byId.get(id);
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
