/**
 * The billing model by hand (docs/tuning.md, "The billing model"): each
 * expected value below is worked out from the stream's character counts
 * (chars / 4 tokens), not from the code under test.
 */
import { describe, expect, it } from "vitest";
import {
  at,
  configDelta,
  message,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../test/helpers/builders.ts";
import type { Entry } from "./events.ts";
import { PRICING_PROFILES, type PricingName, parsePrices, tablePrices } from "./prices.ts";
import { prepareStream } from "./replay.ts";
import { conversationDollars, tuneConversation } from "./tune.ts";
import { CallMeter, dollars, turnCalls } from "./tune-billing.ts";
import type { TuneConfig } from "./tune-grid.ts";

const QUIET: TuneConfig = {
  trigger_ratio: 0.9,
  keep_first: 1,
  keep_last: 3,
  reasoning: "strip",
  tool_calls: "strip",
  summary: null,
};

const bill = (
  stream: Entry[],
  profile: PricingName = "anthropic-5m",
  config = QUIET,
  window = 1e6,
) =>
  tuneConversation(prepareStream(stream), config, {
    contextWindow: window,
    layers: [{ min_turns: 0 }],
    profile: PRICING_PROFILES[profile],
    curves: true,
  });

describe("calls", () => {
  it("bills four calls for a turn of three tool rounds, one per model response", async () => {
    // Turn 0: a 4,000-char request and a 400-char answer. Turn 1: a 400-char request,
    // three rounds of a tool call ("read" + "{}", 6 chars) and a 1,000-char result, then 400 chars.
    const stream = [
      turnStart(0),
      request("q".repeat(4000), 0),
      message("a".repeat(400), 0),
      turnStart(10),
      request("r".repeat(400), 10),
      ...[1, 2, 3].flatMap((n) => [
        toolCall(`c${n}`, "read", {}, 10 + n),
        toolResult(`c${n}`, "x".repeat(1000), false, 10 + n),
      ]),
      message("b".repeat(400), 20),
    ];
    const metrics = await bill(stream);
    expect(metrics.calls).toBe(5);
    // Inputs: 4000; then 4400 + 400, + 1006, + 1006, + 1006 chars.
    expect(metrics.call_inputs).toEqual([1000, 1200, 1451.5, 1703, 1954.5]);
    // Turn 1's first call shares turn 0's 4,000-char input: 1,000 tokens, under the
    // 1,024 minimum, so nothing is read; each later call reads the one before it.
    expect(metrics.cache_read_tokens).toBe(1200 + 1451.5 + 1703);
    expect(metrics.cache_write_tokens).toBe(1000 + 1200 + 3 * 251.5);
    expect(metrics.output_tokens).toBe(100 + 3 * 1.5 + 100);
    // Sonnet-class $3 / $15: writes at 1.25x, reads at 0.1x.
    const dollars = conversationDollars(metrics, {
      profile: PRICING_PROFILES["anthropic-5m"],
      prices: tablePrices("claude-sonnet-4-5"),
    });
    expect(dollars).toBeCloseTo((2954.5 * 3.75 + 4354.5 * 0.3 + 204.5 * 15) / 1e6, 12);
    expect(metrics.retention_sum).toBe(5);
  });

  it("opens a call at a response after a request or tool results, and times it by the last of them", () => {
    const entries = [
      turnStart(0),
      request("abcd", 1),
      message("ef", 2),
      toolCall("c", "t", {}, 3),
      toolResult("c", "x".repeat(10), false, 4),
      toolResult("c", "y".repeat(10), false, 5),
      message("z", 9),
    ];
    const chars = [0, 4, 2, 3, 10, 10, 1];
    const calls = turnCalls(entries, chars);
    const origin = calls[0]?.atMs ?? 0;
    expect(calls.map((c) => [c.inputChars, c.outputChars, c.atMs - origin])).toEqual([
      [4, 5, 0],
      [29, 1, 4000],
    ]);
  });
});

describe("CallMeter and dollars on hand-counted numbers", () => {
  // 4 characters a token plus an overhead of 5; a prefix is cached from 35 tokens on.
  const profile = { name: "openai", write: 1, read: 0.1, lifetime_s: 600, min_tokens: 35 } as const;
  const tokens = (chars: number) => chars / 4 + 5;

  it("bills input, cache, output without the overhead, overflow at the window and retention", () => {
    const meter = new CallMeter(profile, 55, tokens, true);
    // Turn 0: one call on a 200-character view: 55 tokens, at the window, not over it.
    meter.turn([{ inputChars: 0, outputChars: 40, atMs: 0 }], 200, 0, 240);
    // Turn 1: a band left 120 characters, all carried: 35 tokens read, exactly the minimum.
    meter.turn([{ inputChars: 0, outputChars: 0, atMs: 1_000 }], 120, 120, 0);
    expect(meter.totals).toEqual({
      calls: 2,
      cache_read_tokens: 35,
      cache_write_tokens: 55,
      output_tokens: 10,
      overflow_calls: 0,
      // The first call has no history yet (1); the second keeps 120 of 240 characters.
      retention_sum: 1.5,
    });
    expect(meter.inputs).toEqual([55, 35]);
    expect(new CallMeter(profile, 55, tokens).inputs).toBeUndefined();
    // An empty view of an empty history keeps all of it.
    const empty = new CallMeter(profile, 55, tokens);
    empty.turn([{ inputChars: 0, outputChars: 4, atMs: 0 }], 0, 0, 0);
    expect(empty.totals.retention_sum).toBe(1);
  });

  it("opens a call at a turn's first response, at a request after a response, never at a config change", () => {
    const shape = (entries: Entry[]) =>
      turnCalls(
        entries,
        entries.map(() => 1),
      ).map((c) => [c.inputChars, c.outputChars]);
    expect(shape([message("a", 1)])).toEqual([[0, 1]]);
    expect(shape([request("q", 1), message("a", 2), request("again", 3), message("b", 4)])).toEqual(
      [
        [1, 1],
        [3, 1],
      ],
    );
    const delta = configDelta({ assistant: { model: { id: "openai/gpt-4o" } } }, 3);
    expect(shape([request("q", 1), message("a", 2), delta, message("b", 4)])).toEqual([[1, 2]]);
  });

  it("dates a call by the last known event before it, never by an entry it does not know", () => {
    const future = { type: "future_thing" } as unknown as Entry;
    const calls = turnCalls([request("q", 1), future, message("a", 2)], [1, 0, 1]);
    expect(calls.map((c) => c.atMs - Date.parse(at(1)))).toEqual([0]);
  });

  it("prices each kind of token at its own rate", () => {
    const bill = {
      cache_write_tokens: 1e6,
      cache_read_tokens: 2e6,
      output_tokens: 3e6,
      summary_input_tokens: 4e6,
      summary_output_tokens: 5e6,
    };
    const prices = { input: 2, output: 3, summary_input: 5, summary_output: 7 };
    // 1 × 1.25 × 2 + 2 × 0.1 × 2 + 3 × 3 + 4 × 5 + 5 × 7
    expect(dollars(bill, prices, PRICING_PROFILES["anthropic-5m"])).toBeCloseTo(66.9, 10);
  });
});

describe("the cache's lifetime", () => {
  // Turn 0: an 8,000-char request (2,000 tokens) at 0 s; turn 1's request `gap` seconds later.
  const twoTurns = (gap: number) => [
    turnStart(0),
    request("q".repeat(8000), 0),
    message("a".repeat(400), 0),
    turnStart(gap),
    request("r".repeat(400), gap),
    message("b".repeat(400), gap),
  ];

  it("makes the next call a full write after a gap of 301 s under anthropic-5m", async () => {
    const metrics = await bill(twoTurns(301));
    expect(metrics.cache_read_tokens).toBe(0);
    expect(metrics.cache_write_tokens).toBe(2000 + 2200);
  });

  it("reads the shared prefix at 300 s, and at 301 s under anthropic-1h", async () => {
    for (const [gap, profile] of [
      [300, "anthropic-5m"],
      [301, "anthropic-1h"],
    ] as const) {
      const metrics = await bill(twoTurns(gap), profile);
      expect(metrics.cache_read_tokens).toBe(2000);
      expect(metrics.cache_write_tokens).toBe(2000 + 200);
    }
  });

  it("caches nothing under none", async () => {
    const metrics = await bill(twoTurns(1), "none");
    expect([metrics.cache_read_tokens, metrics.cache_write_tokens]).toEqual([0, 4200]);
  });
});

describe("a band", () => {
  it("rewrites from its first turn on: a band at turn 3 makes the next call write from there at 1.25x", async () => {
    // Six turns of a 400-char request, a tool call (6), a 4,000-char result and a
    // 400-char answer (4,806 chars). Window 10,000, ratio 0.55: the view first
    // crosses 5,500 after turn 4 (6,007.5), and keep_first 3, keep_last 1 omit
    // turn 3's tool pair (4,006 chars).
    const stream = Array.from({ length: 6 }, (_, t) => [
      turnStart(t * 10),
      request("q".repeat(400), t * 10),
      toolCall(`c${t}`, "read", {}, t * 10 + 1),
      toolResult(`c${t}`, "x".repeat(4000), false, t * 10 + 2),
      message("m".repeat(400), t * 10 + 3),
    ]).flat();
    const config: TuneConfig = {
      ...QUIET,
      trigger_ratio: 0.55,
      keep_first: 3,
      keep_last: 1,
      tool_calls: "omit",
    };
    const metrics = await bill(stream, "anthropic-5m", config, 10_000);
    expect(metrics.firing_turns[0]).toBe(4);
    expect(metrics.calls).toBe(12);
    // Turn 5's first call: turns 0–2 and turn 3's request (14,818 chars) are read; turn 3's
    // answer, turn 4 and turn 5's request (400 + 4,806 + 400 chars = 1,401.5 tokens) are written.
    expect(metrics.call_inputs?.[10]).toBe(5106);
    const reads = [0, 0, 1101.5, 1301.5, 2303, 2503, 3504.5, 3704.5, 4706, 4906, 3704.5, 5106];
    const writes = [
      100, 1101.5, 200, 1001.5, 200, 1001.5, 200, 1001.5, 200, 1001.5, 1401.5, 1001.5,
    ];
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    expect(metrics.cache_read_tokens).toBe(sum(reads));
    expect(metrics.cache_write_tokens).toBe(sum(writes));
    expect(metrics.output_tokens).toBe(6 * 101.5);
    expect(metrics.one_turn_bands).toBeGreaterThanOrEqual(1);
  });
});

describe("prices", () => {
  it("reads --prices, the summarizer at the model's prices unless given", () => {
    expect(parsePrices("input=3,output=15")).toEqual({
      input: 3,
      output: 15,
      summary_input: 3,
      summary_output: 15,
      source: "--prices",
    });
    expect(parsePrices("input=3,output=15,summary_input=1,summary_output=5").summary_output).toBe(
      5,
    );
    expect(() => parsePrices("input=3")).toThrow(/output=USD/);
    expect(() => parsePrices("input=-1,output=2")).toThrow(/0 or more/);
    expect(parsePrices("input=0,output=0")).toMatchObject({ input: 0, output: 0 });
    for (const bad of [
      "cached=1,input=1,output=2",
      "input,output=2",
      "input= ,output=2",
      "input=x,output=2",
    ]) {
      expect(() => parsePrices(bad)).toThrow(/^--prices "[^"]+": expected input=USD,output=USD/);
    }
    expect(() => parsePrices("output=2")).toThrow("--prices needs input=USD and output=USD");
  });

  it("prices a dated snapshot as its longest base id in the table", () => {
    expect(tablePrices("gpt-5-mini")).toMatchObject({ input: 0.25, output: 2 });
    expect(tablePrices("gpt-5-mini-2025-08-07")).toMatchObject({ input: 0.25, output: 2 });
    expect(tablePrices("gpt-4o-mini-2024-07-18")).toMatchObject({ input: 0.15, output: 0.6 });
    expect(tablePrices("gpt-4.1-mini-2025-04-14")).toMatchObject({ input: 0.4, output: 1.6 });
    expect(tablePrices("gpt-5-2025-08-07")).toMatchObject({ input: 1.25, output: 10 });
  });

  it("takes a dated snapshot's base id from the table and falls back to its first entry, saying so", () => {
    expect(tablePrices("claude-opus-4-1-20250805")).toMatchObject({ input: 15, output: 75 });
    expect(tablePrices("acme-1").source).toMatch(/acme-1 is not in the table/);
    expect(tablePrices(undefined)).toMatchObject({ input: 3, output: 15 });
    expect(tablePrices(undefined).source).not.toMatch(/not in the table/);
    expect(tablePrices("gpt-4o").source).toBe(
      "gpt-4o as read 2025-11 from https://openai.com/api/pricing/ (input, output; Standard tier)",
    );
  });
});
