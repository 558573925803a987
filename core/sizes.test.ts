import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactedStreamArb, compactionArb, streamArb } from "../test/helpers/arbitraries.ts";
import {
  compaction,
  request,
  toolCall,
  toolResult,
  turnStart,
  twoTurnStream,
} from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import { estimateStream } from "./estimate.ts";
import { compactionsOf } from "./projection.ts";
import type { RunningTotals, TurnSize } from "./sizes.ts";
import {
  bandEndTurns,
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
      propertyRuns(500),
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
