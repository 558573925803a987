/**
 * Per-tenant request limits (docs/architecture.md §8): a token bucket of
 * requests (a rate and a burst) and a cap on the reads holding a `wait` at
 * once. Over either, a {@link RateLimitedError} (429 with `Retry-After`).
 *
 * The state is this process's: on Lambda, one instance's, and an instance
 * serves one request at a time, so there the rate is per instance (a tenant
 * gets the rate times its warm instances) and the waiting cap never binds;
 * the local runtime and any long-lived server enforce both as configured. A
 * limit across instances would need a shared counter (an atomic ADD per
 * tenant and second in the table), which this does not do.
 */
import type { MiddlewareHandler } from "hono";
import { RateLimitedError } from "../errors.ts";
import type { Clock, Tenant, TenantLimits } from "../ports.ts";

/** A tenant's limits with every default filled in. */
export type Limits = Required<
  Pick<TenantLimits, "requests_per_second" | "burst" | "waiting_reads">
>;

/** A tenant's bucket: the tokens it had at `atMs`. */
interface Bucket {
  tokens: number;
  atMs: number;
}

/** The limits of this process, per tenant. */
export class TenantLimiter {
  readonly #buckets = new Map<string, Bucket>();
  /** The deadlines of each tenant's held waits. */
  readonly #waiting = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    /** The deployment's defaults (functions/env.ts `readLimitDefaults`). */
    private readonly defaults: Limits,
  ) {}

  /** The tenant's own limits over the defaults. */
  limitsOf(tenant: Tenant): Limits {
    return { ...this.defaults, ...tenant.limits };
  }

  /** Takes one request from the tenant's bucket, or throws a {@link RateLimitedError}. */
  admit(tenant: Tenant): void {
    const { requests_per_second: rate, burst } = this.limitsOf(tenant);
    const now = this.clock.nowMillis();
    const bucket = this.#buckets.get(tenant.id) ?? { tokens: burst, atMs: now };
    const tokens = Math.min(burst, bucket.tokens + ((now - bucket.atMs) / 1000) * rate);
    if (tokens < 1) {
      this.#buckets.set(tenant.id, { tokens, atMs: now });
      throw new RateLimitedError(
        `tenant "${tenant.id}" is over its ${rate} requests a second (burst ${burst}): retry after the Retry-After seconds`,
        "requests_per_second",
        Math.max(1, Math.ceil((1 - tokens) / rate)),
      );
    }
    this.#buckets.set(tenant.id, { tokens: tokens - 1, atMs: now });
  }

  /**
   * Counts a waiting read of the tenant that waits at most `waitMs`, or
   * throws a {@link RateLimitedError} when it holds its cap already, with a
   * `Retry-After` of when its first held wait runs out (a place is free by
   * then at the latest); the returned function ends the wait (once).
   */
  beginWait(tenant: Tenant, waitMs: number): () => void {
    const cap = this.limitsOf(tenant).waiting_reads;
    const now = this.clock.nowMillis();
    const held = this.#waiting.get(tenant.id) ?? [];
    if (held.length >= cap) {
      const first = Math.min(...held);
      throw new RateLimitedError(
        `tenant "${tenant.id}" already holds ${cap} waiting reads: retry after the Retry-After seconds, or read without wait`,
        "waiting_reads",
        Math.max(1, Math.ceil((first - now) / 1000)),
      );
    }
    const deadline = now + waitMs;
    this.#waiting.set(tenant.id, [...held, deadline]);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = [...(this.#waiting.get(tenant.id) ?? [])];
      left.splice(left.indexOf(deadline), 1);
      if (left.length === 0) this.#waiting.delete(tenant.id);
      else this.#waiting.set(tenant.id, left);
    };
  }
}

/** The wait a request holds, in seconds: its `wait` query when more than 0. */
export function heldWait(url: string): number | undefined {
  const wait = Number(new URL(url).searchParams.get("wait") ?? 0);
  return Number.isFinite(wait) && wait > 0 ? wait : undefined;
}

/** The limits as Hono middleware, after authentication (it needs the tenant). */
export function limitRequests(
  limiter: TenantLimiter,
): MiddlewareHandler<{ Variables: { tenant: Tenant } }> {
  return async (c, next) => {
    const tenant = c.get("tenant");
    const wait = heldWait(c.req.url);
    if (wait === undefined) {
      limiter.admit(tenant);
      return next();
    }
    // The cap first: a read it refuses takes no token, and is told to come
    // back when a place frees (not in a second, to be refused again).
    const end = limiter.beginWait(tenant, wait * 1000);
    try {
      limiter.admit(tenant);
    } catch (error) {
      end();
      throw error;
    }
    try {
      await next();
    } finally {
      end();
    }
  };
}
