import { describe, expect, it } from "vitest";
import { measureTokenized } from "../test/helpers/tokenized-usage.ts";

describe("the calibrated estimate against a real tokenizer (o200k_base)", () => {
  // Twelve generated conversations of 30 turns, each turn reporting
  // o200k_base's count of what its last call saw plus a 6k-14k overhead.
  const figures = Array.from({ length: 12 }, (_, i) => measureTokenized(i + 1, 30));

  it("is within 10% of the tokenizer's count plus the overhead on every conversation", () => {
    for (const f of figures) {
      expect(Math.abs(f.calibrated_error), `seed ${f.seed}`).toBeLessThan(0.1);
    }
  });

  it("where chars / 4 misses by more than 30% on some", () => {
    expect(Math.max(...figures.map((f) => Math.abs(f.chars_error)))).toBeGreaterThan(0.3);
  });
});
