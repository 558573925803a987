import { describe, expect, it } from "vitest";
import {
  AutocompactError,
  InvalidInputError,
  PROBLEM_VARIANTS,
  SummaryRequiredError,
  UnprocessableError,
} from "./errors.ts";
import { joinIssues } from "./issues.ts";

describe("errors carry their answer", () => {
  it("an invalid input is a 400 with its issues as the problem's errors", () => {
    const plain = new InvalidInputError("bad");
    expect(plain).toMatchObject({
      name: "InvalidInputError",
      message: "bad",
      status: 400,
      type: "/problems/invalid-request",
      title: "Invalid request",
      issues: [],
    });
    expect(plain.problemExtensions()).toEqual({});
    expect(plain.cause).toBeUndefined();
    expect("cause" in plain).toBe(false);

    const cause = new Error("underneath");
    const located = new InvalidInputError("two problems", {
      ...PROBLEM_VARIANTS.invalidTurn,
      cause,
      issues: [{ pointer: "/events/0", detail: "x" }, { detail: "y" }],
    });
    expect(located).toMatchObject({ type: "/problems/invalid-turn", title: "Invalid turn", cause });
    expect(located.problemExtensions()).toEqual({
      errors: [{ pointer: "/events/0", detail: "x" }, { detail: "y" }],
    });
    expect(located).toBeInstanceOf(AutocompactError);
    expect(located).toBeInstanceOf(Error);
  });

  it("a request that cannot apply is a 422, narrowed by a variant", () => {
    expect(new UnprocessableError("nothing")).toMatchObject({
      name: "UnprocessableError",
      status: 422,
      type: "/problems/invalid-compaction",
      title: "Compaction cannot apply",
    });
    expect(new UnprocessableError("none", PROBLEM_VARIANTS.emptyRange)).toMatchObject({
      status: 422,
      type: "/problems/empty-range",
      title: "Nothing to compact",
    });
  });

  it("a missing summary or summarizer is its own 422", () => {
    const error = new SummaryRequiredError("give a summarizer");
    expect(error).toBeInstanceOf(UnprocessableError);
    expect(error).toMatchObject({
      name: "SummaryRequiredError",
      status: 422,
      type: "/problems/summarizer-unavailable",
      title: "No summarizer configured",
    });
    expect(error.problemExtensions()).toEqual({});
  });

  it("the base keeps status, slug and title as given", () => {
    const error = new AutocompactError("x", { status: 418, slug: "teapot", title: "Teapot" });
    expect(error).toMatchObject({
      name: "AutocompactError",
      status: 418,
      type: "/problems/teapot",
    });
    expect(error.title).toBe("Teapot");
  });

  it("lists at most 100 issues and counts the rest, in a detail and in the problem's errors", () => {
    const details = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);
    expect(joinIssues([])).toBe("");
    expect(joinIssues(["a", "b"])).toBe("a; b");
    expect(joinIssues(details(100))).toBe(details(100).join("; "));
    expect(joinIssues(details(101))).toBe(`${details(100).join("; ")} (and 1 more)`);
    expect(joinIssues(details(250))).toBe(`${details(100).join("; ")} (and 150 more)`);
    const issues = (n: number) => details(n).map((detail) => ({ detail }));
    expect(new InvalidInputError("x", { issues: issues(100) }).problemExtensions()).toEqual({
      errors: issues(100),
    });
    expect(new InvalidInputError("x", { issues: issues(101) }).problemExtensions()).toEqual({
      errors: issues(100),
      errors_omitted: 1,
    });
  });

  it("carries no extra headers unless a subclass says so", () => {
    expect(new InvalidInputError("x").responseHeaders()).toEqual({});
    expect(
      new AutocompactError("x", {
        status: 500,
        slug: "internal",
        title: "Internal error",
      }).responseHeaders(),
    ).toEqual({});
  });
});
