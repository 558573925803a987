/**
 * `autocompact tune` (docs/architecture.md §12): replays conversations under a grid
 * of D50 configurations and measures what each costs a platform. The replay
 * is core's own ({@link replayPrepared}, the one `simulate` runs); this module
 * adds, on the grid of tune-grid.ts, the per-turn metrics (`U_t`, `V_t`, the prompt-cache misses
 * from the longest common prefix of consecutive views, kept incrementally),
 * the Pareto front and the recommendation.
 */
import type { BandSummary } from "./auto-compaction.ts";
import { type Calibration, estimateTokens, resolveEstimator } from "./calibration.ts";
import type { AutoConfigLayer } from "./config.ts";
import { entryChars, estimateView, tokensFromChars } from "./estimate.ts";
import { type Compaction, type Entry, isKnown, type ToolCallRequest } from "./events.ts";
import { sameJson } from "./json.ts";
import { PRICING_PROFILES, type Prices, type PricingProfile } from "./prices.ts";
import {
  project,
  projectToolRequest,
  projectToolResponse,
  summaryEntries,
  summaryTextOf,
  type ToolNames,
  toolNameFor,
} from "./projection.ts";
import {
  type PreparedStream,
  type ReplayedTurn,
  replayPrepared,
  type SummarizeBand,
} from "./replay.ts";
import type { TurnRange } from "./rules.ts";
import { crossesWithin, type TurnSize } from "./sizes.ts";
import { CallMeter, dollars, type TurnCall, turnCalls } from "./tune-billing.ts";
import { configCalibration, configLayer, type TuneConfig } from "./tune-grid.ts";

/** `cache`'s value for `key`, made by `make` the first time. */
function cached<K extends object, V>(cache: WeakMap<K, V>, key: K, make: (key: K) => V): V {
  // Stryker disable next-line CallExpression: a cache; making the value again gives the same value.
  const known = cache.get(key);
  const value = known ?? make(key);
  // Stryker disable next-line CallExpression: as above.
  cache.set(key, value);
  return value;
}

const turnChars = new WeakMap<PreparedStream, number[][]>();
/** Characters of each entry of each turn of a stream, measured once for every configuration. */
function turnCharsOf(prepared: PreparedStream): number[][] {
  return cached(turnChars, prepared, () =>
    prepared.boundaries.map((boundary) => boundary.entries.map(entryChars)),
  );
}

/** The number of leading entries two views share, compared as JSON values. */
function commonPrefix(a: readonly Entry[], b: readonly Entry[]): number {
  let i = 0;
  // Past the end of `b`, `b[i]` is undefined and never the same JSON as an entry.
  while (i < a.length && sameJson(a[i], b[i])) i++;
  return i;
}

/** The metrics of one conversation under one configuration (docs/architecture.md §12). */
export interface ConversationMetrics {
  readonly turns: number;
  readonly firings: number;
  /** The turns whose evaluation fired, in order. */
  readonly firing_turns: number[];
  /** Largest `U_t`, in estimated tokens. */
  readonly peak_tokens: number;
  readonly overflow_turns: number;
  readonly input_tokens: number;
  readonly cache_miss_tokens: number;
  readonly summary_input_tokens: number;
  readonly summary_output_tokens: number;
  /** The call-by-call bill and risk (core/tune-billing.ts). */
  readonly calls: number;
  readonly cache_read_tokens: number;
  readonly cache_write_tokens: number;
  readonly output_tokens: number;
  readonly overflow_calls: number;
  /** Σ over calls of the share of the raw history still in the view (÷ calls: the retention). */
  readonly retention_sum: number;
  /** Firings whose view after the band is still over the threshold. */
  readonly still_over_firings: number;
  /** Bands of a single turn. */
  readonly one_turn_bands: number;
  /** The most consecutive turns that each fired. */
  readonly longest_firing_run: number;
  /** `U_t` and `V_t` per turn, and each call's input, when asked for (`curves`). */
  readonly before?: number[];
  readonly after?: number[];
  readonly call_inputs?: number[];
}

/**
 * Follows the projected view from turn to turn and counts the tokens of each
 * call that miss the prompt cache. It keeps the previous view's entries and
 * their running character counts: a turn without a band only appends its own
 * entries (the whole previous view is the common prefix); a band re-projects
 * only its own turns and compares from its first turn on. A compaction that
 * reaches turns no band has covered yet (a stream's own manual compactions)
 * falls back to projecting the whole stream so far.
 */
class ViewTracker {
  /** Each turn's entries, and their characters. */
  private readonly turns: readonly (readonly Entry[])[];
  private readonly turnChars: readonly (readonly number[])[];
  private readonly sizes: readonly TurnSize[];
  private view: Entry[] = [];
  /** `chars[i]`: characters of `view[0..i)`. */
  private chars: number[] = [0];
  private readonly names = new Map<string, { name: string; turn: number }[]>();
  /** How many compactions, and of them the stream's own, the view is under. */
  private compactionCount = 0;
  private streamCompactions = 0;
  // Stryker disable next-line UnaryOperator: the sign only decides whether turns 0 and 1 take the from-scratch path, which gives the same view.
  private coveredThrough = -1;

  constructor(private readonly prepared: PreparedStream) {
    this.turns = prepared.boundaries.map((boundary) => boundary.entries);
    this.turnChars = turnCharsOf(prepared);
    this.sizes = prepared.boundaries.map((boundary) => boundary.size);
  }

  /** Characters of the view as it stands (after the last step's evaluation). */
  viewChars(): number {
    return this.chars[this.chars.length - 1] as number;
  }

  /**
   * Updates the view to after the evaluation of `turn`. Returns, in
   * characters, the common prefix with the view before (`previous`, what
   * `cache_miss_tokens` counts from) and with the view before plus the turn's
   * own events (`carried`, where the next call stops sharing the last one's input).
   */
  step(turn: ReplayedTurn): { previous: number; carried: number } {
    const t = turn.turn;
    const entries = this.turns[t] as readonly Entry[];
    entries.forEach((entry) => {
      if (entry.type !== "tool_call_request") return;
      const { id, name } = entry as ToolCallRequest;
      const list = this.names.get(id);
      if (list) list.push({ name, turn: t });
      else this.names.set(id, [{ name, turn: t }]);
    });
    const band = turn.firing?.compaction;
    const boundary = this.prepared.boundaries[t] as PreparedStream["boundaries"][number];
    const streamCompactions = boundary.compactions;
    // A band starts after every compaction before it (D50's rolling range): only the
    // stream's own compactions reach turns already in the view, or the turn itself.
    const general =
      streamCompactions !== this.streamCompactions ||
      this.coveredThrough >= t ||
      this.crossesAt(t - 1, t) ||
      (band !== undefined && this.crossesAt(band.from_turn, band.to_turn + 1));
    this.streamCompactions = streamCompactions;
    // Stryker disable next-line MethodExpression: folding in the compactions already seen again gives the same maximum.
    for (const compaction of turn.compactions.slice(this.compactionCount)) {
      this.coveredThrough = Math.max(this.coveredThrough, compaction.to_turn);
    }
    this.compactionCount = turn.compactions.length;
    return general
      ? this.replace(0, entries, this.projectAll(t, turn.compactions))
      : band
        ? this.rewrite(t, band, entries)
        : this.extend(t, entries);
  }

  /** {@link step} without a band: the turn's entries join the view, which is all shared. */
  private extend(t: number, entries: readonly Entry[]): { previous: number; carried: number } {
    const shared = this.view.length;
    this.append(entries, this.turnChars[t]);
    return { previous: this.chars[shared] as number, carried: this.viewChars() };
  }

  /** {@link step} with a band: the view from the band's first turn on is its turns as projected under it, then the turns after it. */
  private rewrite(
    t: number,
    band: Compaction,
    entries: readonly Entry[],
  ): { previous: number; carried: number } {
    let start = this.view.length;
    for (let k = band.from_turn; k < t; k++) start -= (this.turns[k] as readonly Entry[]).length;
    const tail = this.projectBand(band);
    for (let k = band.to_turn + 1; k <= t; k++) {
      tail.entries.push(...(this.turns[k] as readonly Entry[]));
      tail.chars.push(...(this.turnChars[k] as readonly number[]));
    }
    return this.replace(start, entries, tail.entries, tail.chars);
  }

  /**
   * Whether a turn in `from..to` has tool events that pair across turns
   * (docs/architecture.md §5 "Tool pairs"): a pending call's fate, and a carried
   * result's policy, depend on the next and the previous turn, which the
   * incremental paths do not look at, so those steps project from scratch.
   */
  private crossesAt(from: number, to: number): boolean {
    return crossesWithin(this.sizes, from, to);
  }

  /** Replaces the view from `start` on with `tail`, `incoming` being the turn's own events; returns {@link step}'s prefixes. */
  private replace(
    start: number,
    incoming: readonly Entry[],
    tail: Entry[],
    chars?: readonly number[],
  ): { previous: number; carried: number } {
    const before = this.view.length;
    const shared = start + commonPrefix([...this.view.slice(start), ...incoming], tail);
    this.view.length = start;
    this.chars.length = start + 1;
    this.append(tail, chars);
    // The prefix with the view before is the one with it plus the turn, cut at its end.
    return {
      previous: this.chars[Math.min(shared, before)] as number,
      carried: this.chars[shared] as number,
    };
  }

  private append(entries: readonly Entry[], chars?: readonly number[]): void {
    let total = this.chars[this.chars.length - 1] as number;
    entries.forEach((entry, i) => {
      this.view.push(entry);
      total += chars ? (chars[i] as number) : entryChars(entry);
      this.chars.push(total);
    });
  }

  /** The view of turns 0..t under `compactions`, projected from scratch. */
  private projectAll(t: number, compactions: readonly Compaction[]): Entry[] {
    const raw = this.prepared.boundaries.slice(0, t + 1).flatMap((b) => b.entries);
    return project([...raw, ...compactions]).entries;
  }

  /** The band's own turns as projected under it (it wins every policy it sets there). */
  private projectBand(band: Compaction): { entries: Entry[]; chars: number[] } {
    const entries: Entry[] = [];
    const chars: number[] = [];
    const names: ToolNames = this.names;
    let summarized = false;
    // An entry kept as stored keeps its measured size; a rewritten one is measured anew.
    let stored: Entry | undefined;
    let storedChars = 0;
    const keep = (projected: Entry | undefined) => {
      if (!projected) return;
      entries.push(projected);
      chars.push(projected === stored ? storedChars : entryChars(projected));
    };
    for (let k = band.from_turn; k <= band.to_turn; k++) {
      const turnEntries = this.turns[k] as readonly Entry[];
      const measuredChars = this.turnChars[k] as readonly number[];
      for (let j = 0; j < turnEntries.length; j++) {
        const entry = turnEntries[j] as Entry;
        stored = entry;
        storedChars = measuredChars[j] as number;
        if (!isKnown(entry) || entry.type === "config_delta") keep(entry);
        else if (band.summary) {
          if (!summarized) summaryEntries(entry.timestamp, summaryTextOf(band)).forEach(keep);
          summarized = true;
        } else if (entry.type === "chat_response") {
          if (entry.reasoning === undefined || band.reasoning === undefined) keep(entry);
        } else if (entry.type === "tool_call_request") {
          keep(projectToolRequest(entry, band.tool_calls));
        } else if (entry.type === "tool_call_response") {
          keep(projectToolResponse(entry, band.tool_calls, () => toolNameFor(names, entry.id, k)));
        } else keep(entry);
      }
    }
    return { entries, chars };
  }
}

/** What {@link tuneConversation} needs besides the stream and the configuration. */
export interface TuneOptions {
  readonly contextWindow: number;
  /** Layers below the configuration's own (the user's `--config`: `min_turns`, …). */
  readonly layers?: readonly AutoConfigLayer[];
  /** Summaries for a summary rule (cache them: see {@link cachedSummaries}). */
  readonly summarize?: SummarizeBand;
  /** Keep `U_t` and `V_t` per turn (for size curves). */
  readonly curves?: boolean;
  /** A calibration to replay with (`--tokens-per-char A --overhead B`); else chars / 4. */
  readonly calibration?: Calibration;
  /** The provider's cache rules the calls are billed under (default `anthropic-5m`). */
  readonly profile?: PricingProfile;
}

const turnCallsCache = new WeakMap<PreparedStream, TurnCall[][]>();
/** The model calls of each turn of a stream, found once for every configuration. */
function callsOf(prepared: PreparedStream): TurnCall[][] {
  return cached(turnCallsCache, prepared, () => {
    const chars = turnCharsOf(prepared);
    return prepared.boundaries.map((b, t) => turnCalls(b.entries, chars[t] as number[]));
  });
}

/**
 * Replays one conversation under one configuration with the D50 step the
 * service runs ({@link replayPrepared}) and measures it: with `U_t` the
 * estimate before the evaluation after turn `t` and `V_t` after it, the
 * peak and overflow turns over `U_t`, input tokens the sum of `V_t` for
 * `t = 0..n-2`, and cache misses `V_t` minus the longest common prefix of
 * `V_{t-1}` and `V_t`.
 */
export async function tuneConversation(
  prepared: PreparedStream,
  config: TuneConfig,
  options: TuneOptions,
): Promise<ConversationMetrics> {
  // Without usage in a replay every estimator is chars / 4; a given calibration replaces it.
  const calibration = configCalibration(config, options.calibration);
  const estimator = resolveEstimator("chars", calibration);
  const tokens = (chars: number) => estimateTokens(estimator, chars);
  const tracker = new ViewTracker(prepared);
  const profile = options.profile ?? PRICING_PROFILES["anthropic-5m"];
  const meter = new CallMeter(profile, options.contextWindow, tokens, options.curves);
  const calls = callsOf(prepared);
  const chars = turnCharsOf(prepared);
  let carried = 0;
  const risk = { stillOver: 0, oneTurn: 0, run: 0, longestRun: 0 };
  const last = prepared.boundaries.length - 1;
  const before: number[] = [];
  const after: number[] = [];
  const totals = { peak: 0, overflow: 0, input: 0, miss: 0, summaryIn: 0, summaryOut: 0 };
  const firingTurns: number[] = [];
  await replayPrepared(prepared, {
    layers: options.layers ? [...options.layers, configLayer(config)] : [configLayer(config)],
    model: { context_window: options.contextWindow },
    ...(options.summarize ? { summarize: options.summarize } : {}),
    ...(calibration ? { calibration } : {}),
    onTurn: (turn) => {
      const turnTotal = (chars[turn.turn] as number[]).reduce((sum, c) => sum + c, 0);
      meter.turn(calls[turn.turn] as TurnCall[], tracker.viewChars(), carried, turnTotal);
      const prefix = tracker.step(turn);
      carried = prefix.carried;
      // The first call has nothing cached, not even the overhead a calibration adds.
      const shared = turn.turn === 0 ? 0 : tokens(prefix.previous);
      const u = turn.estimated_tokens;
      const v = turn.estimated_tokens_after;
      totals.peak = Math.max(totals.peak, u);
      if (u > options.contextWindow) totals.overflow++;
      if (turn.turn < last) {
        totals.input += v;
        totals.miss += v - shared;
      }
      if (turn.firing) {
        const firing = turn.firing;
        if (firing.estimated_tokens_after > firing.threshold) risk.stillOver++;
        if (firing.from_turn === firing.to_turn) risk.oneTurn++;
        risk.run = firingTurns.at(-1) === turn.turn - 1 ? risk.run + 1 : 1;
        risk.longestRun = Math.max(risk.longestRun, risk.run);
        firingTurns.push(turn.turn);
        totals.summaryIn += turn.firing.summary?.input_tokens ?? 0;
        totals.summaryOut += turn.firing.summary?.output_tokens ?? 0;
      }
      before.push(u);
      after.push(v);
    },
  });
  return {
    turns: prepared.boundaries.length,
    firings: firingTurns.length,
    firing_turns: firingTurns,
    peak_tokens: totals.peak,
    overflow_turns: totals.overflow,
    input_tokens: totals.input,
    cache_miss_tokens: totals.miss,
    summary_input_tokens: totals.summaryIn,
    summary_output_tokens: totals.summaryOut,
    ...meter.totals,
    still_over_firings: risk.stillOver,
    one_turn_bands: risk.oneTurn,
    longest_firing_run: risk.longestRun,
    ...(options.curves ? { before, after, call_inputs: meter.inputs as number[] } : {}),
  };
}

/**
 * The offline stand-in summary's size: this fraction of the band's raw
 * characters. Not a summary: a placeholder of that size, labelled as an
 * estimate wherever it is reported.
 */
export const STAND_IN_SUMMARY_RATIO = 0.1;

/** The model name the stand-in reports, so its figures are never taken for a model's. */
export const STAND_IN_MODEL = "stand-in (estimate)";

/**
 * A stand-in summarizer for offline tuning: text of
 * {@link STAND_IN_SUMMARY_RATIO} of the band's raw characters (at least one),
 * costing the band's raw events in and that text out.
 */
export const standInSummary: SummarizeBand = async (_range, rawEvents) => {
  const raw = estimateView(rawEvents);
  const length = Math.max(1, Math.round(raw.chars * STAND_IN_SUMMARY_RATIO));
  const text = "".padEnd(length, "stand-in summary ");
  return {
    text,
    model: STAND_IN_MODEL,
    input_tokens: raw.estimated_tokens,
    output_tokens: tokensFromChars(length),
    latency_ms: 0,
  };
};

/**
 * Wraps a summarizer of one conversation so each band (range and rule) is
 * summarized once, however many configurations fire it.
 */
export function cachedSummaries(summarize: SummarizeBand): SummarizeBand {
  const cache = new Map<string, Promise<BandSummary>>();
  return (range: TurnRange, rawEvents, rule) => {
    const key = `${range.from_turn}..${range.to_turn} ${JSON.stringify(rule)}`;
    let summary = cache.get(key);
    if (!summary) {
      summary = summarize(range, rawEvents, rule);
      cache.set(key, summary);
    }
    return summary;
  };
}

/** One configuration's line of `tune --json` (docs/architecture.md §12, docs/tuning.md). */
export interface ConfigResult {
  readonly config: TuneConfig;
  readonly conversations: number;
  readonly turns: number;
  readonly firings: number;
  readonly peak_utilization: number;
  readonly overflow_turns: number;
  readonly input_tokens: number;
  readonly cache_miss_tokens: number;
  readonly effective_input_cost: number;
  readonly summary_input_tokens?: number;
  readonly summary_output_tokens?: number;
  readonly calls: number;
  readonly cache_read_tokens: number;
  readonly cache_write_tokens: number;
  readonly output_tokens: number;
  readonly dollars: number;
  readonly overflow_calls: number;
  readonly still_over_firings: number;
  readonly one_turn_bands: number;
  readonly longest_firing_run: number;
  readonly retention: number;
  pareto: boolean;
  recommended: boolean;
}

/** How calls are billed: the provider's cache rules and the prices. */
export interface Billing {
  readonly profile: PricingProfile;
  readonly prices: Prices;
}

/** One conversation's dollars under a configuration. */
export function conversationDollars(metrics: ConversationMetrics, billing: Billing): number {
  return dollars(metrics, billing.prices, billing.profile);
}

/** Sums one configuration's conversations; `cacheReadPrice` is a cached token's price in `effective_input_cost` (uncached = 1). */
export function summarizeConfig(
  config: TuneConfig,
  metrics: readonly ConversationMetrics[],
  contextWindow: number,
  cacheReadPrice: number,
  billing: Billing,
): ConfigResult {
  const sum = (pick: (m: ConversationMetrics) => number) =>
    metrics.reduce((total, m) => total + pick(m), 0);
  const input = sum((m) => m.input_tokens);
  const miss = sum((m) => m.cache_miss_tokens);
  const calls = sum((m) => m.calls);
  return {
    config,
    conversations: metrics.length,
    turns: sum((m) => m.turns),
    firings: sum((m) => m.firings),
    peak_utilization: Math.max(0, ...metrics.map((m) => m.peak_tokens)) / contextWindow,
    overflow_turns: sum((m) => m.overflow_turns),
    input_tokens: input,
    cache_miss_tokens: miss,
    effective_input_cost: miss + cacheReadPrice * (input - miss),
    ...(config.summary
      ? {
          summary_input_tokens: sum((m) => m.summary_input_tokens),
          summary_output_tokens: sum((m) => m.summary_output_tokens),
        }
      : {}),
    calls,
    cache_read_tokens: sum((m) => m.cache_read_tokens),
    cache_write_tokens: sum((m) => m.cache_write_tokens),
    output_tokens: sum((m) => m.output_tokens),
    dollars: sum((m) => conversationDollars(m, billing)),
    overflow_calls: sum((m) => m.overflow_calls),
    still_over_firings: sum((m) => m.still_over_firings),
    one_turn_bands: sum((m) => m.one_turn_bands),
    longest_firing_run: Math.max(0, ...metrics.map((m) => m.longest_firing_run)),
    retention: calls ? sum((m) => m.retention_sum) / calls : 1,
    pareto: false,
    recommended: false,
  };
}

/**
 * Marks the Pareto front of dollars against overflowing calls (no other
 * configuration at most as costly and overflowing as often, and better in
 * one) and the recommendation (`recommended`, from the verdict, or none),
 * then sorts by dollars (a stable sort: grid order among equals). Mutates
 * and returns `results`.
 */
export function rankResults(
  results: ConfigResult[],
  recommended: TuneConfig | null,
): ConfigResult[] {
  for (const result of results) {
    result.pareto = !results.some(
      (other) =>
        other.dollars <= result.dollars &&
        other.overflow_calls <= result.overflow_calls &&
        (other.dollars < result.dollars || other.overflow_calls < result.overflow_calls),
    );
    result.recommended = result.config === recommended;
  }
  return results.sort((a, b) => a.dollars - b.dollars);
}
