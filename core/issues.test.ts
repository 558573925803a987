import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  andMore,
  describeIssues,
  firstIssue,
  issueLines,
  issuePath,
  joinIssues,
  jsonPointer,
} from "./issues.ts";

describe("issuePath", () => {
  it("writes dotted keys by default, prefixed, and names the root", () => {
    expect(issuePath(["a", 0, "b"])).toBe("a.0.b");
    expect(issuePath(["b"], { prefix: ["rule"] })).toBe("rule.b");
    expect(issuePath([], { prefix: ["rule"] })).toBe("rule");
    expect(issuePath([])).toBe("(root)");
    expect(issuePath([], { root: "(body)" })).toBe("(body)");
    expect(issuePath([], { notation: "brackets", root: "" })).toBe("");
    expect(issuePath([Symbol("s"), 1])).toBe("Symbol(s).1");
    expect(issuePath(["a", 0], { notation: "dots" })).toBe("a.0");
  });

  it("brackets indexes, never a leading dot", () => {
    expect(issuePath([3, "content"], { notation: "brackets", prefix: ["messages"] })).toBe(
      "messages[3].content",
    );
    expect(issuePath(["messages", 0, 1, "a", "b"], { notation: "brackets" })).toBe(
      "messages[0][1].a.b",
    );
    expect(issuePath([0, "a"], { notation: "brackets" })).toBe("[0].a");
    expect(issuePath(["messages", "0"], { notation: "brackets" })).toBe("messages.0");
    expect(issuePath(["messages", Symbol("s")], { notation: "brackets" })).toBe(
      "messages.Symbol(s)",
    );
    expect(issuePath([Symbol("s"), "k"], { notation: "brackets" })).toBe("Symbol(s).k");
  });

  it("writes a JSON pointer, escaped", () => {
    expect(issuePath(["a/b", "c~d", 2], { notation: "pointer" })).toBe("/a~1b/c~0d/2");
    expect(issuePath([], { notation: "pointer" })).toBe("(root)");
    expect(jsonPointer([])).toBe("");
    expect(jsonPointer(["~/", 0])).toBe("/~0~1/0");
  });
});

describe("describeIssues", () => {
  const Inner = z.strictObject({ x: z.number() });
  const Schema = z.strictObject({ n: z.number(), inner: Inner.optional() });
  const issuesOf = (value: unknown) => {
    const result = Schema.safeParse(value);
    if (result.success) throw new Error("expected issues");
    return result.error.issues;
  };

  it("locates each issue and writes it as `path: message`", () => {
    expect(describeIssues(issuesOf({ n: "1" }), { prefix: ["body"] })).toEqual([
      {
        path: ["body", "n"],
        pointer: "/body/n",
        message: "Invalid input: expected number, received string",
        text: "body.n: Invalid input: expected number, received string",
      },
    ]);
    expect(issueLines([{ path: [], message: "m" }], { root: "value" })).toEqual(["value: m"]);
    expect(
      issueLines([{ path: ["events", 1, "content"], message: "m" }], { notation: "brackets" }),
    ).toEqual(["events[1].content: m"]);
    expect(issueLines([])).toEqual([]);
  });

  it("keeps zod's unknown-key issue unless asked to split it", () => {
    expect(issueLines(issuesOf({ n: 1, a: 1, b: 2 }))).toEqual([
      '(root): Unrecognized keys: "a", "b"',
    ]);
  });

  it("splits unknown keys one by one, naming the known keys where they are known", () => {
    const known = (path: readonly PropertyKey[]) =>
      path.length === 0 ? ["n", "inner"] : undefined;
    const issues = issuesOf({ n: 1, a: 1, inner: { x: 1, y: 2 } });
    expect(describeIssues(issues, { unknownKeys: { known } })).toEqual([
      {
        path: ["inner", "y"],
        pointer: "/inner/y",
        message: "unknown key",
        text: "inner.y: unknown key",
      },
      {
        path: ["a"],
        pointer: "/a",
        message: "unknown key (known: n, inner)",
        text: "a: unknown key (known: n, inner)",
      },
    ]);
    expect(
      issueLines(issues, { prefix: ["p"], unknownKeys: { label: "unknown setting" } }),
    ).toEqual(["p.inner.y: unknown setting", "p.a: unknown setting"]);
    expect(
      issueLines([{ code: "unrecognized_keys", path: [], message: "zod's" }], { unknownKeys: {} }),
    ).toEqual(["(root): zod's"]);
    expect(
      issueLines([{ code: "custom", path: ["k"], message: "has keys", keys: ["x"] }], {
        unknownKeys: {},
      }),
    ).toEqual(["k: has keys"]);
  });
});

describe("counting what is left out", () => {
  it("says how many more, with a noun when given", () => {
    expect(andMore(0)).toBe("");
    expect(andMore(-1)).toBe("");
    expect(andMore(1)).toBe(" (and 1 more)");
    expect(andMore(2)).toBe(" (and 2 more)");
    expect(andMore(1, "issue")).toBe(" (and 1 more issue)");
    expect(andMore(3, "issue")).toBe(" (and 3 more issues)");
  });

  it("joins at most 100 and counts the rest", () => {
    const details = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);
    expect(joinIssues([])).toBe("");
    expect(joinIssues(["a", "b"])).toBe("a; b");
    expect(joinIssues(details(100))).toBe(details(100).join("; "));
    expect(joinIssues(details(101))).toBe(`${details(100).join("; ")} (and 1 more)`);
  });

  it("shows the first and counts the others", () => {
    expect(firstIssue([])).toBe("");
    expect(firstIssue(["a"])).toBe("a");
    expect(firstIssue(["a", "b", "c"])).toBe("a (and 2 more)");
  });
});
