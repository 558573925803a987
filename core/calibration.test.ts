import { describe, expect, it } from "vitest";
import { prng } from "../test/helpers/conversation.ts";
import {
  addUsage,
  type CalibrationPoint,
  type CalibrationSample,
  estimateTokens,
  fitLine,
  MAX_POINTS,
  resolveEstimator,
} from "./calibration.ts";

const sampleOf = (points: CalibrationPoint[]): CalibrationSample => ({
  turns_with_usage: points.length,
  points,
});

describe("fitLine (Theil–Sen, bounded)", () => {
  it("ignores one wild point among five", () => {
    // Four points on 0.3·x + 1,000 and one 16,300 tokens above it: six of the
    // ten pairwise slopes are 0.3, so the median is; the median residual is 1,000.
    const fit = fitLine([
      [1_000, 1_300],
      [2_000, 1_600],
      [3_000, 1_900],
      [4_000, 2_200],
      [5_000, 20_000],
    ]);
    expect(fit.tokens_per_char).toBe(0.3);
    expect(fit.overhead_tokens).toBeCloseTo(1_000, 9);
  });

  it("keeps tokens per char in [0.1, 1] and the overhead at 0 or more", () => {
    // Slope 2 becomes 1; the residuals 1,000 and 2,000 have median 1,500.
    expect(
      fitLine([
        [1_000, 2_000],
        [2_000, 4_000],
      ]),
    ).toEqual({ tokens_per_char: 1, overhead_tokens: 1_500 });
    // Slope 0.05 becomes 0.1; the residuals -50 and -150 have median -100, so 0.
    expect(
      fitLine([
        [1_000, 50],
        [3_000, 150],
      ]),
    ).toEqual({ tokens_per_char: 0.1, overhead_tokens: 0 });
  });

  it("keeps chars / 4's slope when every point saw the same view", () => {
    // Residuals 800 - 250 and 900 - 250: median 600.
    expect(
      fitLine([
        [1_000, 800],
        [1_000, 900],
      ]),
    ).toEqual({ tokens_per_char: 0.25, overhead_tokens: 600 });
  });
});

describe("resolveEstimator", () => {
  const three = sampleOf([
    [1_000, 1_300],
    [2_000, 1_600],
    [3_000, 1_900],
  ]);
  const two = sampleOf(three.points.slice(0, 2));

  it("is chars / 4 exactly without usage, whatever the setting", () => {
    for (const setting of ["chars", "calibrated", "auto"] as const) {
      const estimator = resolveEstimator(setting);
      expect(estimator).toEqual({
        kind: "chars",
        tokens_per_char: 0.25,
        overhead_tokens: 0,
        turns_with_usage: 0,
      });
      expect(estimateTokens(estimator, 12_345)).toBe(3_086.25);
      expect(estimateTokens(estimator, 1)).toBe(0.25);
    }
  });

  it("fits from 3 turns with usage for auto, from 2 for calibrated, never for chars", () => {
    expect(resolveEstimator("auto", { kind: "sample", sample: two })).toMatchObject({
      kind: "chars",
      turns_with_usage: 2,
    });
    expect(resolveEstimator("calibrated", { kind: "sample", sample: two })).toMatchObject({
      kind: "calibrated",
      tokens_per_char: 0.3,
      turns_with_usage: 2,
    });
    const auto = resolveEstimator("auto", { kind: "sample", sample: three });
    expect(auto).toMatchObject({ kind: "calibrated", tokens_per_char: 0.3, turns_with_usage: 3 });
    expect(auto.overhead_tokens).toBeCloseTo(1_000, 9);
    expect(estimateTokens(auto, 10_000)).toBeCloseTo(4_000, 9);
    expect(resolveEstimator("chars", { kind: "sample", sample: three })).toMatchObject({
      kind: "chars",
      turns_with_usage: 3,
    });
  });

  it("takes a calibration given outright", () => {
    const fixed = resolveEstimator("chars", {
      kind: "fixed",
      tokens_per_char: 0.5,
      overhead_tokens: 100,
    });
    expect(fixed).toEqual({
      kind: "calibrated",
      tokens_per_char: 0.5,
      overhead_tokens: 100,
      turns_with_usage: 0,
    });
    expect(estimateTokens(fixed, 3_200)).toBe(1_700);
  });
});

describe("addUsage", () => {
  it("counts input plus output against the view, keeping the latest 16 points", () => {
    let sample: CalibrationSample | undefined;
    for (let t = 0; t < 20; t++) {
      sample = addUsage(sample, 1_000 * t, { input_tokens: 10 * t, output_tokens: 1, calls: 2 });
    }
    expect(MAX_POINTS).toBe(16);
    expect(sample?.turns_with_usage).toBe(20);
    expect(sample?.points).toHaveLength(16);
    expect(sample?.points[0]).toEqual([4_000, 41]);
    expect(sample?.points[15]).toEqual([19_000, 191]);
    expect(addUsage(undefined, 7, { input_tokens: 5 })).toEqual({
      turns_with_usage: 1,
      points: [[7, 5]],
    });
  });
});

describe("the calibrated estimate of a conversation", () => {
  it("is within 5% of tokens = 0.3·chars + 5,000 (±3% noise) from turn 5 on", () => {
    const random = prng(26);
    const truth = (chars: number) => 0.3 * chars + 5_000;
    let sample: CalibrationSample | undefined;
    let chars = 0;
    const errors: number[] = [];
    for (let turn = 0; turn < 40; turn++) {
      // The view grows by 1,000 to 9,000 characters a turn.
      chars += 1_000 + Math.floor(random() * 8_000);
      const estimate = estimateTokens(resolveEstimator("auto", { kind: "sample", sample }), chars);
      if (turn >= 5) errors.push(Math.abs(estimate / truth(chars) - 1));
      // What the provider reports for this turn's call, within ±3%.
      const reported = Math.round(truth(chars) * (1 + (random() * 2 - 1) * 0.03));
      sample = addUsage(sample, chars, { input_tokens: reported - 200, output_tokens: 200 });
    }
    expect(errors).toHaveLength(35);
    expect(Math.max(...errors)).toBeLessThan(0.05);
  });

  it("misses that conversation by far more with chars / 4", () => {
    // 0.25·chars against 0.3·chars + 5,000: at 20,000 characters 5,000 of 11,000.
    const estimate = estimateTokens(resolveEstimator("chars"), 20_000);
    expect(estimate).toBe(5_000);
    expect(1 - estimate / (0.3 * 20_000 + 5_000)).toBeGreaterThan(0.5);
  });
});
