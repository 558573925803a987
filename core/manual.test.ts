import { describe, expect, it } from "vitest";
import { compaction } from "../test/helpers/builders.ts";
import { InvalidInputError, UnprocessableError } from "./errors.ts";
import { planManualCompaction } from "./manual.ts";

describe("manual compaction plans", () => {
  it("plans a spec with its range", () => {
    expect(planManualCompaction({ spec: "r+t:..-3" }, 20, [])).toEqual({
      rule: { reasoning: "strip", tool_calls: "strip", summary: null },
      range: { from_turn: 0, to_turn: 16 },
    });
  });

  it("plans a rule with defaults for missing bounds", () => {
    expect(planManualCompaction({ rule: { tool_calls: "omit", keep_last: 2 } }, 10, [])).toEqual({
      rule: { reasoning: null, tool_calls: "omit", summary: null },
      range: { from_turn: 1, to_turn: 7 },
    });
  });

  it("plans a rule whose keep_first and keep_last leave a single turn", () => {
    expect(
      planManualCompaction({ rule: { reasoning: "strip", keep_first: 4, keep_last: 5 } }, 10, [])
        .range,
    ).toEqual({ from_turn: 4, to_turn: 4 });
  });

  it("extends a summary over every summary it intersects", () => {
    const existing = [
      compaction(0, 4, 1, { summary: { summary: "old" } }),
      compaction(12, 14, 2, { summary: { summary: "later" } }),
    ];
    expect(planManualCompaction({ spec: "s:3..8" }, 20, existing).range).toEqual({
      from_turn: 0,
      to_turn: 8,
    });
    expect(
      planManualCompaction({ rule: { summary: {}, keep_first: 10, keep_last: 6 } }, 20, existing)
        .range,
    ).toEqual({ from_turn: 10, to_turn: 14 });
  });

  it("does not extend mechanical plans", () => {
    const existing = [compaction(0, 4, 1, { summary: { summary: "old" } })];
    expect(planManualCompaction({ spec: "r:3..8" }, 20, existing).range).toEqual({
      from_turn: 3,
      to_turn: 8,
    });
  });

  it("rejects plans that would do nothing", () => {
    expect(() => planManualCompaction({ rule: { keep_first: 1 } }, 10, [])).toThrow(
      InvalidInputError,
    );
    expect(() =>
      planManualCompaction({ rule: { reasoning: null, tool_calls: null, summary: null } }, 10, []),
    ).toThrow(
      expect.objectContaining({
        status: 400,
        type: "/problems/invalid-compaction",
        title: "Compaction without a policy",
        message: "the compaction sets no policy: give reasoning, tool_calls or summary",
      }),
    );
    const keepsAll = { reasoning: "strip", keep_first: 5, keep_last: 5 } as const;
    expect(() => planManualCompaction({ rule: keepsAll }, 10, [])).toThrow(UnprocessableError);
    expect(() => planManualCompaction({ rule: keepsAll }, 10, [])).toThrow(
      expect.objectContaining({
        status: 422,
        type: "/problems/empty-range",
        message:
          "keep_first 5 and keep_last 5 leave no turn to compact in a conversation of 10 turns",
      }),
    );
    expect(() => planManualCompaction({ spec: "q" }, 10, [])).toThrow(
      expect.objectContaining({ status: 400, type: "/problems/invalid-spec" }),
    );
  });
});
