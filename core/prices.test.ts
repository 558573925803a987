/**
 * The price table's look-up and `--prices`: expected prices are the table's
 * literals (core/prices.ts) read by hand.
 */
import { describe, expect, it } from "vitest";
import { parsePrices, tablePrices } from "./prices.ts";

describe("tablePrices", () => {
  it("prices a dated snapshot as its longest base id, even when a shorter base id comes later in the table", () => {
    // claude-opus-4-5 (5, 25) is listed before claude-opus-4 (15, 75); both are base ids of the snapshot.
    expect(tablePrices("claude-opus-4-5-20251101")).toEqual({
      input: 5,
      output: 25,
      summary_input: 5,
      summary_output: 25,
      source:
        "claude-opus-4-5 as read 2025-11 from https://docs.anthropic.com/en/docs/about-claude/pricing (base input, output)",
    });
  });
});

describe("parsePrices", () => {
  it("takes the summarizer's prices as given, each on its own", () => {
    expect(parsePrices("input=3,output=15,summary_input=1,summary_output=5")).toEqual({
      input: 3,
      output: 15,
      summary_input: 1,
      summary_output: 5,
      source: "--prices",
    });
    expect(parsePrices("summary_input=0.5,output=4,input=2")).toEqual({
      input: 2,
      output: 4,
      summary_input: 0.5,
      summary_output: 4,
      source: "--prices",
    });
  });
});
