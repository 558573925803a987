import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Length } from "./utf8.ts";

describe("utf8Length", () => {
  it("counts bytes like an encoder", () => {
    expect(utf8Length("abc")).toBe(3);
    expect(utf8Length("é")).toBe(2);
    expect(utf8Length("日本")).toBe(6);
    expect(utf8Length("🚀")).toBe(4);
    expect(utf8Length("\ud800")).toBe(3);
  });

  it("equals TextEncoder's byte count for any string (property)", () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        expect(utf8Length(s)).toBe(encoder.encode(s).length);
      }),
    );
  });
});
