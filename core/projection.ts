/**
 * Projection (RFD 064 "Projection Layer", ARCHITECTURE §5): a pure function
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

/** A compaction with its position in the stream, the unit the winner rules work on. */
export interface PlacedCompaction {
  readonly compaction: Compaction;
  /** Position among the stream's compactions (0-based), the stream-order tie-break. */
  readonly position: number;
  readonly nanos: bigint;
}

/** For every turn, the compaction (by position) that wins each policy kind, or -1. */
export interface PolicyWinners {
  readonly summary: Int32Array;
  readonly reasoning: Int32Array;
  readonly toolCalls: Int32Array;
}

/** Lists a stream's compactions in stream order with their ordering keys. */
export function placeCompactions(compactions: readonly Compaction[]): PlacedCompaction[] {
  return compactions.map((compaction, position) => ({
    compaction,
    position,
    nanos: timestampNanos(compaction.timestamp),
  }));
}

function isNewer(candidate: PlacedCompaction, current: PlacedCompaction | undefined): boolean {
  if (!current) return true;
  if (candidate.nanos !== current.nanos) return candidate.nanos > current.nanos;
  return candidate.position > current.position;
}

/**
 * Resolves, per turn and per policy kind independently, the covering
 * compaction with the latest timestamp (stream order breaks ties). A
 * compaction covers `from_turn <= t <= min(to_turn, last_turn)`.
 */
export function resolveWinners(
  placed: readonly PlacedCompaction[],
  turnCount: number,
): PolicyWinners {
  const winners: PolicyWinners = {
    summary: new Int32Array(turnCount).fill(-1),
    reasoning: new Int32Array(turnCount).fill(-1),
    toolCalls: new Int32Array(turnCount).fill(-1),
  };
  const kinds = [
    ["summary", (c: Compaction) => c.summary !== undefined],
    ["reasoning", (c: Compaction) => c.reasoning !== undefined],
    ["toolCalls", (c: Compaction) => c.tool_calls !== undefined],
  ] as const;
  for (const [kind, hasPolicy] of kinds) {
    const slots = winners[kind];
    for (const entry of placed) {
      if (!hasPolicy(entry.compaction)) continue;
      const last = Math.min(entry.compaction.to_turn, turnCount - 1);
      for (let t = entry.compaction.from_turn; t <= last; t++) {
        const current = slots[t] as number;
        if (current < 0 || isNewer(entry, placed[current])) slots[t] = entry.position;
      }
    }
  }
  return winners;
}

/** The status line a stripped tool response is replaced with. */
export function strippedResponseContent(toolName: string, isError: boolean): string {
  return `[compacted] ${toolName}: ${isError ? "error" : "success"}`;
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
 * turn's stripped size fixed once the turn is stored), `unknown` for an orphan.
 */
export function toolNameFor(names: ToolNames, id: string, turn: number): string {
  const requests = names.get(id);
  if (!requests) return "unknown";
  for (let i = requests.length - 1; i >= 0; i--) {
    const request = requests[i] as { name: string; turn: number };
    if (request.turn <= turn) return request.name;
  }
  return "unknown";
}

/** The compacted form of a tool request, or `undefined` when it is omitted. */
function projectToolRequest(
  request: ToolCallRequest,
  policy: ToolCallPolicy | undefined,
): ToolCallRequest | undefined {
  if (!policy) return request;
  if (policy.policy === "omit") return undefined;
  return policy.request ? { ...request, arguments: {} } : request;
}

function projectToolResponse(
  response: ToolCallResponse,
  policy: ToolCallPolicy | undefined,
  toolName: () => string,
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
  const placed = placeCompactions(compactionsOf(entries));
  if (placed.length === 0) {
    const turns: TurnOrigin[] = [];
    for (let t = 0; t < turnCount; t++) turns.push({ kept: t });
    return { entries: entries.slice(), turns };
  }
  const winners = resolveWinners(placed, turnCount);
  const names = toolNamesById(entries, turnOf);
  const out: Entry[] = [];
  const turns: TurnOrigin[] = [];

  let emittedThroughTurn = -1;
  const enterTurn = (turn: number, timestamp: string) => {
    for (let t = emittedThroughTurn + 1; t <= turn; t++) {
      const summaryWinner = winners.summary[t] as number;
      if (summaryWinner < 0) {
        turns.push({ kept: t });
        continue;
      }
      const previous = t > 0 ? (winners.summary[t - 1] as number) : -1;
      if (previous === summaryWinner) continue;
      let to = t;
      while (to + 1 < turnCount && winners.summary[to + 1] === summaryWinner) to++;
      const compaction = (placed[summaryWinner] as PlacedCompaction).compaction;
      out.push(...summaryEntries(timestamp, compaction.summary?.summary ?? ""));
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
    if ((winners.summary[turn] as number) >= 0) continue;
    const toolWinner = winners.toolCalls[turn] as number;
    const toolPolicy = toolWinner >= 0 ? placed[toolWinner]?.compaction.tool_calls : undefined;
    switch (entry.type) {
      case "chat_response":
        if (entry.reasoning !== undefined && (winners.reasoning[turn] as number) >= 0) continue;
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
