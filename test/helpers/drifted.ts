/**
 * Conversations whose stored numbers are wrong, written through the store
 * directly (as a bug or a partial write would leave them), for the verify
 * tests. The numbers a verify must find are worked out by hand beside each.
 */
import type { ConversationRef, ConversationStore } from "../../functions/ports.ts";
import { storedTurn } from "../contract/conversation-store.contract.ts";
import { compaction, message, request, toolCall, toolResult, turnStart } from "./builders.ts";

/**
 * Turn 0: a 100-char request and a 60-char answer (text 160). Turn 1: a
 * 40-char request, a tool call (12-char name + 16-char `{"path":"a.log"}`),
 * a 300-char result and a 4-char answer (text 44, tool requests 28, tool
 * responses 300). Turn 2: 20 + 30 chars of text (50).
 */
export const DRIFTED_TURNS = [
  storedTurn(0, [request("q".repeat(100)), message("a".repeat(60))]),
  storedTurn(1, [
    turnStart(1),
    request("r".repeat(40), 1),
    toolCall("c1", "fs_read_file", { path: "a.log" }, 1),
    toolResult("c1", "x".repeat(300), false, 1),
    message("done", 1),
  ]),
  storedTurn(2, [turnStart(2), request("s".repeat(20), 2), message("b".repeat(30), 2)]),
];

/**
 * Stores {@link DRIFTED_TURNS} and a manual band omitting turn 1's tool
 * calls (written as version 5 while the head's version becomes 1), with
 * every cached number wrong: the head ends at turn_count 3, projected_chars
 * 7, max_compacted_turn 0, compactions_version 1, evaluated_through 9.
 *
 * What the head must hold: turn_count 3; projected_chars 160 + 44 + 50 = 254
 * (turn 1's 28 + 300 tool characters omitted); max_compacted_turn 1;
 * compactions_version 5 (the band's); evaluated_through 2 (the last turn).
 */
export async function storeDriftedConversation(
  store: ConversationStore,
  ref: ConversationRef,
): Promise<void> {
  const [t0, t1, t2] = DRIFTED_TURNS as [
    (typeof DRIFTED_TURNS)[0],
    (typeof DRIFTED_TURNS)[0],
    (typeof DRIFTED_TURNS)[0],
  ];
  await store.appendTurn(ref, t0, { compactions_version: 0 }, { projected_chars: 7 });
  await store.appendTurn(ref, t1, { compactions_version: 0 }, {});
  const band = compaction(1, 1, 10, { source: "manual", tool_calls: { policy: "omit" } });
  await store.addCompaction(
    ref,
    { key: "MAN#000005", after_turn: 1, seq: 5, compaction: band },
    { turn_count: 2, compactions_version: 0 },
    { max_compacted_turn: 0 },
  );
  await store.appendTurn(ref, t2, { compactions_version: 1 }, {});
  await store.markEvaluated(ref, 9);
}

/** The drift a verify of {@link storeDriftedConversation} reports, in the order it reports it. */
export const DRIFTED_REPORT = [
  { field: "projected_chars", stored: 7, expected: 254 },
  { field: "max_compacted_turn", stored: 0, expected: 1 },
  { field: "compactions_version", stored: 1, expected: 5 },
  { field: "evaluated_through", stored: 9, expected: 2 },
];

/**
 * One turn (a 100-char request and a 60-char answer: text 160) stored with
 * sizes saying text 1, and a head consistent with those sizes
 * (projected_chars 1): only the turn's sizes drift.
 */
export async function storeWrongSizes(
  store: ConversationStore,
  ref: ConversationRef,
): Promise<void> {
  const turn = storedTurn(0, [request("q".repeat(100)), message("a".repeat(60))]);
  await store.appendTurn(
    ref,
    { ...turn, size: { ...turn.size, text: 1 } },
    { compactions_version: 0 },
    { projected_chars: 1 },
  );
}
