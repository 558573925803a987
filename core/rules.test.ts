import { describe, expect, it } from "vitest";
import { compaction } from "../test/helpers/builders.ts";
import { SummaryRequiredError, UnprocessableError } from "./errors.ts";
import type { Compaction } from "./events.ts";
import {
  afterLastCompaction,
  buildCompaction,
  extendSummaryRange,
  nextCompactionTimestamp,
  resetSelection,
  rollingRange,
} from "./rules.ts";

const rule = { keep_first: 1, keep_last: 3 };
const summaryAt = (from: number, to: number): Compaction =>
  compaction(from, to, 1, { summary: { summary: "s" } });

describe("the rolling range", () => {
  it("follows D50's example", () => {
    expect(rollingRange(13, 0, rule)).toEqual({ from_turn: 1, to_turn: 9 });
    expect(
      rollingRange(21, afterLastCompaction([compaction(1, 9, 1, { reasoning: "strip" })]), rule),
    ).toEqual({
      from_turn: 10,
      to_turn: 17,
    });
  });

  it("starts after the furthest band of any source", () => {
    expect(afterLastCompaction([])).toBe(0);
    expect(
      afterLastCompaction([compaction(0, 15, 1, {}), compaction(2, 4, 2, { source: "auto" })]),
    ).toBe(16);
    expect(
      rollingRange(25, afterLastCompaction([compaction(3, 15, 1, { source: "manual" })]), rule),
    ).toEqual({
      from_turn: 16,
      to_turn: 21,
    });
  });

  it("is empty when nothing is left between the protected ends", () => {
    expect(rollingRange(4, 0, rule)).toBeUndefined();
    expect(rollingRange(5, 0, rule)).toEqual({ from_turn: 1, to_turn: 1 });
    expect(rollingRange(0, 0, rule)).toBeUndefined();
  });
});

describe("building compactions", () => {
  const range = { from_turn: 2, to_turn: 5 };
  it("sets only the policies a mechanical rule has", () => {
    const built = buildCompaction({
      rule: { reasoning: "strip", tool_calls: null, summary: null },
      range,
      timestamp: "2026-01-01T00:00:00.000000Z",
      source: "manual",
    });
    expect(built).toStrictEqual({
      type: "compaction",
      timestamp: "2026-01-01T00:00:00.000000Z",
      from_turn: 2,
      to_turn: 5,
      source: "manual",
      reasoning: "strip",
    });
  });

  it("leaves reasoning out of a band built from a tool-only rule", () => {
    const built = buildCompaction({
      rule: { reasoning: null, tool_calls: "strip-responses", summary: null },
      range,
      timestamp: "2026-01-01T00:00:00.000000Z",
      source: "auto",
    });
    expect(built).toStrictEqual({
      type: "compaction",
      timestamp: "2026-01-01T00:00:00.000000Z",
      from_turn: 2,
      to_turn: 5,
      source: "auto",
      tool_calls: { policy: "strip", request: false, response: true },
    });
  });

  it("sets only the summary of a summary rule and refuses to build one without text", () => {
    const summaryRule = { reasoning: "strip" as const, tool_calls: "omit" as const, summary: {} };
    const built = buildCompaction({
      rule: summaryRule,
      range,
      timestamp: "2026-01-01T00:00:00Z",
      source: "auto",
      summaryText: "done",
    });
    expect(built.summary).toEqual({ summary: "done" });
    expect(built.reasoning).toBeUndefined();
    expect(() =>
      buildCompaction({
        rule: summaryRule,
        range,
        timestamp: "2026-01-01T00:00:00Z",
        source: "auto",
      }),
    ).toThrow(
      expect.objectContaining({
        name: "SummaryRequiredError",
        type: "/problems/summarizer-unavailable",
        status: 422,
        message: "turns 2..5: a summary rule needs generated summary text",
      }),
    );
    expect(() =>
      buildCompaction({
        rule: summaryRule,
        range,
        timestamp: "2026-01-01T00:00:00Z",
        source: "auto",
        summaryText: "  ",
      }),
    ).toThrow(SummaryRequiredError);
  });

  it("stamps new bands after the latest existing one", () => {
    const latest = { ...compaction(0, 1, 0, {}), timestamp: "2026-06-01T00:00:00.000000Z" };
    expect(nextCompactionTimestamp([latest], Date.UTC(2026, 0, 1))).toBe(
      "2026-06-01T00:00:00.000001Z",
    );
    expect(nextCompactionTimestamp([latest], Date.UTC(2027, 0, 1))).toBe(
      "2027-01-01T00:00:00.000000Z",
    );
  });
});

describe("summary range extension", () => {
  it("leaves disjoint and contained ranges alone", () => {
    expect(extendSummaryRange({ from_turn: 3, to_turn: 7 }, [])).toEqual({
      from_turn: 3,
      to_turn: 7,
    });
    expect(extendSummaryRange({ from_turn: 5, to_turn: 8 }, [summaryAt(0, 2)])).toEqual({
      from_turn: 5,
      to_turn: 8,
    });
    expect(extendSummaryRange({ from_turn: 0, to_turn: 8 }, [summaryAt(3, 5)])).toEqual({
      from_turn: 0,
      to_turn: 8,
    });
  });

  it("extends over partial overlaps on either side and over a containing summary", () => {
    expect(extendSummaryRange({ from_turn: 3, to_turn: 7 }, [summaryAt(5, 9)])).toEqual({
      from_turn: 3,
      to_turn: 9,
    });
    expect(extendSummaryRange({ from_turn: 3, to_turn: 8 }, [summaryAt(0, 4)])).toEqual({
      from_turn: 0,
      to_turn: 8,
    });
    expect(extendSummaryRange({ from_turn: 3, to_turn: 5 }, [summaryAt(0, 9)])).toEqual({
      from_turn: 0,
      to_turn: 9,
    });
  });

  it("merges with a summary sharing exactly one turn, on either side", () => {
    expect(extendSummaryRange({ from_turn: 5, to_turn: 8 }, [summaryAt(3, 5)])).toEqual({
      from_turn: 3,
      to_turn: 8,
    });
    expect(extendSummaryRange({ from_turn: 3, to_turn: 5 }, [summaryAt(5, 8)])).toEqual({
      from_turn: 3,
      to_turn: 8,
    });
  });

  it("follows chains transitively and ignores mechanical bands and adjacent summaries", () => {
    expect(
      extendSummaryRange({ from_turn: 3, to_turn: 7 }, [
        summaryAt(9, 15),
        summaryAt(4, 10),
        summaryAt(0, 5),
      ]),
    ).toEqual({ from_turn: 0, to_turn: 15 });
    expect(
      extendSummaryRange({ from_turn: 3, to_turn: 7 }, [
        compaction(0, 9, 1, { reasoning: "strip" }),
      ]),
    ).toEqual({ from_turn: 3, to_turn: 7 });
    expect(
      extendSummaryRange({ from_turn: 3, to_turn: 5 }, [summaryAt(0, 2), summaryAt(6, 8)]),
    ).toEqual({ from_turn: 3, to_turn: 5 });
  });
});

describe("reset", () => {
  const a = compaction(0, 1, 1, { source: "manual", reasoning: "strip" });
  const b = compaction(2, 3, 2, { source: "auto", reasoning: "strip" });
  const c = compaction(4, 5, 3, { source: "auto", reasoning: "strip" });
  const listed = [a, b, c];

  it("removes all compactions", () => {
    expect(resetSelection(listed, {})).toEqual([0, 1, 2]);
    expect(resetSelection([], {})).toEqual([]);
  });

  it("removes one by its 1-based position", () => {
    expect(resetSelection(listed, { position: 2 })).toEqual([1]);
    expect(() => resetSelection(listed, { position: 0 })).toThrow(UnprocessableError);
    expect(() => resetSelection(listed, { position: 0 })).toThrow(
      expect.objectContaining({ status: 422, type: "/problems/invalid-compaction" }),
    );
    expect(() => resetSelection(listed, { position: 4 })).toThrow(/positions are 1 to 3/);
    expect(() => resetSelection([], { position: 1 })).toThrow(
      "no compaction at position 1: the conversation has no compactions",
    );
  });

  it("removes the first and the last position", () => {
    expect(resetSelection(listed, { position: 1 })).toEqual([0]);
    expect(resetSelection(listed, { position: 3 })).toEqual([2]);
  });

  it("refuses a position that is not a whole number", () => {
    expect(() => resetSelection(listed, { position: 1.5 })).toThrow(
      "no compaction at position 1.5: positions are 1 to 3",
    );
  });

  it("removes all of one source, or the one position only when it has that source", () => {
    expect(resetSelection(listed, { source: "auto" })).toEqual([1, 2]);
    expect(resetSelection(listed, { source: "manual" })).toEqual([0]);
    expect(resetSelection(listed, { position: 2, source: "auto" })).toEqual([1]);
    expect(resetSelection(listed, { position: 2, source: "manual" })).toEqual([]);
  });
});
