/**
 * The D50 step on stream files: once on a stream as stored
 * (`evaluateStream`, `autocompact evaluate`) and turn by turn as the
 * compactor would run it (`simulateStream`, `autocompact simulate`). Both
 * run {@link stepAutoCompaction} and estimate through per-turn sizes, so a
 * replay of a long stream stays linear.
 *
 * With `when: "idle"` the replay takes the rests from the events'
 * timestamps: a deferred decision fires, as the service's timer would,
 * when the rest before the next turn (from this turn's last event to the
 * next turn's first) reaches `idle_seconds`, and after the last turn (the
 * stream has ended: the conversation rests from then on).
 */

import {
  type AutoCompactionStep,
  type BandSummary,
  type FiringContext,
  stepAutoCompaction,
  type TriggerState,
} from "./auto-compaction.ts";
import type { Calibration } from "./calibration.ts";
import { type ModelCatalog, type ModelInfo, resolveContextWindow } from "./catalog.ts";
import {
  type AutoConfig,
  type AutoConfigLayer,
  resolveAutoConfig,
  type SummaryRuleConfig,
  streamConfigLayers,
} from "./config.ts";
import { SummaryRequiredError } from "./errors.ts";
import { tokensFromChars } from "./estimate.ts";
import { type Compaction, type Entry, isKnown, type KnownEntry } from "./events.ts";
import { compactionsOf } from "./projection.ts";
import { afterLastCompaction, type TurnRange } from "./rules.ts";
import { crossesWithin, measureTurn, projectedCharsFromSizes, type TurnSize } from "./sizes.ts";
import { timestampNanos } from "./timestamp.ts";
import { isConversationEvent, splitTurns } from "./turns.ts";

/** Everything besides the stream that an evaluation depends on. */
export interface EvaluationContext {
  /** Configuration layers below the stream's own config deltas (the CLI's `--config` files). */
  readonly layers?: readonly AutoConfigLayer[];
  readonly model?: ModelInfo;
  readonly catalog?: ModelCatalog;
  /** A calibration to replay with (`--tokens-per-char A --overhead B`); else the config's estimator without usage: chars / 4. */
  readonly calibration?: Calibration;
}

/** Generates summary text for a band from the raw events of its turns. */
export type SummarizeBand = (
  range: TurnRange,
  rawEvents: readonly Entry[],
  rule: SummaryRuleConfig,
) => Promise<BandSummary>;

/** Resolves the auto config in force at the end of a stream. */
export function configForStream(
  entries: readonly Entry[],
  layers?: readonly AutoConfigLayer[],
): AutoConfig {
  return layeredConfig(layers, streamConfigLayers(entries));
}

/** The auto config of the `base` layers (the CLI's `--config` files) under a stream's own `stream` layers. */
function layeredConfig(
  base: readonly AutoConfigLayer[] | undefined,
  stream: readonly AutoConfigLayer[],
): AutoConfig {
  // Stryker disable next-line ArrayDeclaration: a layer that is not an object sets no key, so a list of one string resolves as the empty list.
  return resolveAutoConfig(...(base ?? []), ...stream);
}

/** The trigger state and firing context of turns measured as `sizes` under `compactions`. */
function stepInputs(
  sizes: readonly TurnSize[],
  compactions: readonly Compaction[],
  config: AutoConfig,
  contextWindow: number | undefined,
  nowMillis: number,
  calibration: Calibration | undefined,
): { state: TriggerState; firing: () => FiringContext } {
  const estimate = (all: readonly Compaction[]) =>
    tokensFromChars(projectedCharsFromSizes(sizes, all));
  return {
    state: {
      config,
      turn_count: sizes.length,
      after_last_compaction: afterLastCompaction(compactions),
      estimated_tokens: estimate(compactions),
      context_window: contextWindow,
      ...(calibration ? { calibration } : {}),
    },
    firing: () => ({
      compactions,
      nowMillis,
      estimateWith: (compaction) => estimate([...compactions, compaction]),
    }),
  };
}

/**
 * Runs the D50 step once, after the last turn of a stream as stored, the
 * conversation resting since its last event until `nowMillis`. With
 * `summarize`, a summary rule summarizes the raw events of the range;
 * without it, it stops at `needs_summary`.
 */
export function evaluateStream(
  entries: readonly Entry[],
  context: EvaluationContext & { readonly nowMillis: number },
  summarize?: SummarizeBand,
): Promise<AutoCompactionStep> {
  const turns = splitTurns(entries);
  const names = new Map<string, string>();
  const inputs = stepInputs(
    turns.map((events) => measureTurn(events, names)),
    compactionsOf(entries),
    configForStream(entries, context.layers),
    resolveContextWindow(context.model, context.catalog),
    context.nowMillis,
    context.calibration,
  );
  const last = entries.findLast(isKnown);
  const lastMillis = last ? millisOf(last) : context.nowMillis;
  const rested = Math.max(0, context.nowMillis - lastMillis) / 1000;
  return stepAutoCompaction({
    ...inputs,
    state: { ...inputs.state, rested_seconds: rested },
    ...(summarize
      ? {
          summarize: (range, rule) =>
            summarize(range, rawEvents(turns.slice(range.from_turn, range.to_turn + 1)), rule),
        }
      : {}),
  });
}

/** An entry's timestamp in milliseconds since the epoch. */
function millisOf(entry: KnownEntry): number {
  return Number(timestampNanos(entry.timestamp) / 1_000_000n);
}

/** The raw events of some turns (compactions are overlays, never summarized). */
function rawEvents(turns: readonly (readonly Entry[])[]): Entry[] {
  return turns.flat().filter((entry) => entry.type !== "compaction");
}

/** One firing of a replay. */
export interface Firing {
  /** The turn after which the trigger fired (0-based, the last turn at that point). */
  readonly turn: number;
  readonly from_turn: number;
  readonly to_turn: number;
  readonly estimated_tokens: number;
  readonly estimated_tokens_after: number;
  readonly threshold: number;
  readonly compaction: Compaction;
  /** The summary the band was built from, for a summary rule. */
  readonly summary?: BandSummary;
}

/** The outcome of a replay: every firing and the stream with the bands inserted. */
export interface Simulation {
  readonly firings: Firing[];
  readonly entries: Entry[];
}

/** One turn boundary of a stream: where the replay evaluates, with what it knows there. */
interface TurnBoundary {
  /** Index in the stream of the entry that closed the turn (the band goes before it). */
  readonly index: number;
  /** The turn's entries, metadata included (as the service stores a posted turn), compactions out. */
  readonly entries: readonly Entry[];
  readonly size: TurnSize;
  /** How many of the stream's own compactions precede the boundary. */
  readonly compactions: number;
  /** How many of the stream's own config layers precede the boundary. */
  readonly layers: number;
  /** The timestamp (ms) of the last known entry before the boundary. */
  readonly nowMillis: number;
  /** The rest (ms) from there to the next turn's first entry; `null` after the last turn. */
  readonly restMillis: number | null;
}

/**
 * A stream split at its turn boundaries and measured once, so that replaying
 * it under many configurations (`autocompact tune`) reads and measures the
 * events only once.
 */
export interface PreparedStream {
  readonly entries: readonly Entry[];
  readonly boundaries: readonly TurnBoundary[];
  /** The stream's own compactions, in stream order. */
  readonly compactions: readonly Compaction[];
  /** The auto layers of the stream's config deltas, in stream order. */
  readonly layers: readonly AutoConfigLayer[];
}

/**
 * Whether a replayed conversation rests long enough after a turn for an idle
 * timer of `idleSeconds` to fire before the next turn (`tune` weighs the
 * prompt-cache cost of `when: "idle"` with it).
 */
export function restsLongEnough(boundary: Pick<TurnBoundary, "restMillis">, idleSeconds: number) {
  return boundary.restMillis === null || boundary.restMillis >= idleSeconds * 1000;
}

/** Splits and measures a stream for {@link replayPrepared}. */
export function prepareStream(entries: readonly Entry[]): PreparedStream {
  const boundaries: Omit<TurnBoundary, "restMillis">[] = [];
  // `starts[t]`: when turn t + 1 starts, the time of the turn_start that opens it.
  const starts: number[] = [];
  const compactions: Compaction[] = [];
  const layers: AutoConfigLayer[] = [];
  const names = new Map<string, string>();
  let turnEntries: Entry[] = [];
  // The conversation events of the turn so far (a turn_start opens a turn only after one).
  let turnEvents = 0;
  let lastMillis = 0;
  const finishTurn = (index: number) => {
    boundaries.push({
      index,
      entries: turnEntries,
      // Metadata and entries it does not know count no characters.
      size: measureTurn(turnEntries, names),
      compactions: compactions.length,
      layers: layers.length,
      nowMillis: lastMillis,
    });
    turnEntries = [];
    turnEvents = 0;
  };
  entries.forEach((entry, index) => {
    if (entry.type === "turn_start" && turnEvents > 0) {
      finishTurn(index);
      starts.push(millisOf(entry as KnownEntry));
    }
    if (entry.type === "compaction") compactions.push(entry as Compaction);
    else turnEntries.push(entry);
    if (entry.type === "config_delta") layers.push(...streamConfigLayers([entry]));
    else if (isConversationEvent(entry)) turnEvents++;
    if (isKnown(entry)) lastMillis = millisOf(entry);
  });
  if (turnEvents > 0) finishTurn(entries.length);
  const rested = boundaries.map((boundary, turn) => {
    const next = starts[turn];
    return {
      ...boundary,
      restMillis: next === undefined ? null : Math.max(0, next - boundary.nowMillis),
    };
  });
  return { entries, boundaries: rested, compactions, layers };
}

/** What the replay saw at one turn boundary (docs/architecture.md §12's `U_t` and `V_t`). */
export interface ReplayedTurn {
  /** The turn (0-based) just stored and evaluated. */
  readonly turn: number;
  /** Estimate of the view of turns 0..turn before the evaluation (`U_t`). */
  readonly estimated_tokens: number;
  /** Estimate of the view after it, band included when one fired (`V_t`). */
  readonly estimated_tokens_after: number;
  /** The band this evaluation appended, if it fired. */
  readonly firing?: Firing;
  /** Every compaction in force after the evaluation, in stream order. */
  readonly compactions: readonly Compaction[];
}

/** A replay's context: the evaluation's, a summarizer, and a hook called at every turn boundary. */
export type ReplayContext = EvaluationContext & {
  readonly summarize?: SummarizeBand;
  readonly onTurn?: (turn: ReplayedTurn) => void;
};

/** The characters of a turn's view when no compaction covers it. */
function rawChars(size: TurnSize): number {
  return size.text + size.reasoning + size.tool_requests + size.tool_responses;
}

/**
 * Replays a stream turn by turn, running the D50 step at each turn boundary
 * as the compactor would, and inserts each band right after the turn that
 * fired it. Band timestamps derive from the stream (the turn's last entry),
 * so the result is deterministic.
 */
export function simulateStream(
  entries: readonly Entry[],
  context: ReplayContext,
): Promise<Simulation> {
  return replayPrepared(prepareStream(entries), context);
}

/** {@link simulateStream} on a stream already prepared by {@link prepareStream}. */
export async function replayPrepared(
  prepared: PreparedStream,
  context: ReplayContext,
): Promise<Simulation> {
  const sizes: TurnSize[] = [];
  const compactions: Compaction[] = [];
  const firings: Firing[] = [];
  const bands: { readonly index: number; readonly compaction: Compaction }[] = [];
  const contextWindow = resolveContextWindow(context.model, context.catalog);
  const turns = prepared.boundaries.map((boundary) => boundary.entries);
  const summarize = context.summarize;
  let streamCompactions = 0;
  // The view's characters after the last evaluation (the next turn's, as stored, add to it
  // unless something older changed), and the last turn any compaction covers.
  let viewChars = 0;
  let coveredThrough = -1;
  // The last turn whose view a compaction stored in the stream changes: the one it is
  // stored after and those it reaches.
  let stale = Number.NEGATIVE_INFINITY;
  let latest: { readonly compaction: Compaction; readonly nanos: bigint } | undefined;
  // The config in force for each count of the stream's own layers, resolved once.
  const configs: AutoConfig[] = [];
  const add = (compaction: Compaction) => {
    compactions.push(compaction);
    coveredThrough = Math.max(coveredThrough, compaction.to_turn);
    const nanos = timestampNanos(compaction.timestamp);
    // Stryker disable next-line EqualityOperator: of two compactions stamped alike either bounds the next band's timestamp alike (`>`).
    if (!latest || nanos >= latest.nanos) latest = { compaction, nanos };
  };
  // The view's characters with `band` appended. A band starts after every compaction's
  // turns (D50's rolling range starts at after_last_compaction), so it wins every policy
  // it sets there (it is stamped last): only its own turns change.
  // Tool events that pair across turns (docs/architecture.md §5 "Tool pairs") make a turn's
  // view depend on its neighbours, which the shortcuts below do not look at.
  const crosses = (from: number, to: number) => crossesWithin(sizes, from, to);
  const charsWith = (band: Compaction, before: number) => {
    // Stryker disable next-line ConditionalExpression: `true` only takes the from-scratch projection, which the shortcut below equals (replay.property.test.ts).
    if (crosses(band.from_turn, band.to_turn + 1)) {
      return projectedCharsFromSizes(sizes, [...compactions, band]);
    }
    const own = sizes.slice(band.from_turn, band.to_turn + 1);
    // Stryker disable next-line ArithmeticOperator: policies are resolved for the turns of `own` only, so a band reaching past its last turn projects the same.
    const rebased = { ...band, from_turn: 0, to_turn: own.length - 1 };
    let raw = 0;
    for (const size of own) raw += rawChars(size);
    return before - raw + projectedCharsFromSizes(own, [rebased]);
  };

  for (const boundary of prepared.boundaries) {
    const turn = sizes.length;
    sizes.push(boundary.size);
    for (; streamCompactions < boundary.compactions; streamCompactions++) {
      const stored = prepared.compactions[streamCompactions] as Compaction;
      add(stored);
      stale = Math.max(stale, turn, stored.to_turn);
    }
    // The view from scratch where the turn pairs with the one before or a compaction of the
    // stream changes it; else the old view plus the turn as stored (the replay's own bands
    // end before the next turn).
    const chars =
      // Stryker disable next-line ConditionalExpression: `true` only takes the from-scratch projection, which the shortcut equals (replay.property.test.ts); `false` also sets the disjunct below to false, its own mutant.
      crosses(turn - 1, turn) ||
      // a compaction stored with this turn or before reaches it
      stale >= turn
        ? projectedCharsFromSizes(sizes, compactions)
        : viewChars + rawChars(boundary.size);
    // The config changes only where the stream carries a config delta.
    configs[boundary.layers] ??= layeredConfig(
      context.layers,
      prepared.layers.slice(0, boundary.layers),
    );
    const config = configs[boundary.layers] as AutoConfig;
    // The view's characters with the band the step built (it estimates one band).
    let bandChars = chars;
    const stepAt = (restedSeconds: number) =>
      stepAutoCompaction({
        state: {
          config,
          turn_count: sizes.length,
          after_last_compaction: coveredThrough + 1,
          estimated_tokens: tokensFromChars(chars),
          context_window: contextWindow,
          ...(context.calibration ? { calibration: context.calibration } : {}),
          rested_seconds: restedSeconds,
        },
        firing: () => ({
          // Only the latest-stamped compaction bounds the next band's timestamp.
          compactions: latest ? [latest.compaction] : [],
          nowMillis: boundary.nowMillis + restedSeconds * 1000,
          estimateWith: (band) => {
            bandChars = charsWith(band, chars);
            return tokensFromChars(bandChars);
          },
        }),
        ...(summarize
          ? {
              summarize: (range: TurnRange, rule: SummaryRuleConfig) =>
                summarize(range, rawEvents(turns.slice(range.from_turn, range.to_turn + 1)), rule),
            }
          : {}),
      });
    let step = await stepAt(0);
    // The idle timer fires at the turn's time plus idle_seconds if the rest lasts that long.
    if (
      step.decision.reason === "deferred_until_idle" &&
      restsLongEnough(boundary, config.idle_seconds)
    ) {
      step = await stepAt(config.idle_seconds);
    }
    if (step.kind === "needs_summary") {
      throw new SummaryRequiredError(
        `the auto rule summarizes and fired after turn ${turn}: give a summarizer (a summary is never faked)`,
      );
    }
    const estimated = step.decision.estimated_tokens;
    if (step.kind === "skip") {
      viewChars = chars;
      context.onTurn?.({
        turn,
        estimated_tokens: estimated,
        estimated_tokens_after: estimated,
        compactions,
      });
      continue;
    }
    const { compaction, estimated_tokens_after } = step.band;
    bands.push({ index: boundary.index, compaction });
    add(compaction);
    viewChars = bandChars;
    const firing: Firing = {
      turn,
      from_turn: compaction.from_turn,
      to_turn: compaction.to_turn,
      estimated_tokens: estimated,
      estimated_tokens_after,
      threshold: step.decision.threshold,
      compaction,
      ...(step.summary ? { summary: step.summary } : {}),
    };
    firings.push(firing);
    context.onTurn?.({
      turn,
      estimated_tokens: estimated,
      estimated_tokens_after,
      firing,
      compactions,
    });
  }
  return { firings, entries: withBands(prepared.entries, bands) };
}

/** The stream with each band inserted before the entry at its index. */
function withBands(
  entries: readonly Entry[],
  bands: readonly { readonly index: number; readonly compaction: Compaction }[],
): Entry[] {
  const out: Entry[] = [];
  let next = 0;
  for (const band of bands) {
    for (; next < band.index; next++) out.push(entries[next] as Entry);
    out.push(band.compaction);
  }
  for (; next < entries.length; next++) out.push(entries[next] as Entry);
  return out;
}
