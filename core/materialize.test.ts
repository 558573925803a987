import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactedStreamArb, stackedStreamArb } from "../test/helpers/arbitraries.ts";
import { at } from "../test/helpers/builders.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import type { Compaction, Entry } from "./events.ts";
import { materializeTurns, pairsWithinTurn } from "./materialize.ts";
import { compactionsOf, project } from "./projection.ts";
import { splitTurns } from "./turns.ts";

const runs = propertyRuns(150);

/** `stream`'s turns (no compactions) and its compactions, in stream order. */
function parts(stream: readonly Entry[]) {
  return {
    turns: splitTurns(stream.filter((e) => e.type !== "compaction")),
    compactions: compactionsOf(stream),
  };
}

/** The stream with turns `first..` replaced by `form`, compactions after every turn. */
function substituted(
  turns: readonly Entry[][],
  first: number,
  form: readonly Entry[][],
  compactions: readonly Compaction[],
): Entry[] {
  const out = turns.slice();
  out.splice(first, form.length, ...form.map((t) => t.slice()));
  return [...out.flat(), ...compactions];
}

describe("materializeTurns", () => {
  it("projects, in place of the raw turns, to the full stream's view", () => {
    let materialized = 0;
    fc.assert(
      fc.property(
        fc.oneof(stackedStreamArb(), compactedStreamArb(8, 4)),
        fc.nat(),
        fc.nat(),
        (stream, x, y) => {
          const { turns, compactions } = parts(stream);
          fc.pre(turns.length > 0);
          const a = x % turns.length;
          const b = a + (y % (turns.length - a));
          const form = materializeTurns(turns.slice(a, b + 1), a, compactions);
          if (!form) return;
          materialized++;
          expect(project(substituted(turns, a, form, compactions))).toEqual(project(stream));
        },
      ),
      runs,
    );
    // The property must have exercised materialized forms, not only refusals.
    expect(materialized).toBeGreaterThan(0);
  });

  it("keeps a summarized turn as its opening event and its tool calls' ids and names", () => {
    const turn: Entry[] = [
      { type: "turn_start", timestamp: at(1) },
      { type: "chat_request", timestamp: at(2), content: "long question" },
      { type: "tool_call_request", timestamp: at(3), id: "c1", name: "grep", arguments: { q: 1 } },
      { type: "tool_call_response", timestamp: at(4), id: "c1", content: "lots", is_error: true },
      { type: "chat_response", timestamp: at(5), message: "long answer" },
    ];
    const band: Compaction = {
      type: "compaction",
      timestamp: at(9),
      from_turn: 3,
      to_turn: 3,
      source: "auto",
      summary: { summary: "short" },
    };
    expect(materializeTurns([turn], 3, [band])).toEqual([
      [
        { type: "turn_start", timestamp: at(1) },
        { type: "tool_call_request", timestamp: at(3), id: "c1", name: "grep", arguments: {} },
        { type: "tool_call_response", timestamp: at(4), id: "c1", content: "", is_error: true },
      ],
    ]);
  });

  it("keeps a stripped turn as its view and refuses a turn with a call answered elsewhere", () => {
    const turn: Entry[] = [
      { type: "turn_start", timestamp: at(1) },
      { type: "tool_call_request", timestamp: at(3), id: "c1", name: "grep", arguments: { q: 1 } },
      { type: "tool_call_response", timestamp: at(4), id: "c1", content: "lots", is_error: false },
      { type: "chat_response", timestamp: at(5), reasoning: "thinking" },
    ];
    const band: Compaction = {
      type: "compaction",
      timestamp: at(9),
      from_turn: 0,
      to_turn: 5,
      source: "manual",
      reasoning: "strip",
      tool_calls: { policy: "strip", request: true, response: true },
    };
    expect(materializeTurns([turn], 0, [band])).toEqual([
      [
        { type: "turn_start", timestamp: at(1) },
        { type: "tool_call_request", timestamp: at(3), id: "c1", name: "grep", arguments: {} },
        {
          type: "tool_call_response",
          timestamp: at(4),
          id: "c1",
          content: "[compacted] grep: success",
          is_error: false,
        },
      ],
    ]);
    const pending = turn.slice(0, 2);
    expect(pairsWithinTurn(pending)).toBe(false);
    expect(materializeTurns([turn, pending], 0, [band])).toBeUndefined();
  });
});
