/**
 * The D50 step on stream files: once on a stream as stored
 * (`evaluateStream`, `autocompact evaluate`) and turn by turn as the
 * compactor would run it (`simulateStream`, `autocompact simulate`). Both
 * run {@link stepAutoCompaction} and estimate through per-turn sizes, so a
 * replay of a long stream stays linear.
 */

import {
  type AutoCompactionStep,
  type BandSummary,
  type FiringContext,
  stepAutoCompaction,
  type TriggerState,
} from "./auto-compaction.ts";
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
import { type Compaction, type Entry, isKnown } from "./events.ts";
import { compactionsOf } from "./projection.ts";
import { afterLastCompaction, type TurnRange } from "./rules.ts";
import { measureTurn, projectedCharsFromSizes, type TurnSize } from "./sizes.ts";
import { timestampNanos } from "./timestamp.ts";
import { isConversationEvent, splitTurns } from "./turns.ts";

/** Everything besides the stream that an evaluation depends on. */
export interface EvaluationContext {
  /** Configuration layers below the stream's own config deltas (the CLI's `--config` files). */
  readonly layers?: readonly AutoConfigLayer[];
  readonly model?: ModelInfo;
  readonly catalog?: ModelCatalog;
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
  layers: readonly AutoConfigLayer[] = [],
): AutoConfig {
  return resolveAutoConfig(...layers, ...streamConfigLayers(entries));
}

/** The trigger state and firing context of turns measured as `sizes` under `compactions`. */
function stepInputs(
  sizes: readonly TurnSize[],
  compactions: readonly Compaction[],
  config: AutoConfig,
  contextWindow: number | undefined,
  nowMillis: number,
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
    },
    firing: () => ({
      compactions,
      nowMillis,
      estimateWith: (compaction) => estimate([...compactions, compaction]),
    }),
  };
}

/**
 * Runs the D50 step once, after the last turn of a stream as stored. With
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
  );
  return stepAutoCompaction({
    ...inputs,
    ...(summarize
      ? {
          summarize: (range, rule) =>
            summarize(range, rawEvents(turns.slice(range.from_turn, range.to_turn + 1)), rule),
        }
      : {}),
  });
}

/** The raw events of some turns (compactions are overlays, never summarized). */
function rawEvents(turns: readonly Entry[][]): Entry[] {
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

/**
 * Replays a stream turn by turn, running the D50 step at each turn boundary
 * as the compactor would, and inserts each band right after the turn that
 * fired it. Band timestamps derive from the stream (the turn's last entry),
 * so the result is deterministic.
 */
export async function simulateStream(
  entries: readonly Entry[],
  context: EvaluationContext & { readonly summarize?: SummarizeBand },
): Promise<Simulation> {
  const out: Entry[] = [];
  const sizes: TurnSize[] = [];
  const compactions: Compaction[] = [];
  const names = new Map<string, string>();
  const firings: Firing[] = [];
  const contextWindow = resolveContextWindow(context.model, context.catalog);
  // Each finished turn's entries (metadata included, as the service stores a posted turn).
  const turns: Entry[][] = [];
  let turnEntries: Entry[] = [];
  let turnEvents: Entry[] = [];
  let lastMillis = 0;
  const streamLayers: AutoConfigLayer[] = [];
  const summarize = context.summarize;

  const finishTurn = async () => {
    turns.push(turnEntries);
    sizes.push(measureTurn(turnEvents, names));
    turnEntries = [];
    turnEvents = [];
    const config = resolveAutoConfig(...(context.layers ?? []), ...streamLayers);
    const step = await stepAutoCompaction({
      ...stepInputs(sizes, compactions, config, contextWindow, lastMillis),
      ...(summarize
        ? {
            summarize: (range: TurnRange, rule: SummaryRuleConfig) =>
              summarize(range, rawEvents(turns.slice(range.from_turn, range.to_turn + 1)), rule),
          }
        : {}),
    });
    if (step.kind === "needs_summary") {
      throw new SummaryRequiredError(
        `the auto rule summarizes and fired after turn ${sizes.length - 1}: give a summarizer (a summary is never faked)`,
      );
    }
    if (step.kind === "skip") return;
    const { compaction, estimated_tokens_after } = step.band;
    out.push(compaction);
    compactions.push(compaction);
    firings.push({
      turn: sizes.length - 1,
      from_turn: compaction.from_turn,
      to_turn: compaction.to_turn,
      estimated_tokens: step.decision.estimated_tokens,
      estimated_tokens_after,
      threshold: step.decision.threshold,
      compaction,
      ...(step.summary ? { summary: step.summary } : {}),
    });
  };

  for (const entry of entries) {
    if (entry.type === "turn_start" && turnEvents.length > 0) await finishTurn();
    if (entry.type === "compaction") compactions.push(entry as Compaction);
    else turnEntries.push(entry);
    if (entry.type === "config_delta") streamLayers.push(...streamConfigLayers([entry]));
    else if (isConversationEvent(entry)) turnEvents.push(entry);
    if (isKnown(entry)) lastMillis = Number(timestampNanos(entry.timestamp) / 1_000_000n);
    out.push(entry);
  }
  if (turnEvents.length > 0) await finishTurn();
  return { firings, entries: out };
}
