/**
 * The tenant's own settings, as `client.tenant` of {@link AutocompactClient}
 * (docs/architecture.md §8): its default auto config layer, which every
 * conversation starts from below its own, and its models, context windows
 * over the deployment's catalog. Both belong to the key's tenant; a tenant
 * sees and sets only its own.
 *
 * ```ts
 * await client.tenant.putConfig({ conversation: { compaction: { auto: { enabled: true } } } });
 * await client.tenant.putModels({ "acme-coder-1": 64_000 });
 * ```
 */
import type { ConfigTree, ConversationConfig, TenantModels } from "./types.ts";

/** Sends one request of the client and answers its parsed body, or throws its `ServiceError`. */
export type TenantRequest = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** `client.tenant`: the routes under `/v1/tenant`, with the client's key, timeout and errors. */
export class TenantSettings {
  readonly #request: TenantRequest;

  constructor(request: TenantRequest) {
    this.#request = request;
  }

  /**
   * `GET /v1/tenant/config`: the tenant's default layer (empty if none) and
   * `effective`, the config of a conversation that has no layer of its own.
   */
  getConfig(): Promise<ConversationConfig> {
    return this.#request("GET", "/v1/tenant/config");
  }

  /**
   * `PUT /v1/tenant/config`: replaces the tenant's default layer whole
   * (`{ conversation: { compaction: { auto: {} } } }` removes it); a bad key is
   * a 400 naming it, as a conversation's `putConfig` answers.
   */
  putConfig(tree: ConfigTree): Promise<ConversationConfig> {
    return this.#request("PUT", "/v1/tenant/config", tree);
  }

  /** `GET /v1/tenant/models`: the tenant's context windows by model id (empty if none). */
  getModels(): Promise<TenantModels> {
    return this.#request("GET", "/v1/tenant/models");
  }

  /**
   * `PUT /v1/tenant/models`: replaces the tenant's models whole (`{}` removes
   * them). A turn's `model.context_window` wins over them; they win over the
   * deployment's catalog and the bundled one.
   */
  putModels(models: Readonly<Record<string, number>>): Promise<TenantModels> {
    return this.#request("PUT", "/v1/tenant/models", { models });
  }
}
