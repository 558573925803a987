import { describe, expect, it } from "vitest";
import { RateLimitedError } from "../errors.ts";
import type { Tenant } from "../ports.ts";
import { heldWait, TenantLimiter } from "./limits.ts";

const DEFAULTS = { requests_per_second: 2, burst: 3, waiting_reads: 2 };
const A: Tenant = { id: "a" };
const B: Tenant = { id: "b" };

function limiter() {
  const clock = { now: 1_000_000, nowMillis: () => clock.now };
  return { clock, limiter: new TenantLimiter(clock, DEFAULTS) };
}

function refusal(run: () => unknown): RateLimitedError {
  try {
    run();
  } catch (error) {
    if (error instanceof RateLimitedError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("TenantLimiter.admit (token bucket)", () => {
  it("admits a burst, then refuses with the seconds until a token is back", () => {
    const { limiter: l } = limiter();
    l.admit(A);
    l.admit(A);
    l.admit(A);
    const refused = refusal(() => l.admit(A));
    expect(refused.status).toBe(429);
    expect(refused.type).toBe("/problems/rate-limited");
    expect(refused.limit).toBe("requests_per_second");
    // 2 a second: a token is back in 0.5 s, said as 1 whole second.
    expect(refused.responseHeaders()).toEqual({ "Retry-After": "1" });
    expect(refused.problemExtensions()).toEqual({ limit: "requests_per_second", retry_after: 1 });
  });

  it("refills at the rate, never above the burst", () => {
    const { clock, limiter: l } = limiter();
    for (let i = 0; i < 3; i++) l.admit(A);
    clock.now += 500; // one token back
    l.admit(A);
    expect(() => l.admit(A)).toThrow(RateLimitedError);
    clock.now += 60_000; // a minute idle: 3 tokens, not 120
    for (let i = 0; i < 3; i++) l.admit(A);
    expect(() => l.admit(A)).toThrow(RateLimitedError);
  });

  it("keeps one bucket per tenant, each with its own limits over the defaults", () => {
    const { limiter: l } = limiter();
    for (let i = 0; i < 3; i++) l.admit(A);
    expect(() => l.admit(A)).toThrow(RateLimitedError);
    l.admit(B);
    const big: Tenant = { id: "big", limits: { burst: 10 } };
    for (let i = 0; i < 10; i++) l.admit(big);
    expect(() => l.admit(big)).toThrow(RateLimitedError);
    expect(l.limitsOf(big)).toEqual({ requests_per_second: 2, burst: 10, waiting_reads: 2 });
  });
});

describe("TenantLimiter.beginWait (waiting reads)", () => {
  it("holds at most the cap at once; an ended wait frees its place, once", () => {
    const { limiter: l } = limiter();
    const first = l.beginWait(A, 25_000);
    l.beginWait(A, 25_000);
    const refused = refusal(() => l.beginWait(A, 25_000));
    expect(refused.limit).toBe("waiting_reads");
    // Another tenant is not counted with A.
    l.beginWait(B, 25_000);
    first();
    first();
    l.beginWait(A, 25_000);
    expect(() => l.beginWait(A, 25_000)).toThrow(RateLimitedError);
  });

  it("says to retry when the first held wait runs out", () => {
    const { clock, limiter: l } = limiter();
    l.beginWait(A, 25_000);
    clock.now += 10_000;
    const end = l.beginWait(A, 5_000);
    // Held: until +25 s and until +15 s; now +10 s.
    expect(refusal(() => l.beginWait(A, 25_000)).responseHeaders()).toEqual({
      "Retry-After": "5",
    });
    end();
    l.beginWait(A, 20_000);
    // Held: until +25 s and +30 s: the first in 15 s.
    expect(refusal(() => l.beginWait(A, 1_000)).retryAfterSeconds).toBe(15);
    clock.now += 15_500; // past the first one's deadline, its read not ended yet
    expect(refusal(() => l.beginWait(A, 1_000)).retryAfterSeconds).toBe(1);
  });

  it("takes a tenant's own cap", () => {
    const { limiter: l } = limiter();
    const one: Tenant = { id: "one", limits: { waiting_reads: 1 } };
    l.beginWait(one, 1_000);
    expect(() => l.beginWait(one, 1_000)).toThrow(RateLimitedError);
  });
});

describe("heldWait", () => {
  it("is the wait query's seconds when more than 0", () => {
    expect(heldWait("http://x/v1/conversations/c/projection?after_turn=2&wait=25")).toBe(25);
    expect(heldWait("http://x/v1/conversations/c/turns?wait=1")).toBe(1);
    expect(heldWait("http://x/v1/conversations/c/projection?after_turn=2&wait=0")).toBeUndefined();
    expect(heldWait("http://x/v1/conversations/c/projection?after_turn=2")).toBeUndefined();
    expect(heldWait("http://x/v1/conversations/c/projection?wait=soon")).toBeUndefined();
  });
});
