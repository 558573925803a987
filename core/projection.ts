/**
 * Projection (RFD 064 "Projection Layer", docs/architecture.md §5): a pure function
 * from the raw stream to the view a provider should see. Raw events are never
 * changed; compaction entries are overlays that this function consumes.
 */
import {
  type ChatRequest,
  type ChatResponse,
  type Compaction,
  type Entry,
  isKnown,
  type ToolCallPolicy,
  type ToolCallRequest,
  type ToolCallResponse,
  type TurnStart,
} from "./events.ts";
import { timestampNanos } from "./timestamp.ts";
import { indexTurns } from "./turns.ts";

/** The content a summary replaces its turns with is introduced by this request. */
export const SUMMARY_REQUEST_CONTENT = "[Summary of previous conversation]";

/** Where a projected turn comes from: a raw turn kept (maybe stripped) or a summarized run. */
export type TurnOrigin = { kept: number } | { summary: { from: number; to: number } };

/** The projected view and the origin of each of its turns. */
export interface Projection {
  readonly entries: Entry[];
  readonly turns: TurnOrigin[];
}

/**
 * The compactions whose policies apply to one turn, one per policy kind
 * (RFD 064 "Stacking"). Turns won by the same summary compaction (the same
 * object) form one summarized run.
 */
export interface TurnPolicies {
  readonly summary?: Compaction;
  readonly reasoning?: Compaction;
  readonly tool_calls?: Compaction;
}

const POLICY_KINDS = ["summary", "reasoning", "tool_calls"] as const;

type PolicyKind = (typeof POLICY_KINDS)[number];
type Placed = { readonly compaction: Compaction; readonly nanos: bigint };

/**
 * Resolves, per turn and per policy kind independently, the covering
 * compaction with the latest timestamp, stream order breaking ties. A
 * compaction covers `from_turn <= t <= min(to_turn, last_turn)`.
 */
export function resolvePolicies(
  compactions: readonly Compaction[],
  turnCount: number,
): TurnPolicies[] {
  const slots: Partial<Record<PolicyKind, Placed>>[] = Array.from(
    { length: turnCount },
    () => ({}),
  );
  for (const compaction of compactions) {
    const placed = { compaction, nanos: timestampNanos(compaction.timestamp) };
    const last = Math.min(compaction.to_turn, turnCount - 1);
    for (let t = compaction.from_turn; t <= last; t++) {
      const slot = slots[t] as Partial<Record<PolicyKind, Placed>>;
      for (const kind of POLICY_KINDS) {
        if (compaction[kind] === undefined) continue;
        const current = slot[kind];
        // Compactions come in stream order: a later one wins unless it is strictly older.
        if (current === undefined || placed.nanos >= current.nanos) slot[kind] = placed;
      }
    }
  }
  return slots.map((slot) => ({
    summary: slot.summary?.compaction,
    reasoning: slot.reasoning?.compaction,
    tool_calls: slot.tool_calls?.compaction,
  }));
}

/** The summary text of a compaction that won a summary slot. */
export function summaryTextOf(compaction: Compaction): string {
  return (compaction.summary as { summary: string }).summary;
}

/** The status line a stripped tool response is replaced with (`unknown` names an orphan's tool). */
export function strippedResponseContent(toolName: string | undefined, isError: boolean): string {
  return `[compacted] ${toolName ?? "unknown"}: ${isError ? "error" : "success"}`;
}

/** Every request of each call id, in stream order, with the turn it was made in. */
export type ToolNames = ReadonlyMap<
  string,
  readonly { readonly name: string; readonly turn: number }[]
>;

/** Indexes the tool requests of a stream by call id. */
export function toolNamesById(entries: readonly Entry[], turnOf: Int32Array): ToolNames {
  const names = new Map<string, { name: string; turn: number }[]>();
  entries.forEach((entry, i) => {
    if (entry.type !== "tool_call_request") return;
    const request = entry as ToolCallRequest;
    const list = names.get(request.id);
    const named = { name: request.name, turn: turnOf[i] as number };
    if (list) list.push(named);
    else names.set(request.id, [named]);
  });
  return names;
}

/**
 * The tool name for a response in `turn`: the latest request with its id in
 * that turn or an earlier one (JP looks the id up across the stream, later
 * requests winning; restricting it to turns up to the response's keeps a
 * turn's stripped size fixed once the turn is stored), `undefined` for an orphan.
 */
export function toolNameFor(names: ToolNames, id: string, turn: number): string | undefined {
  return names.get(id)?.findLast((request) => request.turn <= turn)?.name;
}

/** The compacted form of a tool request under its turn's tool policy, or `undefined` when it is omitted. */
export function projectToolRequest(
  request: ToolCallRequest,
  policy: ToolCallPolicy | undefined,
): ToolCallRequest | undefined {
  if (!policy) return request;
  if (policy.policy === "omit") return undefined;
  return policy.request ? { ...request, arguments: {} } : request;
}

/**
 * The compacted form of a tool response under its turn's tool policy (its
 * content stripped to the placeholder naming `toolName()`), or `undefined`
 * when it is omitted.
 */
export function projectToolResponse(
  response: ToolCallResponse,
  policy: ToolCallPolicy | undefined,
  toolName: () => string | undefined,
): ToolCallResponse | undefined {
  if (!policy) return response;
  if (policy.policy === "omit") return undefined;
  if (!policy.response) return response;
  return { ...response, content: strippedResponseContent(toolName(), response.is_error) };
}

/**
 * The three entries a summarized run is replaced with, stamped with the
 * timestamp of the run's first event (as JP does). The `turn_start` makes the
 * summary a turn of its own.
 */
export function summaryEntries(timestamp: string, summary: string): Entry[] {
  const turnStart: TurnStart = { type: "turn_start", timestamp };
  const request: ChatRequest = {
    type: "chat_request",
    timestamp,
    content: SUMMARY_REQUEST_CONTENT,
  };
  const response: ChatResponse = { type: "chat_response", timestamp, message: summary };
  return [turnStart, request, response];
}

/** Splits a stream into its compactions and the rest, keeping stream order. */
export function compactionsOf(entries: readonly Entry[]): Compaction[] {
  return entries.filter((entry): entry is Compaction => entry.type === "compaction");
}

/**
 * Projects a stream: applies every compaction overlay and drops the
 * compaction entries themselves. Config deltas and unknown entries pass
 * through everywhere, including inside summarized turns, so the config state
 * outside the range is unaffected (RFD 064 "Config delta preservation").
 */
export function project(entries: readonly Entry[]): Projection {
  const { turnOf, turnCount } = indexTurns(entries);
  const compactions = compactionsOf(entries);
  // Stryker disable next-line ConditionalExpression,BlockStatement: a fast path; the general path below gives the same view.
  if (compactions.length === 0) {
    const turns: TurnOrigin[] = [];
    for (let t = 0; t < turnCount; t++) turns.push({ kept: t });
    return { entries: entries.slice(), turns };
  }
  const policies = resolvePolicies(compactions, turnCount);
  const names = toolNamesById(entries, turnOf);
  const out: Entry[] = [];
  const turns: TurnOrigin[] = [];

  let emittedThroughTurn = -1;
  const enterTurn = (turn: number, timestamp: string) => {
    for (let t = emittedThroughTurn + 1; t <= turn; t++) {
      const summary = (policies[t] as TurnPolicies).summary;
      if (summary === undefined) {
        turns.push({ kept: t });
        continue;
      }
      if (policies[t - 1]?.summary === summary) continue;
      let to = t;
      while (policies[to + 1]?.summary === summary) to++;
      out.push(...summaryEntries(timestamp, summaryTextOf(summary)));
      turns.push({ summary: { from: t, to } });
    }
    emittedThroughTurn = Math.max(emittedThroughTurn, turn);
  };

  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Entry;
    if (!isKnown(entry)) {
      out.push(entry);
      continue;
    }
    if (entry.type === "compaction") continue;
    if (entry.type === "config_delta") {
      out.push(entry);
      continue;
    }
    const turn = turnOf[i] as number;
    enterTurn(turn, entry.timestamp);
    const policy = policies[turn] as TurnPolicies;
    if (policy.summary !== undefined) continue;
    const toolPolicy = policy.tool_calls?.tool_calls;
    switch (entry.type) {
      case "chat_response":
        if (entry.reasoning !== undefined && policy.reasoning !== undefined) continue;
        out.push(entry);
        break;
      case "tool_call_request": {
        const projected = projectToolRequest(entry, toolPolicy);
        if (projected) out.push(projected);
        break;
      }
      case "tool_call_response": {
        const projected = projectToolResponse(entry, toolPolicy, () =>
          toolNameFor(names, entry.id, turn),
        );
        if (projected) out.push(projected);
        break;
      }
      default:
        out.push(entry);
    }
  }
  return { entries: out, turns };
}
