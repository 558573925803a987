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

  it("leaves a compaction that covers none of the turns out of their form", () => {
    const turn: Entry[] = [
      { type: "turn_start", timestamp: at(1) },
      { type: "chat_request", timestamp: at(2), content: "question" },
      { type: "chat_response", timestamp: at(3), reasoning: "thinking" },
      { type: "chat_response", timestamp: at(4), message: "answer" },
    ];
    const summary = (from: number, to: number): Compaction => ({
      type: "compaction",
      timestamp: at(9),
      from_turn: from,
      to_turn: to,
      source: "manual",
      summary: { summary: "elsewhere" },
    });
    const reasoning: Compaction = {
      type: "compaction",
      timestamp: at(8),
      from_turn: 2,
      to_turn: 4,
      source: "manual",
      reasoning: "strip",
    };
    // Turn 4 alone: one summary ends just before it, one starts just after it.
    expect(materializeTurns([turn], 4, [summary(0, 3), reasoning, summary(5, 7)])).toEqual([
      [
        { type: "turn_start", timestamp: at(1) },
        { type: "chat_request", timestamp: at(2), content: "question" },
        { type: "chat_response", timestamp: at(4), message: "answer" },
      ],
    ]);
  });

  const summarizedAt0: Compaction = {
    type: "compaction",
    timestamp: at(9),
    from_turn: 0,
    to_turn: 0,
    source: "auto",
    summary: { summary: "short" },
  };

  it.each<{ opening: string; turn: Entry[]; form: Entry[] }>([
    {
      opening: "a request",
      turn: [
        { type: "chat_request", timestamp: at(1), content: "long question" },
        { type: "chat_response", timestamp: at(2), message: "long answer" },
      ],
      form: [{ type: "chat_request", timestamp: at(1), content: "" }],
    },
    {
      opening: "a response",
      turn: [
        { type: "chat_response", timestamp: at(1), message: "long answer" },
        { type: "chat_request", timestamp: at(2), content: "long question" },
      ],
      form: [{ type: "chat_response", timestamp: at(1), message: "" }],
    },
    {
      opening: "a reasoning response",
      turn: [
        { type: "chat_response", timestamp: at(1), reasoning: "long thought" },
        { type: "chat_response", timestamp: at(2), message: "long answer" },
      ],
      form: [{ type: "chat_response", timestamp: at(1), reasoning: "" }],
    },
    {
      opening: "a config delta before its turn start",
      turn: [
        { type: "config_delta", timestamp: at(1), delta: { model: "m" } },
        { type: "turn_start", timestamp: at(2) },
        { type: "chat_request", timestamp: at(3), content: "long question" },
      ],
      form: [
        { type: "config_delta", timestamp: at(1), delta: { model: "m" } },
        { type: "turn_start", timestamp: at(2) },
      ],
    },
  ])("keeps a summarized turn opening with $opening as that event emptied", ({ turn, form }) => {
    expect(materializeTurns([turn], 0, [summarizedAt0])).toEqual([form]);
    // The emptied event still opens the turn and stamps its summary.
    expect(project([...form, summarizedAt0])).toEqual(project([...turn, summarizedAt0]));
  });
});

describe("pairsWithinTurn", () => {
  const start: Entry = { type: "turn_start", timestamp: at(1) };
  const call = (id: string, s: number): Entry => ({
    type: "tool_call_request",
    timestamp: at(s),
    id,
    name: "grep",
    arguments: {},
  });
  const result = (id: string, s: number): Entry => ({
    type: "tool_call_response",
    timestamp: at(s),
    id,
    content: "found",
    is_error: false,
  });

  it.each<{ turn: string; events: Entry[]; pairs: boolean }>([
    {
      turn: "a turn with no tool event",
      events: [start, { type: "chat_request", timestamp: at(2), content: "q" }],
      pairs: true,
    },
    {
      turn: "calls each answered later in the turn",
      events: [start, call("a", 2), call("b", 3), result("b", 4), result("a", 5)],
      pairs: true,
    },
    {
      turn: "an answered call beside an unanswered one",
      events: [start, call("a", 2), result("a", 3), call("b", 4)],
      pairs: false,
    },
    {
      turn: "an answered call beside a result with no call in the turn",
      events: [start, call("a", 2), result("a", 3), result("z", 4)],
      pairs: false,
    },
    {
      turn: "a result before its call",
      events: [start, result("a", 2), call("a", 3)],
      pairs: false,
    },
  ])("$turn pairs within itself: $pairs", ({ events, pairs }) => {
    expect(pairsWithinTurn(events)).toBe(pairs);
  });
});
