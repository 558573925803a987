/** Terse builders for hand-written streams in tests. */
import type {
  ChatRequest,
  ChatResponse,
  Compaction,
  ConfigDelta,
  Entry,
  ToolCallRequest,
  ToolCallResponse,
  TurnStart,
} from "../../core/events.ts";
import { formatTimestamp } from "../../core/timestamp.ts";

const BASE = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;

/** A canonical timestamp `seconds` after a fixed origin. */
export function at(seconds: number): string {
  return formatTimestamp(BASE + BigInt(Math.round(seconds * 1e6)) * 1_000n);
}

export const turnStart = (s = 0): TurnStart => ({ type: "turn_start", timestamp: at(s) });
export const request = (content: string, s = 0): ChatRequest => ({
  type: "chat_request",
  timestamp: at(s),
  content,
});
export const message = (text: string, s = 0): ChatResponse => ({
  type: "chat_response",
  timestamp: at(s),
  message: text,
});
export const reasoning = (text: string, s = 0): ChatResponse => ({
  type: "chat_response",
  timestamp: at(s),
  reasoning: text,
});
export const toolCall = (
  id: string,
  name: string,
  args: Record<string, unknown>,
  s = 0,
): ToolCallRequest => ({
  type: "tool_call_request",
  timestamp: at(s),
  id,
  name,
  arguments: args,
});
export const toolResult = (
  id: string,
  content: string,
  isError = false,
  s = 0,
): ToolCallResponse => ({
  type: "tool_call_response",
  timestamp: at(s),
  id,
  content,
  is_error: isError,
});
export const configDelta = (delta: Record<string, unknown>, s = 0): ConfigDelta => ({
  type: "config_delta",
  timestamp: at(s),
  delta,
});

/**
 * Turns of 400 bytes (100 tokens by chars / 4): a 300-byte request a band
 * keeps and 100 bytes of reasoning it strips, so a band removes 25 tokens a
 * turn; turn `t` is stamped at `t` seconds (the guards' tests, issue 26).
 */
export function strippableTurns(turns: number): Entry[] {
  return Array.from({ length: turns }, (_, t) => [
    turnStart(t),
    request("q".repeat(300), t),
    reasoning("r".repeat(100), t),
  ]).flat();
}

/** A compaction over `[from, to]` created at `seconds`. */
export function compaction(
  from: number,
  to: number,
  seconds: number,
  policies: Partial<
    Pick<Compaction, "summary" | "reasoning" | "tool_calls" | "source" | "trigger">
  >,
): Compaction {
  return {
    type: "compaction",
    timestamp: at(seconds),
    from_turn: from,
    to_turn: to,
    source: "manual",
    ...policies,
  };
}

/** Turn `t` of {@link messageTurns}: `turn_start`, request `q{t}`, message `m{t}`. */
export function messageTurn(t: number): Entry[] {
  return [turnStart(t), request(`q${t}`, t), message(`m${t}`, t)];
}

/** Turn `t` with one tool call whose output is `bytes` ASCII characters (a turn too big to page with others). */
export function bigToolTurn(t: number, bytes: number): Entry[] {
  return [
    turnStart(t),
    request(`read file ${t}`, t),
    toolCall(`c${t}`, "read", {}, t),
    toolResult(`c${t}`, String(t % 10).repeat(bytes), false, t),
    message(`done ${t}`, t),
  ];
}

/** `n` turns of `turn_start`, request `q{t}`, message `m{t}`. */
export function messageTurns(n: number): Entry[] {
  return Array.from({ length: n }, (_, t) => messageTurn(t)).flat();
}

/** JP's two-turn fixture: reasoning and one tool call per turn. */
export function twoTurnStream(): Entry[] {
  return [
    turnStart(0),
    request("set up the project", 0),
    reasoning("thinking about layout", 0),
    toolCall("tc1", "fs_create_file", { path: "src/main.rs" }, 0),
    toolResult("tc1", "file created", false, 0),
    message("Created src/main.rs.", 0),
    turnStart(3600),
    request("add error handling", 3600),
    reasoning("considering error types...", 3600),
    toolCall("tc2", "fs_modify_file", { path: "src/main.rs", old: "a", new: "b" }, 3600),
    toolResult("tc2", "ok", false, 3600),
    message("Added error handling.", 3600),
  ];
}

/** The provider-visible entries of a view. */
export function visible(entries: readonly Entry[]): Entry[] {
  return entries.filter((e) =>
    ["chat_request", "chat_response", "tool_call_request", "tool_call_response"].includes(e.type),
  );
}
