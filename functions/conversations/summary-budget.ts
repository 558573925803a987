/**
 * What manual and dry-run summaries may cost (docs/architecture.md §8): a
 * per-tenant budget of summary tokens a UTC day, counted in the store
 * ({@link SummaryBudgets}), and a cache of dry-run answers, so asking the
 * same dry run of an unchanged conversation again calls no model.
 *
 * A summary is refused before it is asked once the day's count has reached
 * the budget; the summary that crosses it is let through and counted whole
 * (its size is known only after). The count is the summarizer's reported
 * input + output tokens, or, where it reports none, the estimate (chars / 4)
 * of the band's events and of the summary text.
 */
import { estimateView, tokensFromChars } from "../../core/estimate.ts";
import { SummaryBudgetError } from "../errors.ts";
import type { Clock, Summarizer, SummaryBudgets, Tenant } from "../ports.ts";

const DAY_MS = 86_400_000;

/** The UTC day of `ms` as `YYYY-MM-DD`. */
function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The per-tenant summary budget. */
export class SummaryBudget {
  constructor(
    private readonly budgets: SummaryBudgets,
    /** The deployment's default tokens a day (functions/env.ts); a tenant's own overrides it. */
    private readonly defaultTokensPerDay: number,
    private readonly clock: Clock,
  ) {}

  /**
   * `summarizer` charging `tenant`'s budget: each summary is refused with a
   * {@link SummaryBudgetError} once the day's tokens are used up, else
   * asked and counted.
   */
  charging(summarizer: Summarizer, tenant: Tenant): Summarizer {
    const limit = tenant.limits?.summary_tokens_per_day ?? this.defaultTokensPerDay;
    return {
      summarize: async (request, options) => {
        const now = this.clock.nowMillis();
        const day = utcDay(now);
        const resetsAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
        const used = await this.budgets.used(tenant.id, day);
        if (used >= limit) {
          throw new SummaryBudgetError(
            `tenant "${tenant.id}" used its ${limit} summary tokens of ${day} (UTC): manual and dry-run summaries resume at ${new Date(resetsAt).toISOString()}`,
            { limit, used },
            resetsAt,
            now,
          );
        }
        const summary = await summarizer.summarize(request, options);
        const tokens =
          (summary.input_tokens ?? estimateView(request.events).estimated_tokens) +
          (summary.output_tokens ?? tokensFromChars(summary.text.length));
        // Kept a day past its own, then TTL deletes it.
        await this.budgets.add(
          tenant.id,
          day,
          Math.ceil(tokens),
          Math.floor(resetsAt / 1000) + 86_400,
        );
        return summary;
      },
    };
  }
}

/**
 * Dry-run answers in this process, by a key naming everything the answer
 * depends on; at most `capacity` (the least recently used goes first). An
 * answer being computed is shared by identical requests meanwhile; a failed
 * one is not kept.
 */
export class DryRunCache<T> {
  readonly #answers = new Map<string, Promise<T>>();

  constructor(readonly capacity = 100) {}

  /** The answer kept under `key`, else `compute`'s, kept. */
  answer(key: string, compute: () => Promise<T>): Promise<T> {
    const kept = this.#answers.get(key);
    if (kept) {
      // Most recently used last.
      this.#answers.delete(key);
      this.#answers.set(key, kept);
      return kept;
    }
    const computed = compute();
    this.#answers.set(key, computed);
    computed.catch(() => {
      if (this.#answers.get(key) === computed) this.#answers.delete(key);
    });
    for (const oldest of this.#answers.keys()) {
      if (this.#answers.size <= this.capacity) break;
      this.#answers.delete(oldest);
    }
    return computed;
  }
}
