/**
 * A tenant's notification endpoint (`PUT`/`GET`/`DELETE /v1/notifications`,
 * docs/architecture.md §8, §16): the URL is checked against the deployment's
 * {@link UrlPolicy} (its name resolved now), a fresh signing secret is
 * generated for every PUT and answered only then, and the endpoint is
 * stored with the secret sealed. Reads never show the secret again.
 */
import { randomBytes } from "node:crypto";
import { NotFoundError } from "../errors.ts";
import type { NotificationEndpoint, NotificationEndpoints, SignedEndpoint } from "../ports.ts";
import { checkedAddresses, type Resolver, systemResolver, type UrlPolicy } from "./url-safety.ts";

/** What the notification routes need: where endpoints live and which URLs are allowed. */
export interface NotificationSettings {
  readonly endpoints: NotificationEndpoints;
  readonly policy: UrlPolicy;
  /** Resolves endpoint names at registration (default the system's `dns.lookup`). */
  readonly resolve?: Resolver;
}

/** A new outbound signing secret: `whsec_` and the base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The endpoint as answered by GET: without its secret. */
const publicView = ({ url, events }: NotificationEndpoint): NotificationEndpoint => ({
  url,
  ...(events ? { events } : {}),
});

/**
 * Registers (or replaces) the tenant's endpoint after checking its URL;
 * answers it with its new signing secret, the only time the secret is shown.
 */
export async function registerEndpoint(
  settings: NotificationSettings,
  tenant: string,
  request: NotificationEndpoint,
): Promise<SignedEndpoint> {
  await checkedAddresses(request.url, settings.policy, settings.resolve ?? systemResolver);
  const endpoint: SignedEndpoint = {
    ...publicView(request),
    ...(request.events ? { events: [...new Set(request.events)] } : {}),
    secret: generateSigningSecret(),
  };
  await settings.endpoints.putEndpoint(tenant, endpoint);
  return endpoint;
}

/** The tenant's endpoint without its secret; {@link NotFoundError} when it has none. */
export async function readEndpoint(
  settings: NotificationSettings,
  tenant: string,
): Promise<NotificationEndpoint> {
  const endpoint = await settings.endpoints.getEndpoint(tenant);
  if (!endpoint) {
    throw new NotFoundError("no notification endpoint is registered: PUT /v1/notifications {url}", {
      title: "No notification endpoint",
    });
  }
  return publicView(endpoint);
}
