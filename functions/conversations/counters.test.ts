import { describe, expect, it } from "vitest";
import { EMPTY_TURN_SIZE, type TurnSize } from "../../core/sizes.ts";
import { storedTurn } from "../../test/contract/conversation-store.contract.ts";
import {
  compaction,
  message,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../../test/helpers/builders.ts";
import type { StoredCompaction } from "../ports.ts";
import { expectedCounters, headDrift, measureStoredTurns, sizeDrift } from "./counters.ts";

const text = (n: number): TurnSize => ({ ...EMPTY_TURN_SIZE, text: n });
const band = (from: number, to: number, seq: number): StoredCompaction => ({
  key: `MAN#${seq}`,
  after_turn: to,
  seq,
  compaction: compaction(from, to, seq, { source: "manual", reasoning: "strip" }),
});

describe("expectedCounters", () => {
  it("derives every counter from the stored turns and compactions", () => {
    const head = {
      turn_count: 5,
      projected_chars: 0,
      max_compacted_turn: -1,
      compactions_version: 2,
      evaluated_through: 7,
    };
    // Three turns of 10, 20 and 30 characters of text (a reasoning strip leaves text alone).
    expect(expectedCounters(head, [text(10), text(20), text(30)], [band(0, 1, 4)])).toEqual({
      turn_count: 3,
      projected_chars: 60,
      max_compacted_turn: 1,
      compactions_version: 4,
      evaluated_through: 2,
    });
  });

  it("keeps a version above every compaction's and an evaluation short of the last turn", () => {
    const head = {
      turn_count: 2,
      projected_chars: 3,
      max_compacted_turn: 0,
      compactions_version: 9,
      evaluated_through: 0,
    };
    expect(expectedCounters(head, [text(1), text(2)], [band(0, 0, 3)])).toEqual(head);
    expect(expectedCounters({ ...head, evaluated_through: -1 }, [], [])).toEqual({
      turn_count: 0,
      projected_chars: 0,
      max_compacted_turn: -1,
      compactions_version: 9,
      evaluated_through: -1,
    });
  });
});

describe("headDrift and sizeDrift", () => {
  it("lists the differing numbers in a fixed order", () => {
    const stored = {
      turn_count: 4,
      projected_chars: 1,
      max_compacted_turn: 0,
      compactions_version: 1,
      evaluated_through: 3,
    };
    const expected = { ...stored, evaluated_through: 2, turn_count: 3 };
    expect(headDrift(stored, expected)).toEqual([
      { field: "turn_count", stored: 4, expected: 3 },
      { field: "evaluated_through", stored: 3, expected: 2 },
    ]);
    expect(headDrift(stored, stored)).toEqual([]);
    expect(
      sizeDrift([text(1), { ...text(2), reasoning: 5 }], [text(1), { ...text(3), reasoning: 4 }]),
    ).toEqual([
      { field: "turns[1].size.text", stored: 2, expected: 3 },
      { field: "turns[1].size.reasoning", stored: 5, expected: 4 },
    ]);
  });
});

describe("measureStoredTurns", () => {
  it("names a tool response after its request in an earlier turn", () => {
    const turns = [
      storedTurn(0, [request("go"), toolCall("c1", "fs_read_file", { path: "a" })]),
      storedTurn(1, [turnStart(1), toolResult("c1", "x".repeat(50), false, 1), message("ok", 1)]),
    ];
    const [, second] = measureStoredTurns(turns);
    // As stored by the service, which looks the name up in earlier turns.
    const names = new Map([["c1", "fs_read_file"]]);
    expect(second).toEqual(storedTurn(1, turns[1]?.events ?? [], undefined, names).size);
    // It answers turn 0's pending call: a carried result (docs/architecture.md §5 "Tool pairs").
    expect(second?.carried_responses).toBe(50);
    expect(second?.carried_responses_stripped).not.toBe(
      storedTurn(1, turns[1]?.events ?? []).size.carried_responses_stripped,
    );
  });
});
