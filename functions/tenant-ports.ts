/**
 * The ports of tenants: who owns conversations, their keys, settings and
 * limits, and the summary budget counted per tenant. Re-exported by
 * ports.ts, which holds the service's other ports.
 */
import type { ModelCatalog } from "../core/catalog.ts";
import type { AutoConfigLayer } from "../core/config.ts";

/** A tenant: who owns conversations, with its own config layer and webhook secrets. */
export interface Tenant {
  readonly id: string;
  /** The tenant's default auto config layer (between the service config and the conversation's). */
  readonly config?: AutoConfigLayer;
  /** The tenant's models: windows over the deployment's catalog (`layeredCatalog`, docs/architecture.md §6). */
  readonly models?: ModelCatalog;
  /** Standard Webhooks signing secrets (`whsec_…`); when set, turn posts must be signed. */
  readonly webhook_secrets?: readonly string[];
  /** The tenant's own limits; each one absent takes the deployment's default (docs/architecture.md §8). */
  readonly limits?: TenantLimits;
}

/**
 * A tenant's limits. The first three are per process (a Lambda instance,
 * the local runtime); the summary budget is counted in the store.
 */
export interface TenantLimits {
  /** Requests a second, refilling the token bucket. */
  readonly requests_per_second?: number;
  /** The bucket's size: requests that may arrive at once. */
  readonly burst?: number;
  /** Reads (and posts) holding a `wait` at once. */
  readonly waiting_reads?: number;
  /** Summary tokens (input + output) a UTC day for manual and dry-run summaries. */
  readonly summary_tokens_per_day?: number;
}

/**
 * Summary tokens used per tenant and UTC day (the summary budget,
 * docs/architecture.md §8): one item per tenant and day, grown by atomic
 * adds, expiring after the day.
 */
export interface SummaryBudgets {
  /** Tokens the tenant used on `day` (`YYYY-MM-DD`), 0 before any. */
  used(tenant: string, day: string): Promise<number>;
  /** Adds `tokens` to the tenant's `day` (kept until `expiresAtSeconds`); the new total. */
  add(tenant: string, day: string, tokens: number, expiresAtSeconds: number): Promise<number>;
}

/** Where tenants and their API keys live (keys are stored as SHA-256 only). */
export interface TenantDirectory {
  /** The tenant owning the API key with this SHA-256 (hex), if any. */
  findByKeyHash(keyHash: string): Promise<Tenant | undefined>;
  getTenant(id: string): Promise<Tenant | undefined>;
}

/**
 * A tenant's own settings, written by the tenant (`PUT /v1/tenant/…`) or an
 * operator (`autocompact tenant set-config`, `set-models`). Each write
 * replaces that setting whole (an empty one removes it) and leaves the
 * tenant's keys, secrets, limits and other setting as they were; the next
 * {@link TenantDirectory} read gives it back. A tenant that does not exist
 * is a `ConditionFailedError`, and nothing is created.
 */
export interface TenantSettings {
  /** Replaces the tenant's default auto config layer (`{}`: none). */
  setConfig(id: string, config: AutoConfigLayer): Promise<void>;
  /** Replaces the tenant's models (`{}`: none). */
  setModels(id: string, models: ModelCatalog): Promise<void>;
}
