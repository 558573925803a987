import { describe, expect, it } from "vitest";
import { mulberry32 } from "./random.ts";

/** The first `n` draws of `mulberry32(seed)` as the 32-bit integers they divide by 2³² (exactly). */
const draws = (seed: number, n: number) => {
  const random = mulberry32(seed);
  return Array.from({ length: n }, () => random() * 2 ** 32);
};

describe("mulberry32", () => {
  // Expected values: the published C reference (uint32_t state, z = state +=
  // 0x6D2B79F5; z = (z ^ z >> 15) * (z | 1); z ^= z + (z ^ z >> 7) * (z | 61);
  // return z ^ z >> 14), compiled with gcc and run on these seeds.
  it.each([
    [0, [1_144_304_738, 1_416_247, 958_946_056, 627_933_444]],
    [1, [2_693_262_067, 11_749_833, 2_265_367_787, 4_213_581_821]],
    [42, [2_581_720_956, 1_925_393_290, 3_661_312_704, 2_876_485_805]],
    [2 ** 31, [3_524_353_788, 1_924_613_307, 3_365_584_844, 2_199_219_949]],
  ])("draws the reference sequence from seed %i", (seed, expected) => {
    expect(draws(seed, 4)).toEqual(expected);
  });

  it("takes its seed as a 32-bit unsigned integer", () => {
    const fromMax = [3_850_105_811, 813_802_916, 3_073_704_848, 4_054_706_436];
    expect(draws(2 ** 32 - 1, 4)).toEqual(fromMax);
    expect(draws(-1, 4)).toEqual(fromMax);
    expect(draws(2 ** 32 + 42, 2)).toEqual([2_581_720_956, 1_925_393_290]);
  });

  it("draws numbers in [0, 1), the same ones again from the same seed", () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    for (let i = 0; i < 100; i++) {
      const x = a();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      expect(b()).toBe(x);
    }
  });
});
