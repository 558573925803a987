/**
 * Summary tokens per tenant and day in memory: the tests' and the local
 * in-memory runtime's. Only a tenant's latest day is kept (an earlier one is
 * over; DynamoDB's TTL does the same, later).
 */
import type { SummaryBudgets } from "../ports.ts";

export class MemorySummaryBudgets implements SummaryBudgets {
  readonly #latest = new Map<string, { readonly day: string; readonly tokens: number }>();

  async used(tenant: string, day: string): Promise<number> {
    return this.#used(tenant, day);
  }

  #used(tenant: string, day: string): number {
    const latest = this.#latest.get(tenant);
    return latest?.day === day ? latest.tokens : 0;
  }

  async add(
    tenant: string,
    day: string,
    tokens: number,
    _expiresAtSeconds: number,
  ): Promise<number> {
    // No await between the read and the write: concurrent adds lose nothing.
    const total = this.#used(tenant, day) + tokens;
    const latest = this.#latest.get(tenant);
    // A count for an earlier day than the latest is added to nothing kept.
    if (latest === undefined || latest.day <= day) this.#latest.set(tenant, { day, tokens: total });
    return total;
  }
}
