import { describe, expect, it } from "vitest";
import { jsonDepthExceeds, MAX_JSON_DEPTH, nonFinitePath, sameJson } from "./json.ts";

/** `depth` arrays nested in one another: `[[…]]`. */
function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("jsonDepthExceeds", () => {
  it("counts every object and array level, scalars none", () => {
    expect(MAX_JSON_DEPTH).toBe(100);
    expect(jsonDepthExceeds("text", 0)).toBe(false);
    expect(jsonDepthExceeds(null, 0)).toBe(false);
    expect(jsonDepthExceeds({}, 0)).toBe(true);
    expect(jsonDepthExceeds({}, 1)).toBe(false);
    expect(jsonDepthExceeds({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(jsonDepthExceeds({ a: [1, { b: 2 }] }, 2)).toBe(true);
  });

  it("allows 100 levels by default and refuses 101, at any depth without recursion", () => {
    expect(jsonDepthExceeds(nested(100))).toBe(false);
    expect(jsonDepthExceeds(nested(101))).toBe(true);
    expect(jsonDepthExceeds(nested(200_000))).toBe(true);
  });
});

describe("sameJson", () => {
  it.each([
    ["equal scalars", "x", "x"],
    [
      "objects whatever their key order",
      { a: 1, b: [2, { c: null }] },
      { b: [2, { c: null }], a: 1 },
    ],
    ["an undefined member and a missing one", { a: 1, b: undefined }, { a: 1 }],
    ["a missing member and an undefined one", { a: 1 }, { a: 1, b: undefined }],
    ["empty arrays", [], []],
  ])("takes %s as the same", (_, a, b) => {
    expect(sameJson(a, b)).toBe(true);
  });

  it.each([
    ["different scalars", 1, 2],
    ["a number and its text", 1, "1"],
    ["null and an empty object", null, {}],
    ["an empty object and null", {}, null],
    ["a number and an empty object", 1, {}],
    ["an empty object and a number", {}, 1],
    ["an empty array and an empty object", [], {}],
    ["an array and an object with its indices as keys", ["x"], { 0: "x" }],
    ["an object with one member more", { a: 1 }, { a: 1, b: 2 }],
    ["an object with one member fewer", { a: 1, b: 2 }, { a: 1 }],
    ["objects with other keys", { a: 1 }, { b: 1 }],
    ["objects differing in their last member", { a: 1, b: 2 }, { a: 1, b: 3 }],
    ["arrays in another order", [1, 2], [2, 1]],
  ])("tells %s apart", (_, a, b) => {
    expect(sameJson(a, b)).toBe(false);
  });
});

describe("nonFinitePath", () => {
  it.each([
    ["a finite tree", { a: [1, -2.5, { b: 0 }], c: "Infinity", d: null, e: true }],
    ["null", null],
    ["a text", "NaN"],
  ])("finds nothing in %s", (_, value) => {
    expect(nonFinitePath(value)).toBeUndefined();
  });

  it.each([
    ["the value itself", Number.NaN, []],
    ["a member", { a: 1, b: Number.POSITIVE_INFINITY }, ["b"]],
    ["the first element, by its index", [Number.NEGATIVE_INFINITY], [0]],
    ["a nested element", { a: [1, { b: null }, { c: [0, Number.NaN] }] }, ["a", 2, "c", 1]],
    ["the first in document order", { a: [1, Number.NaN], b: Number.NaN }, ["a", 1]],
    ["the first of several elements", [0, Number.NaN, Number.POSITIVE_INFINITY], [1]],
  ])("locates %s", (_, value, path) => {
    expect(nonFinitePath(value)).toEqual(path);
  });
});
