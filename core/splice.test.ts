import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applySplice, sameJson, spliceOf } from "./splice.ts";

/** The list `splice` makes of `before`, written here from its definition. */
const applied = <T>(before: readonly T[], s: { from: number; to: number; items: readonly T[] }) => [
  ...before.slice(0, s.from),
  ...s.items,
  ...before.slice(s.to),
];

describe("spliceOf", () => {
  it("an append replaces nothing and carries the appended items", () => {
    expect(spliceOf([1, 2], [1, 2, 3, 4])).toEqual({ from: 2, to: 2, items: [3, 4] });
  });

  it("a band replacing a run keeps the prefix and the suffix", () => {
    expect(spliceOf(["a", "b", "c", "d", "e"], ["a", "S", "e"])).toEqual({
      from: 1,
      to: 4,
      items: ["S"],
    });
  });

  it("equal lists: an empty splice at the end", () => {
    expect(spliceOf([1, 2, 3], [1, 2, 3])).toEqual({ from: 3, to: 3, items: [] });
  });

  it("a repeated item is kept once, not counted twice in prefix and suffix", () => {
    expect(spliceOf([7, 7], [7])).toEqual({ from: 1, to: 2, items: [] });
    expect(spliceOf([7], [7, 7])).toEqual({ from: 1, to: 1, items: [7] });
  });

  it("compares by JSON, so equal objects read apart are the same", () => {
    expect(sameJson({ a: [1] }, { a: [1] })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 2 })).toBe(false);
    expect(spliceOf<object>([{ a: 1 }, { b: 2 }], [{ a: 1 }, { c: 3 }])).toEqual({
      from: 1,
      to: 2,
      items: [{ c: 3 }],
    });
  });

  it("applied to the old list, the splice gives the new one, and is the smallest single one", () => {
    const list = fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 12 });
    fc.assert(
      fc.property(list, list, (before, after) => {
        const s = spliceOf(before, after);
        expect(applied(before, s)).toEqual(after);
        expect(applySplice(before, s)).toEqual(after);
        // Nothing of the kept prefix could have been kept longer.
        if (s.from < before.length && s.from < after.length && s.to > s.from) {
          expect(before[s.from] === s.items[0]).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("takes one object as the same as itself, even one that has no JSON", () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(sameJson(cyclic, cyclic)).toBe(true);
    expect(spliceOf([cyclic], [cyclic])).toEqual({ from: 1, to: 1, items: [] });
  });

  it("applySplice refuses a range outside the list", () => {
    expect(applySplice([1, 2, 3], { from: 1, to: 3, items: [9] })).toEqual([1, 9]);
    expect(applySplice([1, 2], { from: 0, to: 0, items: [0] })).toEqual([0, 1, 2]);
    expect(() => applySplice([1], { from: 0, to: 2, items: [] })).toThrow(
      new RangeError("splice [0, 2) is outside a list of 1"),
    );
    expect(() => applySplice([1], { from: 1, to: 0, items: [] })).toThrow(
      new RangeError("splice [1, 0) is outside a list of 1"),
    );
    expect(() => applySplice([1], { from: -1, to: 1, items: [] })).toThrow(
      new RangeError("splice [-1, 1) is outside a list of 1"),
    );
  });
});
