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
 * The part a tool event plays in its turn (docs/architecture.md §5 "Tool pairs"):
 * a request answered later in its turn, or a response to a request earlier
 * in it, is `paired`; a request left unanswered in its turn is `pending`; a
 * response whose request is in no earlier place of its turn but in an earlier
 * turn is `carried` (it answers the previous turn's pending calls); any other
 * response is an `orphan`.
 */
export type ToolRole = "paired" | "pending" | "carried" | "orphan";

/**
 * The role of each event of one turn (`undefined` for events that are no
 * tool event); `requestedEarlier(id)` tells whether an earlier turn requested `id`.
 */
export function toolRoles(
  events: readonly Entry[],
  requestedEarlier: (id: string) => boolean,
): (ToolRole | undefined)[] {
  const roles: (ToolRole | undefined)[] = new Array(events.length);
  const requested = new Set<string>();
  const answeredLater = new Set<string>();
  for (let j = events.length - 1; j >= 0; j--) {
    const entry = events[j] as Entry;
    if (entry.type === "tool_call_request") {
      const { id } = entry as ToolCallRequest;
      roles[j] = answeredLater.has(id) ? "paired" : "pending";
    } else if (entry.type === "tool_call_response") {
      answeredLater.add((entry as ToolCallResponse).id);
    }
  }
  events.forEach((entry, j) => {
    if (entry.type === "tool_call_request") requested.add((entry as ToolCallRequest).id);
    if (entry.type !== "tool_call_response") return;
    const { id } = entry as ToolCallResponse;
    if (requested.has(id)) roles[j] = "paired";
    else roles[j] = requestedEarlier(id) ? "carried" : "orphan";
  });
  return roles;
}

/**
 * Whether turn `t`'s pending calls stay in the view: when `t` is the last
 * turn, or when the next turn carries exactly as many results (they answer
 * them). `pending[t]` and `carried[t]` count those roles in turn `t`.
 */
export function keepsPending(
  pending: (t: number) => number,
  carried: (t: number) => number,
  t: number,
  turnCount: number,
): boolean {
  const calls = pending(t);
  return calls > 0 && (t === turnCount - 1 || carried(t + 1) === calls);
}

/** Whether turn `t`'s carried results stay in the view: they answer every pending call of turn `t - 1`. */
export function keepsCarried(
  pending: (t: number) => number,
  carried: (t: number) => number,
  t: number,
): boolean {
  const results = carried(t);
  return results > 0 && t > 0 && pending(t - 1) === results;
}

/** The tool roles of a whole stream, with each turn's counts of pending calls and carried results. */
interface StreamToolRoles {
  readonly roles: (ToolRole | undefined)[];
  readonly pending: Int32Array;
  readonly carried: Int32Array;
  /** Some tool event is not `paired`. */
  readonly irregular: boolean;
}

function streamToolRoles(
  entries: readonly Entry[],
  turnOf: Int32Array,
  turnCount: number,
): StreamToolRoles {
  const roles: (ToolRole | undefined)[] = [];
  const pending = new Int32Array(turnCount + 1);
  const carried = new Int32Array(turnCount + 1);
  const earlier = new Set<string>();
  // Stryker disable next-line BooleanLiteral: `irregular` only opens the fast path of projectTracked, which gives the same view.
  let irregular = false;
  for (let start = 0; start < entries.length; ) {
    const turn = turnOf[start] as number;
    let end = start;
    // `turnOf` ends with the stream: past its end the index is undefined, which ends the turn.
    while (turnOf[end] === turn) end++;
    const events = entries.slice(start, end);
    const own = toolRoles(events, (id) => earlier.has(id));
    own.forEach((role) => {
      if (role === "pending") pending[turn] = (pending[turn] ?? 0) + 1;
      if (role === "carried") carried[turn] = (carried[turn] ?? 0) + 1;
      // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: the fast path's flag (above).
      if (role !== undefined && role !== "paired") irregular = true;
    });
    roles.push(...own);
    for (const entry of events) {
      if (entry.type === "tool_call_request") earlier.add((entry as ToolCallRequest).id);
    }
    start = end;
  }
  return { roles, pending, carried, irregular };
}

/**
 * Projects a stream: applies every compaction overlay and drops the
 * compaction entries themselves. Config deltas and unknown entries pass
 * through everywhere, including inside summarized turns, so the config state
 * outside the range is unaffected (RFD 064 "Config delta preservation").
 *
 * Tool pairs (docs/architecture.md §5): a call and its result are projected
 * together under the policies of the turn that holds the call, so a carried
 * result follows the previous turn's (and goes before its own turn's summary
 * when only its own turn is summarized); pending calls and carried results
 * are kept only as {@link keepsPending} and {@link keepsCarried} say, and
 * orphan results never.
 */
export function project(entries: readonly Entry[]): Projection {
  return projectTracked(entries);
}

/**
 * {@link project}, with what became of each entry: `emitted[i]` is the form
 * of `entries[i]` in the view (itself, stripped, or `undefined` when the view
 * drops it; a summary's own entries come from no entry). The materialized
 * form of a band (core/materialize.ts) is built from it.
 */
export function projectWithSources(
  entries: readonly Entry[],
): Projection & { readonly emitted: (Entry | undefined)[] } {
  const emitted: (Entry | undefined)[] = new Array(entries.length).fill(undefined);
  return { ...projectTracked(entries, emitted), emitted };
}

function projectTracked(entries: readonly Entry[], emitted?: (Entry | undefined)[]): Projection {
  const { turnOf, turnCount } = indexTurns(entries);
  const compactions = compactionsOf(entries);
  const tools = streamToolRoles(entries, turnOf, turnCount);
  // Stryker disable next-line ConditionalExpression,BlockStatement: a fast path; the general path below gives the same view.
  if (compactions.length === 0 && !tools.irregular) {
    const turns: TurnOrigin[] = [];
    for (let t = 0; t < turnCount; t++) turns.push({ kept: t });
    if (emitted) for (const [i, entry] of entries.entries()) emitted[i] = entry;
    return { entries: entries.slice(), turns };
  }
  const policies = resolvePolicies(compactions, turnCount);
  const names = toolNamesById(entries, turnOf);
  const pendingOf = (t: number) => tools.pending[t] ?? 0;
  const carriedOf = (t: number) => tools.carried[t] ?? 0;
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
  // A carried result under the previous turn's policies (the turn of its call).
  const carriedResult = (response: ToolCallResponse, turn: number) => {
    if (!keepsCarried(pendingOf, carriedOf, turn)) return undefined;
    const callTurn = policies[turn - 1] as TurnPolicies;
    if (callTurn.summary !== undefined) return undefined;
    // Named after the call it answers: this turn may call the same id again.
    return projectToolResponse(response, callTurn.tool_calls?.tool_calls, () =>
      toolNameFor(names, response.id, turn - 1),
    );
  };

  const emit = (i: number, entry: Entry) => {
    out.push(entry);
    if (emitted) emitted[i] = entry;
  };
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Entry;
    if (!isKnown(entry)) {
      emit(i, entry);
      continue;
    }
    if (entry.type === "compaction") continue;
    if (entry.type === "config_delta") {
      emit(i, entry);
      continue;
    }
    const turn = turnOf[i] as number;
    const policy = policies[turn] as TurnPolicies;
    if (turn > emittedThroughTurn && policy.summary !== undefined) {
      // A summarized turn's carried results answer calls before it: they go first.
      for (let j = i; turnOf[j] === turn; j++) {
        if (tools.roles[j] !== "carried") continue;
        const projected = carriedResult(entries[j] as ToolCallResponse, turn);
        if (projected) emit(j, projected);
      }
    }
    enterTurn(turn, entry.timestamp);
    if (policy.summary !== undefined) continue;
    const toolPolicy = policy.tool_calls?.tool_calls;
    switch (entry.type) {
      case "chat_response":
        if (entry.reasoning !== undefined && policy.reasoning !== undefined) continue;
        emit(i, entry);
        break;
      case "tool_call_request": {
        if (tools.roles[i] === "pending" && !keepsPending(pendingOf, carriedOf, turn, turnCount)) {
          break;
        }
        const projected = projectToolRequest(entry, toolPolicy);
        if (projected) emit(i, projected);
        break;
      }
      case "tool_call_response": {
        const role = tools.roles[i];
        const projected =
          role === "carried"
            ? carriedResult(entry, turn)
            : role === "orphan"
              ? undefined
              : projectToolResponse(entry, toolPolicy, () => toolNameFor(names, entry.id, turn));
        if (projected) emit(i, projected);
        break;
      }
      default:
        emit(i, entry);
    }
  }
  return { entries: out, turns };
}
