/**
 * Per-turn size counts: the estimate of a projected view computed from a few
 * numbers per turn instead of the event bodies. The store keeps these so an
 * evaluation never has to read a conversation's events to decide not to fire
 * (docs/architecture.md §13), and `simulate` replays long streams in linear time.
 * `estimateFromSizes(sizes, compactions)` equals `estimateStream` exactly.
 */

import { entryChars } from "./estimate.ts";
import type { Compaction, Entry, KnownEntry, ToolCallResponse } from "./events.ts";
import {
  keepsCarried,
  keepsPending,
  resolvePolicies,
  SUMMARY_REQUEST_CONTENT,
  strippedResponseContent,
  summaryTextOf,
  type TurnPolicies,
  toolRoles,
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
  /**
   * Tool requests left unanswered in the turn (docs/architecture.md §5 "Tool
   * pairs"): how many, as stored and stripped. Absent when none, as in
   * records stored before the rule, which count them with `tool_requests`.
   */
  readonly pending_calls?: number;
  readonly pending_requests?: number;
  readonly pending_requests_stripped?: number;
  /** Tool responses answering the previous turn's pending calls: how many, as stored and stripped. Absent when none. */
  readonly carried_results?: number;
  readonly carried_responses?: number;
  readonly carried_responses_stripped?: number;
  /** Tool responses with no request before them (never in a view). Absent when none. */
  readonly orphan_results?: number;
}

type MutableSize = { -readonly [K in keyof TurnSize]-?: number };

/** Whether a turn has tool events that pair across turns or not at all (pending, carried or orphan). */
export function crossesTurns(size: TurnSize): boolean {
  return (size.pending_calls ?? 0) + (size.carried_results ?? 0) + (size.orphan_results ?? 0) > 0;
}

/**
 * Whether a turn in `from..to` (clamped to the turns there are) crosses
 * turns: its view then depends on the turns beside it, so a view kept
 * incrementally must be projected from scratch there.
 */
export function crossesWithin(sizes: readonly TurnSize[], from: number, to: number): boolean {
  return sizes.slice(Math.max(0, from), to + 1).some(crossesTurns);
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
  const size: MutableSize = {
    ...EMPTY_TURN_SIZE,
    pending_calls: 0,
    pending_requests: 0,
    pending_requests_stripped: 0,
    carried_results: 0,
    carried_responses: 0,
    carried_responses_stripped: 0,
    orphan_results: 0,
  };
  // Unknown entry types match no case: they are never provider-visible (0 chars).
  const known = events as readonly KnownEntry[];
  const roles = toolRoles(events, (id) => names.has(id));
  // A carried result is named after the call it answers, in an earlier turn: this turn may call its id
  // again. Taken before this turn's requests are added; read for carried results only.
  const carriedNames = known.map((entry) => names.get((entry as ToolCallResponse).id));
  for (const entry of known) {
    if (entry.type === "tool_call_request") names.set(entry.id, entry.name);
  }
  known.forEach((entry, j) => {
    switch (entry.type) {
      case "chat_response":
        if (entry.reasoning !== undefined) size.reasoning += entryChars(entry);
        else size.text += entryChars(entry);
        break;
      case "tool_call_request": {
        const pending = roles[j] === "pending";
        if (pending) size.pending_calls++;
        size[pending ? "pending_requests" : "tool_requests"] += entryChars(entry);
        size[pending ? "pending_requests_stripped" : "tool_requests_stripped"] +=
          utf8Length(entry.name) + EMPTY_ARGUMENTS_CHARS;
        break;
      }
      case "tool_call_response": {
        const role = roles[j];
        if (role === "orphan") {
          size.orphan_results++;
          break;
        }
        const carried = role === "carried";
        if (carried) size.carried_results++;
        size[carried ? "carried_responses" : "tool_responses"] += entryChars(entry);
        size[carried ? "carried_responses_stripped" : "tool_responses_stripped"] += utf8Length(
          strippedResponseContent(carried ? carriedNames[j] : names.get(entry.id), entry.is_error),
        );
        break;
      }
      default:
        // Requests count as text; turn starts, inquiries and metadata count 0.
        size.text += entryChars(entry);
    }
  });
  // The cross-turn counts are left out when zero: such a record is the one stored before them.
  for (const key of CROSSING_KEYS) if (size[key] === 0) delete (size as Partial<MutableSize>)[key];
  return size;
}

const CROSSING_KEYS = [
  "pending_calls",
  "pending_requests",
  "pending_requests_stripped",
  "carried_results",
  "carried_responses",
  "carried_responses_stripped",
  "orphan_results",
] as const;

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
  // Stryker disable next-line OptionalChaining: keepsPending and keepsCarried ask only for turns that exist.
  const pending = (t: number) => sizes[t]?.pending_calls ?? 0;
  // Stryker disable next-line OptionalChaining: as above.
  const carried = (t: number) => sizes[t]?.carried_results ?? 0;
  let chars = 0;
  for (let t = 0; t < sizes.length; t++) {
    const size = sizes[t] as TurnSize;
    // Carried results go with their calls, under the previous turn's policies, whatever this turn's.
    if (keepsCarried(pending, carried, t)) {
      const callTurn = policies[t - 1] as TurnPolicies;
      if (callTurn.summary === undefined) {
        chars += toolChars(
          callTurn.tool_calls,
          "response",
          size.carried_responses ?? 0,
          size.carried_responses_stripped ?? 0,
        );
      }
    }
    const { summary, reasoning, tool_calls } = policies[t] as TurnPolicies;
    if (summary !== undefined) {
      // Stryker disable next-line ArithmeticOperator: `t + 1` counts each summarized run once too, at its last turn.
      if (policies[t - 1]?.summary !== summary) {
        chars += SUMMARY_REQUEST_CHARS + utf8Length(summaryTextOf(summary));
      }
      continue;
    }
    chars += size.text;
    if (reasoning === undefined) chars += size.reasoning;
    chars += toolChars(tool_calls, "request", size.tool_requests, size.tool_requests_stripped);
    chars += toolChars(tool_calls, "response", size.tool_responses, size.tool_responses_stripped);
    if (keepsPending(pending, carried, t, sizes.length)) {
      chars += toolChars(
        tool_calls,
        "request",
        size.pending_requests ?? 0,
        size.pending_requests_stripped ?? 0,
      );
    }
  }
  return chars;
}

/** Characters of tool requests or responses under a turn's tool policy (`compaction`'s, if any). */
function toolChars(
  compaction: Compaction | undefined,
  side: "request" | "response",
  stored: number,
  stripped: number,
): number {
  const policy = compaction?.tool_calls;
  if (!policy) return stored;
  if (policy.policy === "omit") return 0;
  return policy[side] ? stripped : stored;
}

/**
 * Running totals of a stream's turn sizes, through one turn (its size
 * record keeps them, docs/architecture.md §13): the sums of every field a
 * policy can act on, and of the tool pairs that cross into a turn and stay
 * (`linked_*`: the previous turn's pending requests and this turn's carried
 * responses, counted when this turn carries as many results as the previous
 * one left calls, {@link keepsCarried}). A turn's own pending calls join the
 * totals with the next turn, once it is known whether they stay.
 * The estimate with a band over turns no compaction covers needs the totals
 * at the band's two ends only ({@link projectedCharsWithBand}).
 */
export interface RunningTotals
  extends Pick<
    TurnSize,
    | "text"
    | "reasoning"
    | "tool_requests"
    | "tool_requests_stripped"
    | "tool_responses"
    | "tool_responses_stripped"
  > {
  readonly linked_requests: number;
  readonly linked_requests_stripped: number;
  readonly linked_responses: number;
  readonly linked_responses_stripped: number;
}

/** A turn's sizes with the running totals through it. */
export interface TotaledSize {
  readonly size: TurnSize;
  readonly totals: RunningTotals;
}

/** The totals before the first turn. */
export const ZERO_TOTALS: RunningTotals = Object.freeze({
  ...EMPTY_TURN_SIZE,
  linked_requests: 0,
  linked_requests_stripped: 0,
  linked_responses: 0,
  linked_responses_stripped: 0,
});

const TOTAL_FIELDS = Object.keys(ZERO_TOTALS) as (keyof RunningTotals)[];

/** The running totals through a turn of `size`, from the previous turn's (`undefined` for turn 0). */
export function runningTotals(previous: TotaledSize | undefined, size: TurnSize): RunningTotals {
  const base = previous?.totals ?? ZERO_TOTALS;
  const calls = previous?.size.pending_calls ?? 0;
  // Every pending call of the previous turn answered here (with none pending, both sides below add 0).
  const linked = (size.carried_results ?? 0) === calls;
  return {
    text: base.text + size.text,
    reasoning: base.reasoning + size.reasoning,
    tool_requests: base.tool_requests + size.tool_requests,
    tool_requests_stripped: base.tool_requests_stripped + size.tool_requests_stripped,
    tool_responses: base.tool_responses + size.tool_responses,
    tool_responses_stripped: base.tool_responses_stripped + size.tool_responses_stripped,
    // Stryker disable next-line OptionalChaining: `linked` implies a previous turn.
    linked_requests: base.linked_requests + (linked ? (previous?.size.pending_requests ?? 0) : 0),
    linked_requests_stripped:
      base.linked_requests_stripped +
      // Stryker disable next-line OptionalChaining: `linked` implies a previous turn.
      (linked ? (previous?.size.pending_requests_stripped ?? 0) : 0),
    linked_responses: base.linked_responses + (linked ? (size.carried_responses ?? 0) : 0),
    linked_responses_stripped:
      base.linked_responses_stripped + (linked ? (size.carried_responses_stripped ?? 0) : 0),
  };
}

/** Every turn's running totals, in turn order. */
export function runningTotalsOf(sizes: readonly TurnSize[]): RunningTotals[] {
  let previous: TotaledSize | undefined;
  return sizes.map((size) => {
    const totals = runningTotals(previous, size);
    previous = { size, totals };
    return totals;
  });
}

/**
 * The turns whose totals {@link projectedCharsWithBand} reads for a band
 * over `range` in a stream of `turnCount` turns: the turns on either side of
 * each end of the part the band covers (none when it covers no stored turn).
 */
export function bandEndTurns(
  range: Pick<Compaction, "from_turn" | "to_turn">,
  turnCount: number,
): number[] {
  const first = range.from_turn;
  const last = Math.min(range.to_turn, turnCount - 1);
  if (first > last) return [];
  // In ascending order already: a set drops the repeats of a one-turn band.
  const turns = new Set([first - 1, first, last, last + 1]);
  return [...turns].filter((t) => t >= 0 && t < turnCount);
}

/**
 * The projected characters of a stream of `turnCount` turns with `band`
 * appended, from `projected` (the characters under its compactions) and the
 * records of {@link bandEndTurns} (`at(t)`; every one must be there). Only
 * when no compaction covers any turn from `band.from_turn` on: then the band
 * wins every policy it sets on its turns, whatever its timestamp, and what
 * it changes is those turns and the tool results the turn after it carries
 * (a pair goes with the policy of the turn that holds the call), so the
 * difference is the totals' between its ends. Equals
 * {@link projectedCharsFromSizes} of every turn with every compaction and the band.
 */
export function projectedCharsWithBand(
  projected: number,
  turnCount: number,
  band: Compaction,
  at: (turn: number) => TotaledSize,
): number {
  const first = band.from_turn;
  const last = Math.min(band.to_turn, turnCount - 1);
  if (first > last) return projected;
  const totals = (t: number) => (t < 0 ? ZERO_TOTALS : at(t).totals);
  const between = (high: RunningTotals, low: RunningTotals) =>
    Object.fromEntries(TOTAL_FIELDS.map((f) => [f, high[f] - low[f]])) as unknown as RunningTotals;
  // The band's own turns; the pairs linking into its turns after the first and into the turn after it.
  const own = between(totals(last), totals(first - 1));
  const links = between(totals(last + 1 < turnCount ? last + 1 : last), totals(first));
  // The last turn's pending calls stay (keepsPending): no next turn links them yet.
  const tail = last === turnCount - 1 ? at(last).size : undefined;
  // Pending requests are counted only on a turn with pending calls (measureTurn).
  const tailRequests = tail?.pending_requests ?? 0;
  const tailStripped = tail?.pending_requests_stripped ?? 0;
  const before =
    own.text +
    own.reasoning +
    own.tool_requests +
    own.tool_responses +
    links.linked_requests +
    links.linked_responses +
    tailRequests;
  if (band.summary !== undefined) {
    return projected - before + SUMMARY_REQUEST_CHARS + utf8Length(summaryTextOf(band));
  }
  const after =
    own.text +
    (band.reasoning === undefined ? own.reasoning : 0) +
    toolChars(band, "request", own.tool_requests, own.tool_requests_stripped) +
    toolChars(band, "response", own.tool_responses, own.tool_responses_stripped) +
    toolChars(band, "request", links.linked_requests, links.linked_requests_stripped) +
    toolChars(band, "response", links.linked_responses, links.linked_responses_stripped) +
    toolChars(band, "request", tailRequests, tailStripped);
  return projected - before + after;
}
