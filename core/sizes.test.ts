import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactedStreamArb, compactionArb, streamArb } from "../test/helpers/arbitraries.ts";
import {
  compaction,
  message,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
  twoTurnStream,
} from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import { estimateStream } from "./estimate.ts";
import type { Compaction, Entry } from "./events.ts";
import { compactionsOf } from "./projection.ts";
import type { RunningTotals, TurnSize } from "./sizes.ts";
import {
  bandEndTurns,
  crossesTurns,
  crossesWithin,
  EMPTY_TURN_SIZE,
  measureStream,
  projectedCharsFromSizes,
  projectedCharsWithBand,
  runningTotalsOf,
  type TotaledSize,
} from "./sizes.ts";

describe("per-turn sizes", () => {
  it("count each kind of content in UTF-8 bytes", () => {
    const [first] = measureStream(twoTurnStream());
    expect(first).toEqual({
      text: "set up the project".length + "Created src/main.rs.".length,
      reasoning: "thinking about layout".length,
      tool_requests: "fs_create_file".length + JSON.stringify({ path: "src/main.rs" }).length,
      tool_requests_stripped: "fs_create_file".length + 2,
      tool_responses: "file created".length,
      tool_responses_stripped: "[compacted] fs_create_file: success".length,
    });
  });

  it("counts pending calls, carried results (named from the earlier turn) and orphans apart", () => {
    const stream = [
      turnStart(0),
      request("a"),
      toolCall("x", "grep", {}),
      turnStart(1),
      toolResult("x", "out"),
      toolResult("y", "z"),
      request("b"),
    ];
    const sizes = measureStream(stream);
    expect(sizes[0]).toMatchObject({
      tool_requests: 0,
      pending_calls: 1,
      pending_requests: "grep{}".length,
      pending_requests_stripped: "grep{}".length,
    });
    expect(sizes[1]).toMatchObject({
      tool_responses: 0,
      tool_responses_stripped: 0,
      carried_results: 1,
      carried_responses: "out".length,
      carried_responses_stripped: "[compacted] grep: success".length,
      orphan_results: 1,
    });
  });

  it("leaves the cross-turn counts out of a turn whose tool events all pair", () => {
    expect(Object.keys(measureStream(twoTurnStream())[0] ?? {})).toEqual([
      "text",
      "reasoning",
      "tool_requests",
      "tool_requests_stripped",
      "tool_responses",
      "tool_responses_stripped",
    ]);
  });

  it("give exactly the estimate of the full projection (property)", () => {
    fc.assert(
      fc.property(compactedStreamArb(10, 5), (stream) => {
        const fromSizes = projectedCharsFromSizes(measureStream(stream), compactionsOf(stream));
        expect(fromSizes).toBe(estimateStream(stream).chars);
      }),
      propertyRuns(500),
    );
  });

  it("give exactly the estimate of the full projection on generated conversations", () => {
    const stream = generateConversation({ seed: 7, turns: 30 });
    const withBands = [
      ...stream,
      compaction(1, 12, 1e9, {
        reasoning: "strip",
        tool_calls: { policy: "strip", request: true, response: true },
      }),
      compaction(3, 6, 1e9 + 1, { summary: { summary: "three to six" } }),
      compaction(20, 25, 1e9 + 2, { tool_calls: { policy: "omit" } }),
    ];
    expect(projectedCharsFromSizes(measureStream(withBands), compactionsOf(withBands))).toBe(
      estimateStream(withBands).chars,
    );
  });

  it("with a band after every compaction, give it from the running totals at the band's ends alone (property)", () => {
    // Tool pairs across turns: kept (generated conversations) and not kept (orphans of earlier ids).
    const streams = fc.oneof(
      fc
        .record({ seed: fc.nat(), turns: fc.integer({ min: 1, max: 12 }) })
        .map(({ seed, turns }) => generateConversation({ seed, turns, crossTurnRate: 0.5 })),
      streamArb(8, { orphans: true }),
    );
    fc.assert(
      fc.property(
        streams,
        fc.array(compactionArb(6), { maxLength: 3 }),
        compactionArb(8),
        fc.nat(3),
        (stream, existing, candidate, gap) => {
          const sizes = measureStream(stream);
          const totals = runningTotalsOf(sizes);
          const from = existing.reduce((max, c) => Math.max(max, c.to_turn), -1) + 1 + gap;
          const band = {
            ...candidate,
            from_turn: from,
            to_turn: from + candidate.to_turn - candidate.from_turn,
          };
          const ends = new Set(bandEndTurns(band, sizes.length));
          const at = (t: number): TotaledSize => {
            if (!ends.has(t)) throw new Error(`read turn ${t}, not an end of the band`);
            return { size: sizes[t] as TurnSize, totals: totals[t] as RunningTotals };
          };
          const withBand = projectedCharsWithBand(
            projectedCharsFromSizes(sizes, existing),
            sizes.length,
            band,
            at,
          );
          expect(withBand).toBe(estimateStream([...stream, ...existing, band]).chars);
        },
      ),
      propertyRuns(200),
    );
  });

  it("keep running totals of every field, pairs across turns counted once the next turn answers them", () => {
    const stream = [
      turnStart(0),
      request("a"),
      toolCall("x", "grep", { q: "1" }),
      turnStart(1),
      toolResult("x", "out"),
      request("b"),
      toolCall("y", "grep", {}),
      turnStart(2),
      request("c"),
    ];
    const totals = runningTotalsOf(measureStream(stream));
    expect(totals.map((t) => [t.text, t.linked_requests, t.linked_responses])).toEqual([
      [1, 0, 0],
      [2, 'grep{"q":"1"}'.length, "out".length],
      // Turn 1's call is never answered: it links nothing.
      [3, 'grep{"q":"1"}'.length, "out".length],
    ]);
    expect(totals[2]?.linked_responses_stripped).toBe("[compacted] grep: success".length);
  });
});

/** The estimate with `band` from the totals at its ends, as the compactor computes it. */
function charsWithBand(stream: Entry[], band: Compaction): number {
  const sizes = measureStream(stream);
  const totals = runningTotalsOf(sizes);
  return projectedCharsWithBand(
    projectedCharsFromSizes(sizes, compactionsOf(stream)),
    sizes.length,
    band,
    (t) => ({ size: sizes[t] as TurnSize, totals: totals[t] as RunningTotals }),
  );
}

/** A call in turn 0 answered in turn 1, with reasoning around it. */
const carriedCallStream = (): Entry[] => [
  turnStart(0),
  request("look it up"),
  reasoning("which file holds it"),
  toolCall("c1", "grep", { pattern: "needle" }),
  turnStart(1),
  toolResult("c1", "needle found in src/lib.rs"),
  message("It is in src/lib.rs."),
  request("thanks"),
];

describe("tool pairs across turns in the estimate", () => {
  it("names the turns with pending calls, carried results or orphans", () => {
    expect(crossesTurns(EMPTY_TURN_SIZE)).toBe(false);
    expect(crossesTurns({ ...EMPTY_TURN_SIZE, pending_calls: 0, carried_results: 0 })).toBe(false);
    expect(crossesTurns({ ...EMPTY_TURN_SIZE, pending_calls: 1 })).toBe(true);
    expect(crossesTurns({ ...EMPTY_TURN_SIZE, carried_results: 2 })).toBe(true);
    expect(crossesTurns({ ...EMPTY_TURN_SIZE, orphan_results: 1 })).toBe(true);
    // Counts that would cancel out if subtracted.
    expect(crossesTurns({ ...EMPTY_TURN_SIZE, pending_calls: 1, carried_results: 1 })).toBe(true);
    expect(crossesTurns({ ...EMPTY_TURN_SIZE, carried_results: 1, orphan_results: 1 })).toBe(true);
    // A range of turns, clamped to the turns there are.
    const sizes = [EMPTY_TURN_SIZE, { ...EMPTY_TURN_SIZE, pending_calls: 1 }, EMPTY_TURN_SIZE];
    expect(crossesWithin(sizes, -1, 0)).toBe(false);
    expect(crossesWithin(sizes, 0, 1)).toBe(true);
    expect(crossesWithin(sizes, 1, 1)).toBe(true);
    expect(crossesWithin(sizes, 2, 3)).toBe(false);
  });

  it("reads the turns on either side of a band's ends, within the stream", () => {
    expect(bandEndTurns({ from_turn: 2, to_turn: 4 }, 10)).toEqual([1, 2, 4, 5]);
    expect(bandEndTurns({ from_turn: 0, to_turn: 3 }, 4)).toEqual([0, 3]);
    expect(bandEndTurns({ from_turn: 3, to_turn: 3 }, 10)).toEqual([2, 3, 4]);
    expect(bandEndTurns({ from_turn: 0, to_turn: 0 }, 1)).toEqual([0]);
    // A band reaching past the stream ends at its last turn; one wholly past it reads nothing.
    expect(bandEndTurns({ from_turn: 1, to_turn: 9 }, 3)).toEqual([0, 1, 2]);
    expect(bandEndTurns({ from_turn: 5, to_turn: 9 }, 3)).toEqual([]);
  });

  it("drop a call the next turn does not answer, as the projection does", () => {
    const stream = [
      turnStart(0),
      request("look it up"),
      toolCall("c1", "grep", { pattern: "needle" }),
      turnStart(1),
      request("never mind"),
    ];
    expect(projectedCharsFromSizes(measureStream(stream), [])).toBe(estimateStream(stream).chars);
    expect(estimateStream(stream).chars).toBe("look it up".length + "never mind".length);
  });

  it("keep a band's reasoning unless it strips it, from the totals at its ends", () => {
    const stream = carriedCallStream();
    for (const policies of [
      { tool_calls: { policy: "strip", request: true, response: true } },
      { reasoning: "strip" },
    ] as const) {
      const band = compaction(0, 0, 1e9, policies);
      expect(charsWithBand(stream, band)).toBe(estimateStream([...stream, band]).chars);
    }
  });

  it("strip the requests of calls a band's turn carries into the next turn, apart from their results", () => {
    const stream = carriedCallStream();
    for (const [request, response] of [
      [true, false],
      [false, true],
    ] as const) {
      const band = compaction(0, 0, 1e9, { tool_calls: { policy: "strip", request, response } });
      expect(charsWithBand(stream, band)).toBe(estimateStream([...stream, band]).chars);
    }
  });
});

describe("the estimate with a band, from the totals at its ends", () => {
  const policies = [
    { tool_calls: { policy: "strip", request: true, response: false } },
    { tool_calls: { policy: "strip", request: false, response: true } },
    { tool_calls: { policy: "omit" } },
    { reasoning: "strip" },
    { summary: { summary: "turns so far" } },
  ] as const;

  it("equals the full projection's for a band in the middle of a generated conversation", () => {
    const stream = generateConversation({ seed: 11, turns: 12, crossTurnRate: 0.5 });
    for (const policy of policies) {
      const band = compaction(2, 7, 1e9, policy);
      expect(charsWithBand(stream, band)).toBe(estimateStream([...stream, band]).chars);
    }
  });

  it("keeps the last turn's pending call under the band's request policy", () => {
    const stream = [...carriedCallStream(), toolCall("c2", "read_file", { path: "src/lib.rs" })];
    expect(measureStream(stream)[1]).toMatchObject({ pending_calls: 1 });
    for (const policy of policies) {
      const band = compaction(1, 1, 1e9, policy);
      expect(charsWithBand(stream, band)).toBe(estimateStream([...stream, band]).chars);
    }
  });
});
