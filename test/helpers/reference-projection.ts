/**
 * An independent reference of RFD 064's projection, for property tests.
 *
 * Written from the RFD's rules, not from `core/projection.ts`, and as plainly
 * as possible: it shares no code with core (not the turn walk, not the
 * timestamp parser, not the winner resolution), so a bug in one is not
 * silently repeated in the other. Slow on purpose: every decision is a scan.
 *
 * The rules it encodes:
 * - A `turn_start` opens a new turn only when the current turn already holds
 *   a conversation event; stream metadata (config deltas, compactions,
 *   unknown entries) never opens or fills a turn.
 * - Per turn and per policy kind, the covering compaction (from_turn <= t <=
 *   to_turn) with the newest timestamp wins; equal timestamps go to the later
 *   one in the stream.
 * - A turn with a summary winner loses all its conversation events; a run of
 *   consecutive turns with the same summary winner is replaced by one
 *   synthetic turn (turn_start, request, response) stamped with the first
 *   event of the run. Metadata passes through everywhere.
 * - Otherwise reasoning responses go when a reasoning policy wins; tool
 *   requests and responses are omitted, or stripped to `{}` arguments and a
 *   `[compacted] <name>: <status>` line, by the winning tool policy. The name
 *   is that of the latest request with the same id in the response's turn or
 *   an earlier one, `unknown` without one.
 * - Tool pairs (docs/architecture.md §5): a response answers a request with its
 *   id earlier in its own turn; failing that, one in an earlier turn makes it
 *   a carried result, and with neither it is an orphan, never in the view. A
 *   request no later response of its turn answers is pending. A turn's
 *   pending requests stay when it is the last turn or the next turn holds
 *   exactly as many carried results; those results stay when they are as
 *   many as the previous turn's pending requests, under that turn's policies
 *   (its summary drops them, its tool policy strips or omits them, naming
 *   the latest request up to that turn), and go before their own turn's
 *   summary when that turn is summarized.
 */
import type { Compaction, Entry, KnownEntry } from "../../core/events.ts";

const CONVERSATION = new Set([
  "turn_start",
  "chat_request",
  "chat_response",
  "tool_call_request",
  "tool_call_response",
  "inquiry_request",
  "inquiry_response",
]);

type Kind = "summary" | "reasoning" | "tool_calls";

/** Nanoseconds since the epoch of an RFC 3339 UTC timestamp with up to 9 fraction digits. */
function nanosOf(timestamp: string): bigint {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(timestamp);
  if (!match) throw new Error(`reference: unsupported timestamp ${timestamp}`);
  const seconds = BigInt(Date.parse(`${match[1]}Z`)) / 1000n;
  const fraction = BigInt((match[2] ?? "").padEnd(9, "0"));
  return seconds * 1_000_000_000n + fraction;
}

/** The turn of every entry of a stream, and the number of turns. */
export function referenceTurns(entries: readonly Entry[]): { turnOf: number[]; count: number } {
  const turnOf: number[] = [];
  let turn = 0;
  let filled = false;
  for (const entry of entries) {
    if (entry.type === "turn_start" && filled) {
      turn += 1;
      filled = false;
    }
    if (CONVERSATION.has(entry.type)) filled = true;
    turnOf.push(turn);
  }
  return { turnOf, count: filled ? turn + 1 : turn };
}

/** The compaction (by index in `compactions`) winning `kind` for `turn`, or -1. */
function winner(compactions: readonly Compaction[], kind: Kind, turn: number): number {
  let best = -1;
  compactions.forEach((c, i) => {
    if (c[kind] === undefined || turn < c.from_turn || turn > c.to_turn) return;
    if (best === -1) {
      best = i;
      return;
    }
    const current = compactions[best] as Compaction;
    // Later in the stream wins a tie, so only a strictly older candidate loses.
    if (nanosOf(c.timestamp) >= nanosOf(current.timestamp)) best = i;
  });
  return best;
}

type PairRole = "own" | "pending" | "carried" | "orphan";

/** The pairing role of the tool event at `i`, by scanning the stream. */
function pairRole(entries: readonly Entry[], turnOf: readonly number[], i: number): PairRole {
  const entry = entries[i] as KnownEntry & { id: string };
  const turn = turnOf[i] as number;
  const sameId = (j: number, type: string) =>
    entries[j]?.type === type && (entries[j] as { id?: string }).id === entry.id;
  if (entry.type === "tool_call_request") {
    for (let j = i + 1; j < entries.length && turnOf[j] === turn; j++) {
      if (sameId(j, "tool_call_response")) return "own";
    }
    return "pending";
  }
  for (let j = i - 1; j >= 0; j--) {
    if (sameId(j, "tool_call_request")) return turnOf[j] === turn ? "own" : "carried";
  }
  return "orphan";
}

/** The projected view of a stream, by the rules above. */
export function referenceProject(entries: readonly Entry[]): Entry[] {
  const compactions = entries.filter((e): e is Compaction => e.type === "compaction");
  const { turnOf, count } = referenceTurns(entries);
  const roles = entries.map((e, i) =>
    e.type === "tool_call_request" || e.type === "tool_call_response"
      ? pairRole(entries, turnOf, i)
      : undefined,
  );
  const counted = (role: PairRole, turn: number) =>
    roles.filter((r, i) => r === role && turnOf[i] === turn).length;
  const pendingStays = (turn: number) =>
    turn === count - 1 || counted("carried", turn + 1) === counted("pending", turn);
  const carriedStays = (turn: number) =>
    turn > 0 && counted("pending", turn - 1) === counted("carried", turn);
  const toolPolicy = (turn: number) => {
    const tools = winner(compactions, "tool_calls", turn);
    return tools >= 0 ? (compactions[tools] as Compaction).tool_calls : undefined;
  };
  const strippedName = (id: string, turn: number) => {
    let name = "unknown";
    entries.forEach((other, j) => {
      const request = other as KnownEntry;
      if (request.type !== "tool_call_request" || request.id !== id) return;
      if ((turnOf[j] as number) <= turn) name = request.name;
    });
    return name;
  };
  const response = (
    entry: KnownEntry & { type: "tool_call_response" },
    policyTurn: number,
    turn: number,
  ) => {
    const policy = toolPolicy(policyTurn);
    if (policy?.policy === "omit") return;
    if (!policy?.response) {
      out.push(entry);
      return;
    }
    const status = entry.is_error ? "error" : "success";
    out.push({ ...entry, content: `[compacted] ${strippedName(entry.id, turn)}: ${status}` });
  };
  const carried = (entry: KnownEntry & { type: "tool_call_response" }, turn: number) => {
    if (!carriedStays(turn) || winner(compactions, "summary", turn - 1) >= 0) return;
    // Named after the call it answers, in an earlier turn.
    response(entry, turn - 1, turn - 1);
  };
  const out: Entry[] = [];
  const seenTurns = new Set<number>();
  entries.forEach((raw, i) => {
    if (raw.type === "compaction") return;
    if (!CONVERSATION.has(raw.type)) {
      out.push(raw);
      return;
    }
    const entry = raw as KnownEntry;
    const turn = turnOf[i] as number;
    const firstOfTurn = !seenTurns.has(turn);
    seenTurns.add(turn);
    const summary = winner(compactions, "summary", turn);
    if (summary >= 0 && firstOfTurn) {
      entries.forEach((other, j) => {
        if (turnOf[j] === turn && roles[j] === "carried") carried(other as never, turn);
      });
    }
    if (summary >= 0) {
      const startsRun = turn === 0 || winner(compactions, "summary", turn - 1) !== summary;
      if (firstOfTurn && startsRun) {
        const timestamp = (entry as { timestamp: string }).timestamp;
        const text = (compactions[summary] as Compaction).summary?.summary as string;
        out.push(
          { type: "turn_start", timestamp },
          { type: "chat_request", timestamp, content: "[Summary of previous conversation]" },
          { type: "chat_response", timestamp, message: text },
        );
      }
      return;
    }
    const tools = winner(compactions, "tool_calls", turn);
    const policy = tools >= 0 ? (compactions[tools] as Compaction).tool_calls : undefined;
    if (entry.type === "chat_response" && entry.reasoning !== undefined) {
      if (winner(compactions, "reasoning", turn) < 0) out.push(entry);
      return;
    }
    if (entry.type === "tool_call_request") {
      if (roles[i] === "pending" && !pendingStays(turn)) return;
      if (policy?.policy === "omit") return;
      out.push(policy?.request ? { ...entry, arguments: {} } : entry);
      return;
    }
    if (entry.type === "tool_call_response") {
      if (roles[i] === "carried") carried(entry, turn);
      else if (roles[i] === "own") response(entry, turn, turn);
      return;
    }
    out.push(entry);
  });
  return out;
}

/** UTF-8 bytes of the provider-visible content of a view (the estimate's numerator). */
export function referenceChars(view: readonly Entry[]): number {
  const bytes = (text: string) => Buffer.byteLength(text, "utf8");
  let chars = 0;
  for (const raw of view) {
    const entry = raw as KnownEntry;
    if (entry.type === "chat_request") chars += bytes(entry.content);
    else if (entry.type === "chat_response") {
      const text = entry.message ?? entry.reasoning ?? JSON.stringify(entry.data) ?? "";
      chars += bytes(text);
    } else if (entry.type === "tool_call_request")
      chars += bytes(entry.name) + bytes(JSON.stringify(entry.arguments));
    else if (entry.type === "tool_call_response") chars += bytes(entry.content);
  }
  return chars;
}
