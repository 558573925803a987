import { describe, expect, it } from "vitest";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "./json.ts";

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
