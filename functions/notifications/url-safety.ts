/**
 * Which notification endpoints the service POSTs to (docs/architecture.md §16): on
 * AWS only HTTPS URLs whose every address is public unicast: never private,
 * loopback, link-local (the instance metadata service 169.254.169.254 among
 * them), unique-local (fd00:ec2::254), CGNAT, unspecified, multicast or
 * otherwise reserved. The local runtime also allows plain HTTP and loopback.
 * A URL is checked when it is registered and again, after DNS resolution, at
 * every delivery; the delivery then connects to the address it checked, so a
 * name that resolves elsewhere the second time (DNS rebinding) gets nowhere.
 * Ranges come from ipaddr.js, not from hand-written CIDR math.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { InvalidInputError } from "../../core/errors.ts";

/** What an endpoint may be. */
export interface UrlPolicy {
  readonly requireHttps: boolean;
  readonly allowLoopback: boolean;
}

/** Deployed: HTTPS to public addresses only. */
export const AWS_URL_POLICY: UrlPolicy = Object.freeze({
  requireHttps: true,
  allowLoopback: false,
});

/** The local runtime: also plain HTTP, and receivers on this machine. */
export const LOCAL_URL_POLICY: UrlPolicy = Object.freeze({
  requireHttps: false,
  allowLoopback: true,
});

/** A resolved address. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a host name to all its addresses (injectable for tests). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver (`dns.lookup` with `all: true`, as a connection would resolve it). */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true });

/** The longest endpoint URL accepted. */
export const MAX_URL_LENGTH = 2048;

/**
 * Why `address` may not be posted to, or undefined when it may: the
 * ipaddr.js range it falls in, unless that is public unicast (or loopback,
 * where allowed). An IPv4-mapped IPv6 address is judged as its IPv4 address.
 */
export function refusedRange(address: string, policy: UrlPolicy): string | undefined {
  if (isIP(address) === 0) return "not an IP address";
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range === "unicast") return undefined;
  if (range === "loopback" && policy.allowLoopback) return undefined;
  return range;
}

const bad = (url: string, why: string) =>
  new InvalidInputError(`the notification url ${JSON.stringify(url)} ${why}`, {
    issues: [{ pointer: "/url", detail: why }],
  });

/** The host of a URL without IPv6 brackets. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * The URL's addresses, each checked: its literal address, or every address
 * its name resolves to (all must be allowed: a connection may use any).
 * Throws {@link InvalidInputError} (pointer `/url`) naming what is refused.
 */
export async function checkedAddresses(
  raw: string,
  policy: UrlPolicy,
  resolve: Resolver,
): Promise<{ url: URL; addresses: readonly ResolvedAddress[] }> {
  if (raw.length > MAX_URL_LENGTH) throw bad(raw.slice(0, 64), `is longer than ${MAX_URL_LENGTH}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad(raw, "is not an absolute URL");
  }
  if (policy.requireHttps ? url.protocol !== "https:" : !/^https?:$/.test(url.protocol))
    throw bad(raw, `must use ${policy.requireHttps ? "https" : "http or https"}`);
  if (url.username || url.password) throw bad(raw, "must not carry credentials");
  const host = bareHost(url);
  let addresses: readonly ResolvedAddress[];
  const family = isIP(host);
  if (family !== 0) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw bad(raw, `names a host that does not resolve (${(error as Error).message})`);
    }
    if (addresses.length === 0) throw bad(raw, "names a host that does not resolve");
  }
  for (const { address } of addresses) {
    const range = refusedRange(address, policy);
    if (range !== undefined)
      throw bad(
        raw,
        `${address === host ? "is" : `resolves to ${address}, which is`} a ${range} address: notifications go to public addresses only`,
      );
  }
  return { url, addresses };
}
