/**
 * A tenant's own settings (`/v1/tenant/…`, docs/architecture.md §6): its
 * default config layer, checked as a conversation's layer is (valid, with a
 * policy, a summary rule only with a summarizer) before it is stored. Its
 * models go straight to the port (`TenantSettings.setModels`).
 */
import { type AutoConfigLayer, toConfigTree } from "../../core/config.ts";
import { EMPTY_HEAD, type Tenant, type TenantSettings } from "../ports.ts";
import { type RunnableConfigDeps, runnableConfig } from "./runnable-config.ts";
import { effectiveConfig, type ServiceSettings } from "./state.ts";

/** The tenant's default layer as the D50 tree, and the config a conversation without layers of its own runs. */
export function tenantConfig(settings: ServiceSettings, tenant: Tenant) {
  return {
    ...toConfigTree(tenant.config ?? {}),
    effective: effectiveConfig(settings, tenant, undefined),
  };
}

/** Replaces the tenant's default layer (`{}` removes it) once this service could run it. */
export async function putTenantConfig(
  deps: RunnableConfigDeps,
  tenants: TenantSettings,
  tenant: Tenant,
  layer: AutoConfigLayer,
) {
  const changed = { ...tenant, config: layer };
  runnableConfig(deps, changed, EMPTY_HEAD);
  await tenants.setConfig(tenant.id, layer);
  return tenantConfig(deps.settings, changed);
}
