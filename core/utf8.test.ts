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

  it("counts texts longer than its first scratch buffer, growing it as needed", () => {
    expect(utf8Length("日".repeat(30_000))).toBe(90_000);
    expect(utf8Length(`a${"é".repeat(100_000)}`)).toBe(200_001);
    expect(utf8Length("日".repeat(30_000))).toBe(90_000);
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
