/**
 * Per-turn size counts: the estimate of a projected view computed from a few
 * numbers per turn instead of the event bodies. The store keeps these so an
 * evaluation never has to read a conversation's events to decide not to fire
 * (ARCHITECTURE §13), and `simulate` replays long streams in linear time.
 * `estimateFromSizes(sizes, compactions)` equals `estimateStream` exactly.
 */

import { entryChars } from "./estimate.ts";
import { type Compaction, type Entry, isKnown } from "./events.ts";
import {
  type PlacedCompaction,
  placeCompactions,
  resolveWinners,
  SUMMARY_REQUEST_CONTENT,
  strippedResponseContent,
} from "./projection.ts";
import { indexTurns } from "./turns.ts";
import { utf8Length } from "./utf8.ts";

/** UTF-8 byte counts of one turn's provider-visible content, by what a policy can do to it. */
export interface TurnSize {
  /** Requests, messages and data: removed only by a summary. */
  readonly text: number;
  /** Reasoning responses: removed by `reasoning: strip`. */
  readonly reasoning: number;
  /** Tool requests as stored (name + arguments JSON). */
  readonly tool_requests: number;
  /** Tool requests with arguments replaced by `{}`. */
  readonly tool_requests_stripped: number;
  /** Tool responses as stored. */
  readonly tool_responses: number;
  /** Tool responses replaced by their `[compacted] name: status` line. */
  readonly tool_responses_stripped: number;
}

/** A turn with nothing provider-visible. */
export const EMPTY_TURN_SIZE: TurnSize = Object.freeze({
  text: 0,
  reasoning: 0,
  tool_requests: 0,
  tool_requests_stripped: 0,
  tool_responses: 0,
  tool_responses_stripped: 0,
});

const SUMMARY_REQUEST_CHARS = utf8Length(SUMMARY_REQUEST_CONTENT);
const EMPTY_ARGUMENTS_CHARS = utf8Length("{}");

/**
 * Counts one turn's events. `names` maps call ids to the tool name of their
 * latest request in an earlier turn; this turn's requests are added to it
 * first, matching {@link toolNameFor}.
 */
export function measureTurn(events: readonly Entry[], names: Map<string, string>): TurnSize {
  const size = { ...EMPTY_TURN_SIZE };
  for (const entry of events) {
    if (isKnown(entry) && entry.type === "tool_call_request") {
      names.set(entry.id, entry.name);
    }
  }
  for (const entry of events) {
    if (!isKnown(entry)) continue;
    switch (entry.type) {
      case "chat_request":
        size.text += entryChars(entry);
        break;
      case "chat_response":
        if (entry.reasoning !== undefined) size.reasoning += entryChars(entry);
        else size.text += entryChars(entry);
        break;
      case "tool_call_request":
        size.tool_requests += entryChars(entry);
        size.tool_requests_stripped += utf8Length(entry.name) + EMPTY_ARGUMENTS_CHARS;
        break;
      case "tool_call_response":
        size.tool_responses += entryChars(entry);
        size.tool_responses_stripped += utf8Length(
          strippedResponseContent(names.get(entry.id) ?? "unknown", entry.is_error),
        );
        break;
      default:
        break;
    }
  }
  return size;
}

/** Counts every turn of a stream. */
export function measureStream(entries: readonly Entry[]): TurnSize[] {
  const { turnOf, turnCount } = indexTurns(entries);
  const byTurn: Entry[][] = Array.from({ length: turnCount }, () => []);
  entries.forEach((entry, i) => {
    if (turnCount > 0) byTurn[turnOf[i] as number]?.push(entry);
  });
  const names = new Map<string, string>();
  return byTurn.map((events) => measureTurn(events, names));
}

/** Adds two turn sizes (for totals by kind). */
export function addSizes(a: TurnSize, b: TurnSize): TurnSize {
  return {
    text: a.text + b.text,
    reasoning: a.reasoning + b.reasoning,
    tool_requests: a.tool_requests + b.tool_requests,
    tool_requests_stripped: a.tool_requests_stripped + b.tool_requests_stripped,
    tool_responses: a.tool_responses + b.tool_responses,
    tool_responses_stripped: a.tool_responses_stripped + b.tool_responses_stripped,
  };
}

/** The projected characters of a stream, from its turn sizes and its compactions. */
export function projectedCharsFromSizes(
  sizes: readonly TurnSize[],
  compactions: readonly Compaction[],
): number {
  const placed = placeCompactions(compactions);
  const winners = resolveWinners(placed, sizes.length);
  let chars = 0;
  for (let t = 0; t < sizes.length; t++) {
    const size = sizes[t] as TurnSize;
    const summary = winners.summary[t] as number;
    if (summary >= 0) {
      if (t === 0 || winners.summary[t - 1] !== summary) {
        const text = (placed[summary] as PlacedCompaction).compaction.summary?.summary ?? "";
        chars += SUMMARY_REQUEST_CHARS + utf8Length(text);
      }
      continue;
    }
    chars += size.text;
    if ((winners.reasoning[t] as number) < 0) chars += size.reasoning;
    const toolWinner = winners.toolCalls[t] as number;
    const policy = toolWinner >= 0 ? placed[toolWinner]?.compaction.tool_calls : undefined;
    if (!policy) chars += size.tool_requests + size.tool_responses;
    else if (policy.policy === "strip") {
      chars += policy.request ? size.tool_requests_stripped : size.tool_requests;
      chars += policy.response ? size.tool_responses_stripped : size.tool_responses;
    }
  }
  return chars;
}
