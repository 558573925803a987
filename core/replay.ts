/**
 * Stream-level evaluation: the D50 trigger applied to a whole stream as
 * stored (`evaluateStream`) and replayed turn by turn (`simulateStream`),
 * which is what the compactor does after every turn. Both estimate through
 * per-turn sizes, so a replay of a long stream stays linear.
 */

import { type ModelCatalog, type ModelInfo, resolveContextWindow } from "./catalog.ts";
import {
  type AutoConfig,
  type AutoConfigLayer,
  resolveAutoConfig,
  streamConfigLayers,
} from "./config.ts";
import { tokensFromChars } from "./estimate.ts";
import { type Compaction, type Entry, isKnown } from "./events.ts";
import { compactionsOf } from "./projection.ts";
import { afterLastCompaction, type TurnRange } from "./rules.ts";
import { measureStream, measureTurn, projectedCharsFromSizes, type TurnSize } from "./sizes.ts";
import { timestampNanos } from "./timestamp.ts";
import {
  buildFiring,
  type Decision,
  decide,
  type FiringContext,
  type TriggerState,
} from "./trigger.ts";
import { isConversationEvent } from "./turns.ts";

/** Everything besides the stream that an evaluation depends on. */
export interface EvaluationContext {
  /** Configuration layers below the stream's own config deltas (service, tenant, conversation). */
  readonly layers?: readonly AutoConfigLayer[];
  readonly model?: ModelInfo;
  readonly catalog?: ModelCatalog;
  readonly nowMillis: number;
}

/** Resolves the auto config in force at the end of a stream. */
export function configForStream(
  entries: readonly Entry[],
  layers: readonly AutoConfigLayer[] = [],
): AutoConfig {
  return resolveAutoConfig(...layers, ...streamConfigLayers(entries));
}

function triggerInputs(
  sizes: readonly TurnSize[],
  compactions: readonly Compaction[],
  config: AutoConfig,
  contextWindow: number | undefined,
  nowMillis: number,
): { state: TriggerState; context: FiringContext } {
  return {
    state: {
      config,
      turnCount: sizes.length,
      afterLastCompaction: afterLastCompaction(compactions),
      estimatedTokens: tokensFromChars(projectedCharsFromSizes(sizes, compactions)),
      contextWindow,
    },
    context: {
      compactions,
      nowMillis,
      estimateWith: (compaction) =>
        tokensFromChars(projectedCharsFromSizes(sizes, [...compactions, compaction])),
    },
  };
}

/** The trigger's state and firing context for a stream as stored (what `evaluateStream` decides on). */
export function streamTriggerInputs(
  entries: readonly Entry[],
  context: EvaluationContext,
): { state: TriggerState; context: FiringContext } {
  return triggerInputs(
    measureStream(entries),
    compactionsOf(entries),
    configForStream(entries, context.layers),
    resolveContextWindow(context.model, context.catalog),
    context.nowMillis,
  );
}

/** Evaluates the trigger once on a stream as stored. */
export function evaluateStream(entries: readonly Entry[], context: EvaluationContext): Decision {
  const { state, context: firing } = streamTriggerInputs(entries, context);
  const decision = decide(state);
  return decision.needs_summary ? decision : buildFiring(state, decision, firing);
}

/** Generates summary text for a band from the raw events of its turns. */
export type SummarizeBand = (
  range: TurnRange,
  rawEvents: readonly Entry[],
  config: AutoConfig,
) => Promise<string>;

/** A summary rule fired but no summarizer was given: it is reported, never faked. */
export class SummarizerRequiredError extends Error {
  override readonly name = "SummarizerRequiredError";
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
}

/** The outcome of a replay: every firing and the stream with the bands inserted. */
export interface Simulation {
  readonly firings: Firing[];
  readonly entries: Entry[];
}

/**
 * Replays a stream turn by turn, evaluating at each turn boundary as the
 * compactor would, and inserts each band right after the turn that fired it.
 * Band timestamps derive from the stream (the turn's last entry), so the
 * result is deterministic.
 */
export async function simulateStream(
  entries: readonly Entry[],
  context: Omit<EvaluationContext, "nowMillis"> & { readonly summarize?: SummarizeBand },
): Promise<Simulation> {
  const out: Entry[] = [];
  const sizes: TurnSize[] = [];
  const compactions: Compaction[] = [];
  const names = new Map<string, string>();
  const firings: Firing[] = [];
  const contextWindow = resolveContextWindow(context.model, context.catalog);
  const turnStarts: number[] = [];
  let turnEvents: Entry[] = [];
  let turnHasEvent = false;
  let lastMillis = 0;
  const streamLayers: AutoConfigLayer[] = [];

  const finishTurn = async () => {
    sizes.push(measureTurn(turnEvents, names));
    turnEvents = [];
    const config = resolveAutoConfig(...(context.layers ?? []), ...streamLayers);
    const { state, context: firing } = triggerInputs(
      sizes,
      compactions,
      config,
      contextWindow,
      lastMillis,
    );
    let decision = decide(state);
    if (decision.needs_summary && decision.range) {
      if (!context.summarize) {
        throw new SummarizerRequiredError(
          `the auto rule summarizes and fired after turn ${sizes.length - 1}: give a summarizer (a summary is never faked)`,
        );
      }
      const start = turnStarts[decision.range.from_turn] ?? 0;
      const end = turnStarts[decision.range.to_turn + 1] ?? out.length;
      const raw = out.slice(start, end).filter((entry) => entry.type !== "compaction");
      decision = buildFiring(
        state,
        decision,
        firing,
        await context.summarize(decision.range, raw, config),
      );
    } else {
      decision = buildFiring(state, decision, firing);
    }
    recordFiring(decision);
  };

  const recordFiring = (decision: Decision) => {
    const compaction = decision.compaction;
    if (!decision.fire || !compaction || decision.threshold === null) return;
    out.push(compaction);
    compactions.push(compaction);
    firings.push({
      turn: sizes.length - 1,
      from_turn: compaction.from_turn,
      to_turn: compaction.to_turn,
      estimated_tokens: decision.estimated_tokens,
      estimated_tokens_after: decision.estimated_tokens_after ?? decision.estimated_tokens,
      threshold: decision.threshold,
      compaction,
    });
  };

  for (const entry of entries) {
    const opensTurn = entry.type === "turn_start" && turnHasEvent;
    if (opensTurn) {
      await finishTurn();
      turnHasEvent = false;
    }
    if (isConversationEvent(entry) && !turnHasEvent) {
      turnHasEvent = true;
      turnStarts.push(out.length);
    }
    if (entry.type === "compaction") compactions.push(entry as Compaction);
    else if (entry.type === "config_delta") streamLayers.push(...streamConfigLayers([entry]));
    else if (isConversationEvent(entry)) turnEvents.push(entry);
    if (isKnown(entry)) lastMillis = Number(timestampNanos(entry.timestamp) / 1_000_000n);
    out.push(entry);
  }
  if (turnHasEvent) await finishTurn();
  return { firings, entries: out };
}
