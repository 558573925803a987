import { describe, expect, it } from "vitest";
import { InvalidInputError, UnprocessableError } from "./errors.ts";
import { parseSpec, resolveSpecRange, ruleOfSpec } from "./spec.ts";

const defaults = { keep_first: 1, keep_last: 3 };
const range = (spec: string, turns = 20) => resolveSpecRange(parseSpec(spec), turns, defaults);

describe("the compaction DSL", () => {
  it("parses policies, long names and tool modes", () => {
    expect(parseSpec("s")).toEqual({ reasoning: null, tool_calls: null, summarize: true });
    expect(parseSpec("r+t")).toEqual({ reasoning: "strip", tool_calls: "strip", summarize: false });
    expect(parseSpec("reasoning+tools=strip-responses")).toMatchObject({
      reasoning: "strip",
      tool_calls: "strip-responses",
    });
    expect(parseSpec("summarize")).toEqual({ reasoning: null, tool_calls: null, summarize: true });
    const modes: [string, string][] = [
      ["strip", "strip"],
      ["s", "strip"],
      ["strip-responses", "strip-responses"],
      ["strip_responses", "strip-responses"],
      ["sres", "strip-responses"],
      ["strip-requests", "strip-requests"],
      ["strip_requests", "strip-requests"],
      ["sreq", "strip-requests"],
      ["omit", "omit"],
      ["o", "omit"],
    ];
    for (const [mode, toolCalls] of modes) {
      expect(parseSpec(`t=${mode}`).tool_calls, mode).toBe(toolCalls);
    }
    expect(parseSpec("t=sres:..-3")).toMatchObject({
      tool_calls: "strip-responses",
      range: { to: { fromEnd: 3 } },
    });
  });

  it("ignores spaces around policies, names and modes", () => {
    expect(parseSpec(" r + t = omit :..-3")).toEqual({
      reasoning: "strip",
      tool_calls: "omit",
      summarize: false,
      range: { to: { fromEnd: 3 } },
    });
  });

  it("resolves every range form on 20 turns (0-based, inclusive, -N = N before the last)", () => {
    expect(range("s:..")).toEqual({ from_turn: 0, to_turn: 19 });
    expect(range("s:5..")).toEqual({ from_turn: 5, to_turn: 19 });
    expect(range("s:..-3")).toEqual({ from_turn: 0, to_turn: 16 });
    expect(range("s:5..-3")).toEqual({ from_turn: 5, to_turn: 16 });
    expect(range("s:5..10")).toEqual({ from_turn: 5, to_turn: 10 });
    expect(range("s:..10")).toEqual({ from_turn: 0, to_turn: 10 });
    expect(range("s:-10..-3")).toEqual({ from_turn: 9, to_turn: 16 });
    expect(range("s:-3")).toEqual({ from_turn: 0, to_turn: 16 });
    expect(range("s:5")).toEqual({ from_turn: 5, to_turn: 19 });
    expect(range("s:0")).toEqual({ from_turn: 0, to_turn: 19 });
    expect(range("s:5..5")).toEqual({ from_turn: 5, to_turn: 5 });
  });

  it("uses the rule's keep_first/keep_last without a range, and clamps past the end", () => {
    expect(range("r+t")).toEqual({ from_turn: 1, to_turn: 16 });
    expect(range("r:2..99", 10)).toEqual({ from_turn: 2, to_turn: 9 });
    expect(range("r:-50..2", 10)).toEqual({ from_turn: 0, to_turn: 2 });
  });

  it("rejects empty selections", () => {
    expect(() => range("s:15..", 10)).toThrow(UnprocessableError);
    expect(() => range("s:5..3")).toThrow(/selects no turn/);
    expect(() => range("s:..-30")).toThrow(UnprocessableError);
    expect(() => range("s", 0)).toThrow(/no turns/);
    expect(() => range("s:..-30")).toThrow(
      expect.objectContaining({
        status: 422,
        type: "/problems/empty-range",
        message:
          "the range selects no turn: it resolves to 0..-11 but the conversation has turns 0..19",
      }),
    );
    expect(() => range("r+t", 4)).toThrow(
      "the range selects no turn: it resolves to 1..0 but the conversation has turns 0..3",
    );
  });

  it("rejects bad specs with a message that names the problem", () => {
    const cases: [string, RegExp][] = [
      ["", /empty policy/],
      ["r++s", /empty policy/],
      ["+r", /empty policy/],
      ["r+ ", /empty policy/],
      [":..-3", /empty policy/],
      ["x", /unknown policy 'x'/],
      ["r=strip", /`reasoning` does not take a value/],
      ["s=true", /`summarize` does not take a value/],
      ["summarize=true", /`summarize` does not take a value/],
      ["=omit", /unknown policy ''/],
      ["t=nope", /unknown tool_calls mode: `nope`/],
      ["t=toString", /unknown tool_calls mode: `toString`/],
      ["t=__proto__", /unknown tool_calls mode/],
      ["s:abc", /invalid bound 'abc'/],
      ["s:5..x", /invalid bound 'x'/],
      ["s:-x", /invalid bound '-x'/],
      ["s:1.5", /invalid bound/],
      ["s:1-2", /invalid bound '1-2'/],
      ["s:-3x", /invalid bound '-3x'/],
    ];
    for (const [spec, message] of cases) {
      expect(() => parseSpec(spec), spec).toThrow(InvalidInputError);
      expect(() => parseSpec(spec), spec).toThrow(message);
    }
    expect(() => parseSpec("r+ :5")).toThrow(
      expect.objectContaining({
        name: "InvalidInputError",
        status: 400,
        type: "/problems/invalid-spec",
        message:
          "invalid compact spec 'r+ :5': empty policy (use r, t, s joined by +, e.g. r+t:..-3)",
      }),
    );
    expect(() => parseSpec("x")).toThrow(
      "invalid compact spec 'x': unknown policy 'x' (use r, t, s or reasoning, tools, summarize)",
    );
  });

  it("turns a spec into a self-contained rule; a summary ignores the other policies", () => {
    expect(ruleOfSpec(parseSpec("r+t=omit"))).toEqual({
      reasoning: "strip",
      tool_calls: "omit",
      summary: null,
    });
    expect(ruleOfSpec(parseSpec("s+r"))).toEqual({
      reasoning: null,
      tool_calls: null,
      summary: {},
    });
  });
});
