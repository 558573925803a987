/**
 * One delivery attempt of a notification: check the endpoint's URL again
 * (its name resolved now), sign the body as a Standard Webhooks message under
 * the endpoint's secret, and POST it to the address just checked (node:http's
 * `lookup` hands the connection that address, so a second resolution cannot
 * point it elsewhere; TLS still verifies the certificate of the host name).
 * Anything but a 2xx answer within the timeout throws, so the caller retries
 * (SQS on AWS, the local runtime's backoff locally).
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { QueueError } from "../errors.ts";
import type { Notification, NotificationEndpoints, SignedEndpoint } from "../ports.ts";
import { signWebhook } from "../webhook-signature.ts";
import { wants } from "./events.ts";
import { checkedAddresses, type Resolver, systemResolver, type UrlPolicy } from "./url-safety.ts";

/** How long one POST may take, connection included. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** The settings of {@link deliverNotification}. */
export interface DeliveryOptions {
  readonly policy: UrlPolicy;
  readonly resolve?: Resolver;
  readonly timeoutMs?: number;
  /** The signature's time (Unix milliseconds; default now). */
  readonly nowMillis?: number;
}

/** The headers and body of a signed notification. */
export function signedRequest(
  notification: Notification,
  secret: string,
  nowMillis: number,
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(notification.body);
  const timestamp = Math.floor(nowMillis / 1000);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "autocompact-notifier",
      "webhook-id": notification.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(secret, notification.id, timestamp, body),
    },
  };
}

/** A lookup that answers only with the addresses already checked. */
function pinnedLookup(addresses: readonly { address: string; family: number }[]): LookupFunction {
  return (_hostname, options, callback) => {
    const first = addresses[0] as { address: string; family: number };
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
        ...addresses,
      ]);
    else callback(null, first.address, first.family);
  };
}

/** POSTs `notification` to `endpoint` once; throws unless it answers 2xx. */
export async function deliverNotification(
  endpoint: SignedEndpoint,
  notification: Notification,
  options: DeliveryOptions,
): Promise<void> {
  const { url, addresses } = await checkedAddresses(
    endpoint.url,
    options.policy,
    options.resolve ?? systemResolver,
  );
  const { headers, body } = signedRequest(
    notification,
    endpoint.secret,
    options.nowMillis ?? Date.now(),
  );
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const where = `${url.protocol}//${url.host}`;
  const status = await new Promise<number>((resolve, reject) => {
    const req = send(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup: pinnedLookup(addresses),
        signal: AbortSignal.timeout(timeoutMs),
      },
      (response: IncomingMessage) => {
        // The answer's body is not read for anything: drain it so the socket is freed.
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
        response.on("error", reject);
      },
    );
    req.on("error", (error) =>
      reject(
        new QueueError(`notification ${notification.id} to ${where} failed`, { cause: error }),
      ),
    );
    req.end(body);
  });
  if (status < 200 || status > 299)
    throw new QueueError(`notification ${notification.id} to ${where} was answered ${status}`);
}

/** What {@link deliverToTenant} did. */
export type DeliveryOutcome = "delivered" | "no_endpoint" | "not_subscribed";

/**
 * Delivers a notification to its tenant's endpoint as registered now: a
 * tenant without one, or one that left the event's type out, gets nothing.
 */
export async function deliverToTenant(
  endpoints: NotificationEndpoints,
  notification: Notification,
  options: DeliveryOptions,
): Promise<DeliveryOutcome> {
  const endpoint = await endpoints.getEndpoint(notification.tenant);
  if (!endpoint) return "no_endpoint";
  if (!wants(endpoint, notification.body.type)) return "not_subscribed";
  await deliverNotification(endpoint, notification, options);
  return "delivered";
}
