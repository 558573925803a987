/**
 * Per-turn size counts: the estimate of a projected view computed from a few
 * numbers per turn instead of the event bodies. The store keeps these so an
 * evaluation never has to read a conversation's events to decide not to fire
 * (docs/architecture.md §13), and `simulate` replays long streams in linear time.
 * `estimateFromSizes(sizes, compactions)` equals `estimateStream` exactly.
 */

import { entryChars } from "./estimate.ts";
import type { Compaction, Entry, KnownEntry } from "./events.ts";
import {
  resolvePolicies,
  SUMMARY_REQUEST_CONTENT,
  strippedResponseContent,
  summaryTextOf,
  type TurnPolicies,
} from "./projection.ts";
import { splitTurns } from "./turns.ts";
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
  // Unknown entry types match no case: they are never provider-visible (0 chars).
  const known = events as readonly KnownEntry[];
  for (const entry of known) {
    if (entry.type === "tool_call_request") names.set(entry.id, entry.name);
  }
  for (const entry of known) {
    switch (entry.type) {
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
          strippedResponseContent(names.get(entry.id), entry.is_error),
        );
        break;
      default:
        // Requests count as text; turn starts, inquiries and metadata count 0.
        size.text += entryChars(entry);
    }
  }
  return size;
}

/** Counts every turn of a stream. */
export function measureStream(entries: readonly Entry[]): TurnSize[] {
  const names = new Map<string, string>();
  return splitTurns(entries).map((events) => measureTurn(events, names));
}

/** The projected characters of a stream, from its turn sizes and its compactions. */
export function projectedCharsFromSizes(
  sizes: readonly TurnSize[],
  compactions: readonly Compaction[],
): number {
  const policies = resolvePolicies(compactions, sizes.length);
  let chars = 0;
  for (let t = 0; t < sizes.length; t++) {
    const size = sizes[t] as TurnSize;
    const { summary, reasoning, tool_calls } = policies[t] as TurnPolicies;
    if (summary !== undefined) {
      if (policies[t - 1]?.summary !== summary) {
        chars += SUMMARY_REQUEST_CHARS + utf8Length(summaryTextOf(summary));
      }
      continue;
    }
    chars += size.text;
    if (reasoning === undefined) chars += size.reasoning;
    const policy = tool_calls?.tool_calls;
    if (!policy) chars += size.tool_requests + size.tool_responses;
    else if (policy.policy === "strip") {
      chars += policy.request ? size.tool_requests_stripped : size.tool_requests;
      chars += policy.response ? size.tool_responses_stripped : size.tool_responses;
    }
  }
  return chars;
}
