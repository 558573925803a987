import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compactedStreamArb,
  compactionArb,
  stackedStreamArb,
  streamArb,
} from "../test/helpers/arbitraries.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import {
  referenceChars,
  referenceProject,
  referenceTurns,
} from "../test/helpers/reference-projection.ts";
import type { Entry } from "./events.ts";
import { parseStream } from "./events.ts";
import { compactionsOf, project } from "./projection.ts";
import { measureStream, projectedCharsFromSizes } from "./sizes.ts";

const runs = propertyRuns(200);

describe("projection properties", () => {
  it("never throws and consumes every compaction", () => {
    fc.assert(
      fc.property(compactedStreamArb(), (stream) => {
        const { entries } = project(stream);
        expect(entries.some((e) => e.type === "compaction")).toBe(false);
      }),
      runs,
    );
  });

  it("never leaves a tool response without its request", () => {
    fc.assert(
      fc.property(compactedStreamArb(), (stream) => {
        const { entries } = project(stream);
        const requested = new Set(
          entries
            .filter((e) => e.type === "tool_call_request")
            .map((e) => (e as { id: string }).id),
        );
        for (const e of entries)
          if (e.type === "tool_call_response")
            expect(requested.has((e as { id: string }).id)).toBe(true);
      }),
      runs,
    );
  });

  it("is a no-op without compactions and idempotent after one projection", () => {
    fc.assert(
      fc.property(streamArb(), compactedStreamArb(), (plain, compacted) => {
        expect(project(plain).entries).toEqual(plain);
        const once = project(compacted).entries;
        expect(project(once).entries).toEqual(once);
      }),
      runs,
    );
  });

  it("keeps every config delta in order", () => {
    fc.assert(
      fc.property(compactedStreamArb(), (stream) => {
        const deltas = (entries: readonly Entry[]) =>
          entries.filter((e) => e.type === "config_delta");
        expect(deltas(project(stream).entries)).toEqual(deltas(stream));
      }),
      runs,
    );
  });

  it("produces a view that is itself a valid stream", () => {
    fc.assert(
      fc.property(compactedStreamArb(), (stream) => {
        const reparsed = parseStream(JSON.parse(JSON.stringify(project(stream).entries)));
        expect(reparsed.ok).toBe(true);
      }),
      runs,
    );
  });

  it("applies stacked compactions exactly as the independent reference does", () => {
    fc.assert(
      fc.property(stackedStreamArb(), (stream) => {
        expect(project(stream).entries).toEqual(referenceProject(stream));
      }),
      propertyRuns(500),
    );
  });

  it("sizes stacked compactions exactly as the independent reference's view", () => {
    fc.assert(
      fc.property(stackedStreamArb(), (stream) => {
        const chars = projectedCharsFromSizes(measureStream(stream), compactionsOf(stream));
        expect(chars).toBe(referenceChars(referenceProject(stream)));
        expect(measureStream(stream)).toHaveLength(referenceTurns(stream).count);
      }),
      propertyRuns(500),
    );
  });

  it("leaves turns outside every compaction untouched", () => {
    fc.assert(
      fc.property(streamArb(), compactionArb(8), (stream, c) => {
        const { entries, turns } = project([...stream, { ...c, summary: undefined }]);
        const kept = turns.filter((o) => "kept" in o).map((o) => (o as { kept: number }).kept);
        const untouched = kept.filter((t) => t < c.from_turn || t > c.to_turn);
        const raw = project(stream);
        for (const t of untouched) {
          expect(turnSlice(entries, turns, t)).toEqual(turnSlice(raw.entries, raw.turns, t));
        }
      }),
      runs,
    );
  });
});

function turnSlice(entries: readonly Entry[], turns: readonly unknown[], raw: number): string {
  // Groups by projected turn using turn_start boundaries; mechanical compactions keep turns 1:1.
  const groups: Entry[][] = [];
  let current: Entry[] = [];
  let hasEvent = false;
  for (const e of entries) {
    if (e.type === "turn_start" && hasEvent) {
      groups.push(current);
      current = [];
      hasEvent = false;
    }
    if (e.type !== "config_delta") hasEvent = true;
    current.push(e);
  }
  if (hasEvent) groups.push(current);
  const index = turns.findIndex((o) => (o as { kept?: number }).kept === raw);
  const group = groups[index];
  if (group === undefined) throw new Error(`turn ${raw} is missing from the projected view`);
  return JSON.stringify(group.filter((e) => e.type !== "config_delta"));
}
