/**
 * What `autocompact tune` concludes from its bills (docs/tuning.md, "The
 * recommendation"): the cheapest configuration in dollars among those with
 * the fewest overflowing calls, enough retention and `keep_last` ≥ 1; the
 * warnings that withhold or qualify it (a best value on the grid's edge,
 * a tie within the noise, too few conversations that fire); a bootstrap
 * over conversations of its saving against D50's default; and one answer
 * per class of conversation.
 */
import type { Entry } from "./events.ts";
import { mulberry32 } from "./random.ts";
import { configExtras, type Grid, NUMERIC_KEYS, type TuneConfig } from "./tune-grid.ts";

/** One conversation's figures under one configuration, as the verdict weighs them. */
export interface Bill {
  readonly dollars: number;
  readonly overflow_calls: number;
  readonly calls: number;
  readonly retention_sum: number;
  readonly firings: number;
}

/** A configuration with its bill per conversation (one order for every candidate). */
export interface Candidate {
  readonly config: TuneConfig;
  readonly bills: readonly Bill[];
}

/** A reason the answer is withheld or qualified. */
export interface TuneWarning {
  readonly code: "grid_edge" | "tie" | "too_few_firing";
  readonly detail: string;
}

/** The recommendation's saving against D50's default, as a share of the default's dollars. */
export interface Saving {
  readonly median: number;
  readonly p05: number;
  readonly p95: number;
  /** The share of resamples where the recommendation costs less than the default. */
  readonly win_share: number;
}

/** The class of a conversation: tool-heavy when at least half its bytes are tool results. */
export type ConversationClass = "tool-heavy" | "chat-heavy";

/** One class's own recommendation. */
export interface ClassVerdict {
  readonly class: ConversationClass;
  readonly conversations: number;
  readonly recommended: TuneConfig | null;
}

/** The last line of `tune --json` (`{"summary": …}`). */
export interface TuneSummary {
  readonly recommended: TuneConfig | null;
  readonly reason: string;
  readonly warnings: TuneWarning[];
  readonly saving_vs_default: Saving | null;
  readonly classes: ClassVerdict[];
}

/** Fewer conversations than this that fire under some configuration give no answer. */
export const MIN_FIRING_CONVERSATIONS = 5;

/** Resamples of every bootstrap; fixed with the seed so a run repeats exactly. */
export const BOOTSTRAP_RESAMPLES = 1000;

/** The options of {@link tuneVerdict}. */
export interface VerdictOptions {
  /** The least retention a recommendation keeps (`--min-retention`, default 0.2). */
  readonly minRetention: number;
  /** The grid swept, for the edge warnings. */
  readonly grid: Grid;
  /** D50's default configuration's bill per conversation. */
  readonly defaults: readonly Bill[];
  /** Each conversation's class. */
  readonly classes: readonly ConversationClass[];
  /** The bootstrap's seed. */
  readonly seed?: number;
}

/** The `q` quantile (0 < q ≤ 1) of sorted values, never empty: nearest rank, the ⌈q·n⌉-th smallest. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.ceil(q * sorted.length) - 1] as number;
}

/** Resamples `indices` with replacement and calls `each` with every resample's sums of `a` and `b`. */
function resample(
  indices: readonly number[],
  a: readonly Bill[],
  b: readonly Bill[],
  seed: number,
): { a: number; b: number }[] {
  const next = mulberry32(seed);
  const out: { a: number; b: number }[] = [];
  for (let r = 0; r < BOOTSTRAP_RESAMPLES; r++) {
    let sumA = 0;
    let sumB = 0;
    for (let k = 0; k < indices.length; k++) {
      const i = indices[Math.floor(next() * indices.length)] as number;
      sumA += (a[i] as Bill).dollars;
      sumB += (b[i] as Bill).dollars;
    }
    out.push({ a: sumA, b: sumB });
  }
  return out;
}

/** A candidate's totals over some conversations. */
interface Totals {
  readonly candidate: Candidate;
  readonly dollars: number;
  readonly overflow_calls: number;
  readonly retention: number;
}

function totalsOver(candidate: Candidate, indices: readonly number[]): Totals {
  let dollars = 0;
  let overflow = 0;
  let calls = 0;
  let retention = 0;
  for (const i of indices) {
    const bill = candidate.bills[i] as Bill;
    dollars += bill.dollars;
    overflow += bill.overflow_calls;
    calls += bill.calls;
    retention += bill.retention_sum;
  }
  return { candidate, dollars, overflow_calls: overflow, retention: calls ? retention / calls : 1 };
}

/** A configuration in words, for warnings and reasons. */
export function describeConfig(config: TuneConfig): string {
  const rule = config.summary
    ? "summary"
    : `reasoning ${config.reasoning ?? "keep"}, tool_calls ${config.tool_calls ?? "keep"}`;
  const extra = Object.entries(configExtras(config))
    .map(([key, value]) => `, ${key} ${value}`)
    .join("");
  return `trigger_ratio ${config.trigger_ratio}, keep_first ${config.keep_first}, keep_last ${config.keep_last}, ${rule}${extra}`;
}

/** The choice over some conversations: the best candidate, or none and why. */
function choose(
  candidates: readonly Candidate[],
  indices: readonly number[],
  options: VerdictOptions,
): { best: Totals | null; reason: string; warnings: TuneWarning[] } {
  const warnings: TuneWarning[] = [];
  const firing = indices.filter((i) => candidates.some((c) => (c.bills[i] as Bill).firings > 0));
  if (firing.length < MIN_FIRING_CONVERSATIONS) {
    const detail = `${firing.length} of ${indices.length} conversation(s) fire under any configuration; at least ${MIN_FIRING_CONVERSATIONS} are needed before the configurations differ for a reason`;
    return { best: null, reason: detail, warnings: [{ code: "too_few_firing", detail }] };
  }
  // Enough retention and the turn just finished kept whole first, so a configuration that
  // loses the history cannot set the overflow bar the others are held to.
  const admissible = candidates
    .map((c) => totalsOver(c, indices))
    .filter((t) => t.retention >= options.minRetention && t.candidate.config.keep_last >= 1);
  if (admissible.length === 0) {
    return {
      best: null,
      reason: `no configuration keeps retention ≥ ${options.minRetention} without compacting the turn just finished`,
      warnings,
    };
  }
  const fewest = Math.min(...admissible.map((t) => t.overflow_calls));
  const eligible = admissible
    .filter((t) => t.overflow_calls === fewest)
    // A stable sort: ties keep grid order.
    .sort((a, b) => a.dollars - b.dollars);
  const best = eligible[0] as Totals;
  const runner = eligible[1];
  if (runner) {
    const diffs = resample(
      indices,
      runner.candidate.bills,
      best.candidate.bills,
      options.seed ?? 30,
    )
      .map((r) => r.a - r.b)
      .sort((x, y) => x - y);
    if (quantile(diffs, 0.05) <= 0) {
      const detail = `${describeConfig(best.candidate.config)} ($${best.dollars.toFixed(2)}) and ${describeConfig(runner.candidate.config)} ($${runner.dollars.toFixed(2)}) tie: in 5% or more of ${BOOTSTRAP_RESAMPLES} resamples of the conversations the second costs no more than the first`;
      return { best: null, reason: detail, warnings: [{ code: "tie", detail }] };
    }
  }
  warnings.push(...edgeWarnings(best.candidate.config, options.grid));
  return {
    best,
    reason: `the fewest dollars ($${best.dollars.toFixed(2)}) among ${eligible.length} configuration(s) with retention ≥ ${options.minRetention}, keep_last ≥ 1 and, of those, the fewest overflowing calls (${fewest})`,
    warnings,
  };
}

/** `grid_edge` for each swept key whose best value is the lowest or highest swept, where the grid can widen. */
function edgeWarnings(config: TuneConfig, grid: Grid): TuneWarning[] {
  const warnings: TuneWarning[] = [];
  for (const key of NUMERIC_KEYS) {
    const swept = grid[key.name] as readonly unknown[] | undefined;
    if (!swept) continue;
    const values = swept.filter((v): v is number => typeof v === "number");
    if (new Set(values).size < 2) continue;
    // A value that is not a number (a key the configuration leaves out) is neither end: no warning.
    const value = config[key.name];
    const low = Math.min(...values);
    const high = Math.max(...values);
    if (value === low && low > key.least) {
      warnings.push({
        code: "grid_edge",
        detail: `${key.name} = ${value} is the lowest value swept: widen ${key.name} lower`,
      });
    } else if (value === high && high < key.most) {
      warnings.push({
        code: "grid_edge",
        detail: `${key.name} = ${value} is the highest value swept: widen ${key.name} higher`,
      });
    }
  }
  return warnings;
}

/** A conversation's class: tool-heavy when tool results hold at least half its bytes. */
export function classify(
  entries: readonly Entry[],
  chars: (entry: Entry) => number,
): ConversationClass {
  let tool = 0;
  let all = 0;
  for (const entry of entries) {
    const size = chars(entry);
    all += size;
    if (entry.type === "tool_call_response") tool += size;
  }
  return all > 0 && tool * 2 >= all ? "tool-heavy" : "chat-heavy";
}

/** The summary line of `tune --json`: recommendation, reason, warnings, saving, classes. */
export function tuneVerdict(
  candidates: readonly Candidate[],
  options: VerdictOptions,
): TuneSummary {
  const all = options.classes.map((_, i) => i);
  const { best, reason, warnings } = choose(candidates, all, options);
  let saving: Saving | null = null;
  if (best) {
    const draws = resample(all, best.candidate.bills, options.defaults, options.seed ?? 30);
    const savings = draws.map((d) => (d.b > 0 ? (d.b - d.a) / d.b : 0)).sort((x, y) => x - y);
    saving = {
      median: quantile(savings, 0.5),
      p05: quantile(savings, 0.05),
      p95: quantile(savings, 0.95),
      win_share: draws.filter((d) => d.a < d.b).length / draws.length,
    };
  }
  const classes: ClassVerdict[] = (["tool-heavy", "chat-heavy"] as const).flatMap((name) => {
    const indices = all.filter((i) => options.classes[i] === name);
    if (indices.length === 0) return [];
    const chosen = choose(candidates, indices, options).best;
    return [
      { class: name, conversations: indices.length, recommended: chosen?.candidate.config ?? null },
    ];
  });
  return {
    recommended: best?.candidate.config ?? null,
    reason,
    warnings,
    saving_vs_default: saving,
    classes,
  };
}
