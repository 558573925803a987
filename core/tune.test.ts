import { describe, expect, it } from "vitest";
import {
  message,
  request,
  strippableTurns,
  toolCall,
  toolResult,
  turnStart,
} from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { AutoConfigLayer } from "./config.ts";
import { InvalidInputError } from "./errors.ts";
import type { Entry } from "./events.ts";
import { PRICING_PROFILES, type PricingName } from "./prices.ts";
import { prepareStream, type SummarizeBand, simulateStream } from "./replay.ts";
import {
  type ConfigResult,
  type ConversationMetrics,
  cachedSummaries,
  conversationDollars,
  rankResults,
  STAND_IN_MODEL,
  standInSummary,
  summarizeConfig,
  type TuneOptions,
  tuneConversation,
} from "./tune.ts";
import { configLayer, DEFAULT_GRID, expandGrid, parseGrid, type TuneConfig } from "./tune-grid.ts";
import { type Candidate, tuneVerdict } from "./tune-verdict.ts";

const MECHANICAL: TuneConfig = {
  trigger_ratio: 0.75,
  keep_first: 1,
  keep_last: 3,
  reasoning: "strip",
  tool_calls: "strip",
  summary: null,
};

describe("parseGrid and expandGrid", () => {
  it("gives the 270 configurations of the default grid", () => {
    const configs = expandGrid(parseGrid([]));
    expect(configs).toHaveLength(270);
    expect(new Set(configs.map((c) => c.trigger_ratio))).toEqual(
      new Set([0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]),
    );
    expect(configs).toContainEqual(MECHANICAL);
  });

  it("replaces the keys it is given and keeps the others", () => {
    const grid = parseGrid(["trigger_ratio=0.6:0.8:0.1 keep_last=1..3", "tool_calls=omit,keep"]);
    expect(grid.trigger_ratio).toEqual([0.6, 0.7, 0.8]);
    expect(grid.keep_last).toEqual([1, 2, 3]);
    expect(grid.tool_calls).toEqual(["omit", null]);
    expect(grid.keep_first).toEqual(DEFAULT_GRID.keep_first);
    expect(parseGrid(["keep_first=0;reasoning=keep,strip"]).reasoning).toEqual([null, "strip"]);
  });

  it("leaves out rules without a policy and varies no policy of a summary rule", () => {
    const grid = parseGrid([
      "trigger_ratio=0.7 keep_first=1 keep_last=2 reasoning=keep tool_calls=keep,omit summary=off,on",
    ]);
    expect(expandGrid(grid, { instructions: "short" })).toEqual([
      {
        trigger_ratio: 0.7,
        keep_first: 1,
        keep_last: 2,
        reasoning: null,
        tool_calls: "omit",
        summary: null,
      },
      {
        trigger_ratio: 0.7,
        keep_first: 1,
        keep_last: 2,
        reasoning: null,
        tool_calls: null,
        summary: { instructions: "short" },
      },
    ]);
    expect(() => expandGrid(parseGrid(["reasoning=keep tool_calls=keep"]))).toThrow(
      InvalidInputError,
    );
  });

  it("varies the guards only when named, and the layer sets them", () => {
    const grid = parseGrid([
      "trigger_ratio=0.7 keep_first=1 keep_last=2 tool_calls=omit min_band_turns=1,3 reserve_tokens=8000",
    ]);
    const rule = { trigger_ratio: 0.7, keep_first: 1, keep_last: 2, reasoning: "strip" };
    expect(expandGrid(grid)).toEqual([
      { ...rule, reserve_tokens: 8_000, min_band_turns: 1, tool_calls: "omit", summary: null },
      { ...rule, reserve_tokens: 8_000, min_band_turns: 3, tool_calls: "omit", summary: null },
    ]);
    const [first] = expandGrid(grid);
    expect(configLayer(first as TuneConfig)).toMatchObject({
      reserve_tokens: 8_000,
      min_band_turns: 1,
    });
    expect(configLayer(first as TuneConfig)).not.toHaveProperty("min_gain_tokens");
    expect(expandGrid(parseGrid([]))[0]).not.toHaveProperty("min_band_turns");
  });

  it("varies when a band fires and the rest it waits for, as the auto layer names them", () => {
    const configs = expandGrid(
      parseGrid([
        "trigger_ratio=0.7 keep_first=1 keep_last=2 tool_calls=omit when=turn,idle idle_seconds=300,900",
      ]),
    );
    // "turn" never waits: it is one configuration, whatever rest the grid names.
    expect(configs.map((c) => [c.when, c.idle_seconds])).toEqual([
      ["turn", undefined],
      ["idle", 300],
      ["idle", 900],
    ]);
    expect(configLayer(configs[2] as TuneConfig)).toMatchObject({
      when: "idle",
      idle_seconds: 900,
    });
    expect(AutoConfigLayer.safeParse(configLayer(configs[2] as TuneConfig)).success).toBe(true);
  });

  it("leaves out a hard ratio at or below the trigger, which could never defer", () => {
    const configs = expandGrid(
      parseGrid([
        "trigger_ratio=0.7,0.9 keep_first=1 keep_last=2 tool_calls=omit when=idle hard_ratio=0.9,0.95",
      ]),
    );
    expect(configs.map((c) => [c.trigger_ratio, c.hard_ratio])).toEqual([
      [0.7, 0.9],
      [0.7, 0.95],
      [0.9, 0.95],
    ]);
  });

  it.each([
    ["when=never", /one of turn, idle/],
    ["idle_seconds=29", /seconds are whole numbers, 30 to 3600/],
    ["idle_seconds=3601", /seconds are whole numbers, 30 to 3600/],
    ["ratio=0.5", /KEY one of/],
    ["min_band_turns=0", /turns are whole numbers, 1 or more/],
    ["min_gain_tokens=-1", /tokens are whole numbers, 0 or more/],
    ["trigger_ratio=1.5", /ratio is in \(0, 1\]/],
    ["trigger_ratio=0.9:0.5:0.1", /FROM:TO:STEP/],
    ["keep_last=-1", /whole numbers/],
    ["keep_first=1.5", /whole numbers/],
    ["tool_calls=drop", /one of strip, strip-requests, strip-responses, omit, keep/],
    ["summary=yes", /one of off, on/],
    ["keep_last=", /KEY=VALUES/],
  ])("refuses --grid %s", (spec, message) => {
    expect(() => parseGrid([spec])).toThrow(message);
  });
});

describe("tuneConversation", () => {
  it("fires exactly where simulate does, for every configuration of the default grid", async () => {
    const streams = [generateConversation({ seed: 2, turns: 40 })];
    for (const stream of streams) {
      const prepared = prepareStream(stream);
      for (const config of expandGrid(DEFAULT_GRID)) {
        const metrics = await tuneConversation(prepared, config, { contextWindow: 60_000 });
        const simulated = await simulateStream(stream, {
          layers: [
            {
              enabled: true,
              trigger_ratio: config.trigger_ratio,
              rule: {
                keep_first: config.keep_first,
                keep_last: config.keep_last,
                tool_calls: config.tool_calls,
              },
            },
          ],
          model: { context_window: 60_000 },
        });
        expect(metrics.firing_turns).toEqual(simulated.firings.map((f) => f.turn));
        expect(riskOf(metrics)).toEqual(riskOfFirings(simulated.firings));
      }
    }
  });

  it("measures U_t and V_t: peak, overflow turns and input tokens on a hand-counted stream", async () => {
    // Six turns of 400 chars (100 tokens) each: a 40-char request and a 360-char tool response.
    const turns = Array.from({ length: 8 }, (_, t) => [
      turnStart(t),
      request("r".repeat(40), t),
      toolCall(`c${t}`, "x", {}, t),
      toolResult(`c${t}`, "p".repeat(360 - "x{}".length), false, t),
    ]).flat();
    const metrics = await tuneConversation(
      prepareStream(turns),
      { ...MECHANICAL, trigger_ratio: 0.9, keep_first: 0, keep_last: 1 },
      { contextWindow: 650, curves: true },
    );
    // Turn 5 (6 turns, 600 tokens) is the first over 585 past min_turns 5: turns 0..4 are stripped.
    const stripped = (40 + "x{}".length + "[compacted] x: success".length) / 4;
    expect(metrics.firing_turns[0]).toBe(5);
    expect(metrics.before?.slice(0, 6)).toEqual([100, 200, 300, 400, 500, 600]);
    expect(metrics.after?.[5]).toBe(5 * stripped + 100);
    expect(metrics.overflow_turns).toBe(0);
    expect(metrics.peak_tokens).toBe(600);
  });
});

describe("tuneConversation on strippable turns", () => {
  // Turns of 400 chars (100 tokens), 100 of them reasoning a band strips; min_turns 0.
  const tune = (turns: number, config: Partial<TuneConfig>, options: Partial<TuneOptions>) =>
    tuneConversation(
      prepareStream(strippableTurns(turns)),
      { ...MECHANICAL, keep_first: 0, ...config },
      { contextWindow: 1e6, layers: [{ min_turns: 0 }], curves: true, ...options },
    );

  it("counts a firing still over the threshold only when its band leaves more than it", async () => {
    // Window 800 at 0.5: after turn 4 (500 tokens) the band 0..3 leaves exactly 400,
    // the threshold; after turn 5 (500) the band 4..4 leaves 475.
    const metrics = await tune(6, { trigger_ratio: 0.5, keep_last: 1 }, { contextWindow: 800 });
    expect(metrics.firing_turns).toEqual([4, 5]);
    expect(metrics.after).toEqual([100, 200, 300, 400, 400, 475]);
    expect(riskOf(metrics)).toEqual({
      firings: 2,
      still_over_firings: 1,
      one_turn_bands: 1,
      longest_firing_run: 2,
    });
  });

  it("counts the turns over the window, not one at it", async () => {
    // No range to compact (keep_last 100): 100, 200, 300 and 400 tokens in a window of 300.
    const metrics = await tune(4, { keep_last: 100 }, { contextWindow: 300 });
    expect(metrics.before).toEqual([100, 200, 300, 400]);
    expect(metrics.overflow_turns).toBe(1);
    expect(metrics.peak_tokens).toBe(400);
  });

  it("replays in a given calibration's tokens, the first call's overhead missed too", async () => {
    // 0.5 tokens a char plus 100: views of 300, 500, 700 and 900 tokens; each
    // turn's miss is its 200 new tokens, the first one all 300.
    const metrics = await tune(
      4,
      { keep_last: 100 },
      { calibration: { kind: "fixed", tokens_per_char: 0.5, overhead_tokens: 100 } },
    );
    expect(metrics.before).toEqual([300, 500, 700, 900]);
    expect(metrics.input_tokens).toBe(300 + 500 + 700);
    expect(metrics.cache_miss_tokens).toBe(300 + 200 + 200);
  });

  it("adds up a summary rule's tokens, in and out", async () => {
    // The band 0..3 after turn 4 summarizes 1,600 chars (400 tokens) into 160 (40).
    const metrics = await tune(
      6,
      { trigger_ratio: 0.5, keep_last: 1, reasoning: null, tool_calls: null, summary: {} },
      { contextWindow: 800, summarize: standInSummary },
    );
    expect(metrics.firing_turns).toEqual([4]);
    expect([metrics.summary_input_tokens, metrics.summary_output_tokens]).toEqual([400, 40]);
  });

  it("counts the retained share of the raw history per call, all of it until a band", async () => {
    // One call a turn, after its 300-char request, sending all the raw history until
    // the band after turn 4 (window 800) strips 400 chars: turn 5's call sends 1,900
    // of its 2,300 chars.
    const metrics = await tune(6, { trigger_ratio: 0.5, keep_last: 1 }, { contextWindow: 800 });
    expect(metrics.calls).toBe(6);
    expect(metrics.retention_sum).toBeCloseTo(5 + 1900 / 2300, 12);
  });
});

/** The risk counts tune reports for one conversation. */
function riskOf(metrics: ConversationMetrics) {
  const { firings, still_over_firings, one_turn_bands, longest_firing_run } = metrics;
  return { firings, still_over_firings, one_turn_bands, longest_firing_run };
}

/** The same counts, recounted from simulate's firings. */
function riskOfFirings(
  firings: readonly {
    turn: number;
    from_turn: number;
    to_turn: number;
    estimated_tokens_after: number;
    threshold: number;
  }[],
) {
  let run = 0;
  let longest = 0;
  firings.forEach((f, i) => {
    run = i > 0 && firings[i - 1]?.turn === f.turn - 1 ? run + 1 : 1;
    longest = Math.max(longest, run);
  });
  return {
    firings: firings.length,
    still_over_firings: firings.filter((f) => f.estimated_tokens_after > f.threshold).length,
    one_turn_bands: firings.filter((f) => f.from_turn === f.to_turn).length,
    longest_firing_run: longest,
  };
}

/** `n` turns each holding one tool response of `payload` characters. */
function toolHeavy(n: number, payload: number): Entry[] {
  return Array.from({ length: n }, (_, t) => [
    turnStart(t),
    request(`step ${t}`, t),
    toolCall(`call${t}`, "fs_read_file", { path: `src/${t}.ts` }, t),
    toolResult(`call${t}`, "x".repeat(payload), false, t),
    message("done", t),
  ]).flat();
}

/** Tunes `streams` under `configs` with pricing `profile` at $1 per million input tokens, output free. */
async function tuneAll(
  streams: Entry[][],
  configs: TuneConfig[],
  { window, profile, layers }: { window: number; profile: PricingName; layers: AutoConfigLayer[] },
) {
  const prepared = streams.map(prepareStream);
  const billing = { profile: PRICING_PROFILES[profile], prices: PRICES };
  const results: ConfigResult[] = [];
  const candidates: Candidate[] = [];
  const bills = (metrics: ConversationMetrics[]) =>
    metrics.map((m) => ({ ...m, dollars: conversationDollars(m, billing) }));
  const run = async (config: TuneConfig) => {
    const metrics: ConversationMetrics[] = [];
    for (const stream of prepared) {
      metrics.push(
        await tuneConversation(stream, config, {
          contextWindow: window,
          layers,
          profile: billing.profile,
        }),
      );
    }
    return metrics;
  };
  for (const config of configs) {
    const metrics = await run(config);
    results.push(summarizeConfig(config, metrics, window, 0.1, billing));
    candidates.push({ config, bills: bills(metrics) });
  }
  const summary = tuneVerdict(candidates, {
    minRetention: 0,
    grid: DEFAULT_GRID,
    defaults: bills(await run(MECHANICAL)),
    classes: streams.map(() => "tool-heavy"),
  });
  return rankResults(results, summary.recommended);
}

const PRICES = {
  input: 1,
  output: 0,
  summary_input: 1,
  summary_output: 1,
  source: "test",
} as const;

describe("the recommendation on conversations whose best configuration is known", () => {
  // Every turn adds a tool response of 0.26 of the window (min_turns 0, so the
  // rule may fire from the second turn). Past a band the view holds the
  // stripped turns, keep_last whole turns and the new one: four whole turns
  // (keep_last 3, or a first crossing at ratio 0.9) overflow, three never do.
  const window = 40_000;
  const payload = Math.round(0.26 * window * 4);
  const streams = [30, 24, 26, 28, 22].map((n) => toolHeavy(n, payload));
  const layers = [{ min_turns: 0 }];

  it("without a cache, picks the rule that compacts most, earliest", async () => {
    // Cost = every token sent. At ratio 0.5 with keep_last 1 two whole turns
    // (0.52) already fire, so it fires at every turn and keeps one turn whole;
    // keep_first 0 keeps no old turn whole; omitting leaves less than stripping.
    const results = await tuneAll(
      streams,
      expandGrid(parseGrid(["trigger_ratio=0.5,0.7,0.9 keep_first=0..2 keep_last=1..2"])),
      { window, profile: "none", layers },
    );
    const best = results.find((r) => r.recommended);
    expect(best?.config).toEqual({
      trigger_ratio: 0.5,
      keep_first: 0,
      keep_last: 1,
      reasoning: "strip",
      tool_calls: "omit",
      summary: null,
    });
    expect(best?.overflow_calls).toBe(0);
    expect(best?.cache_read_tokens).toBe(0);
    expect(results[0]).toBe(best);
  });

  it("never recommends a configuration that overflows when one does not", async () => {
    const results = await tuneAll(
      streams,
      expandGrid(parseGrid(["trigger_ratio=0.5,0.9 keep_first=0 keep_last=2,3 tool_calls=strip"])),
      { window, profile: "anthropic-5m", layers },
    );
    for (const result of results) {
      const { keep_last, trigger_ratio } = result.config;
      expect(result.overflow_calls > 0).toBe(keep_last === 3 || trigger_ratio === 0.9);
    }
    const best = results.find((r) => r.recommended);
    expect([best?.config.trigger_ratio, best?.config.keep_last]).toEqual([0.5, 2]);
  });
});

describe("rankResults", () => {
  const result = (dollars: number, overflow: number): ConfigResult =>
    ({
      config: { ...MECHANICAL, trigger_ratio: dollars / 1000 },
      dollars,
      overflow_calls: overflow,
      pareto: false,
      recommended: false,
    }) as ConfigResult;

  it("marks the Pareto front of dollars against overflowing calls, the verdict's pick, and sorts by dollars", () => {
    const results = [
      result(300, 0),
      result(100, 9),
      result(200, 1),
      result(200, 2),
      result(400, 0),
    ];
    const ranked = rankResults(results, (results[2] as ConfigResult).config);
    expect(ranked.map((r) => [r.dollars, r.overflow_calls, r.pareto, r.recommended])).toEqual([
      [100, 9, true, false],
      [200, 1, true, true],
      [200, 2, false, false],
      [300, 0, true, false],
      [400, 0, false, false],
    ]);
  });

  it("prices cache hits at the cache-read price and adds a summary's tokens to the dollars", () => {
    const summary = summarizeConfig(
      { ...MECHANICAL, reasoning: null, tool_calls: null, summary: {} },
      [
        {
          turns: 10,
          firings: 2,
          firing_turns: [6, 8],
          peak_tokens: 900,
          overflow_turns: 0,
          input_tokens: 5000,
          cache_miss_tokens: 1000,
          summary_input_tokens: 300,
          summary_output_tokens: 30,
          calls: 12,
          cache_read_tokens: 4000,
          cache_write_tokens: 2000,
          output_tokens: 100,
          overflow_calls: 1,
          retention_sum: 6,
          still_over_firings: 1,
          one_turn_bands: 0,
          longest_firing_run: 1,
        },
      ],
      1000,
      0.1,
      {
        profile: PRICING_PROFILES["anthropic-5m"],
        prices: { input: 2, output: 10, summary_input: 1, summary_output: 5, source: "test" },
      },
    );
    expect(summary.effective_input_cost).toBeCloseTo(1000 + 0.1 * 4000, 9);
    expect(summary.peak_utilization).toBe(0.9);
    expect(summary.summary_input_tokens).toBe(300);
    expect(summary.summary_output_tokens).toBe(30);
    // 2000 written at 1.25 x $2, 4000 read at 0.1 x $2, 100 out at $10, 300 + 30 summary at $1 / $5.
    expect(summary.dollars).toBeCloseTo((5000 + 800 + 1000 + 300 + 150) / 1e6, 12);
    expect(summary.retention).toBe(0.5);
  });
});

describe("summing a configuration's conversations", () => {
  const metrics = (scale: number, longest: number, peak: number) => ({
    turns: 10 * scale,
    firings: 2 * scale,
    firing_turns: [],
    peak_tokens: peak,
    overflow_turns: 3 * scale,
    input_tokens: 5000 * scale,
    cache_miss_tokens: 1000 * scale,
    summary_input_tokens: 0,
    summary_output_tokens: 0,
    calls: 12 * scale,
    cache_read_tokens: 4000 * scale,
    cache_write_tokens: 2000 * scale,
    output_tokens: 100 * scale,
    overflow_calls: 4 * scale,
    retention_sum: 6 * scale,
    still_over_firings: 5 * scale,
    one_turn_bands: 7 * scale,
    longest_firing_run: longest,
  });

  it("adds every count over the conversations and keeps the longest run and the peak", () => {
    const summary = summarizeConfig(
      MECHANICAL,
      [metrics(1, 4, 600), metrics(2, 3, 800)],
      1000,
      0.1,
      {
        profile: PRICING_PROFILES["anthropic-5m"],
        prices: { input: 2, output: 10, summary_input: 1, summary_output: 5, source: "test" },
      },
    );
    expect(summary).toMatchObject({
      conversations: 2,
      turns: 30,
      firings: 6,
      peak_utilization: 0.8,
      overflow_turns: 9,
      input_tokens: 15000,
      cache_miss_tokens: 3000,
      calls: 36,
      cache_read_tokens: 12000,
      cache_write_tokens: 6000,
      output_tokens: 300,
      overflow_calls: 12,
      still_over_firings: 15,
      one_turn_bands: 21,
      longest_firing_run: 4,
      retention: 0.5,
      pareto: false,
      recommended: false,
    });
    // No summary rule: no summary tokens at all.
    expect(summary).not.toHaveProperty("summary_input_tokens");
  });
});

describe("summaries while tuning", () => {
  it("stands in with a labelled text of a tenth of the band, costing the band in", async () => {
    const raw = [request("a".repeat(400)), message("b".repeat(600))];
    const summary = await standInSummary({ from_turn: 0, to_turn: 1 }, raw, {});
    expect(summary.model).toBe(STAND_IN_MODEL);
    expect(Buffer.byteLength(summary.text)).toBe(100);
    expect(summary.input_tokens).toBe(250);
    expect(summary.output_tokens).toBe(25);
  });

  it("fills the stand-in with its label, one character at least", async () => {
    const quarter = await standInSummary(
      { from_turn: 0, to_turn: 0 },
      [request("a".repeat(250))],
      {},
    );
    expect(quarter.text).toBe("stand-in summary stand-in");
    const empty = await standInSummary({ from_turn: 0, to_turn: 0 }, [], {});
    expect(empty.text).toBe("s");
    expect([empty.input_tokens, empty.output_tokens]).toEqual([0, 0.25]);
  });

  it("keeps one summary per range and rule, and no more", async () => {
    const calls: string[] = [];
    const summarize = cachedSummaries(async (range, _raw, rule) => {
      calls.push(`${range.from_turn}..${range.to_turn} ${JSON.stringify(rule)}`);
      return { text: `summary ${calls.length}`, model: "m", latency_ms: 0 };
    });
    const first = await summarize({ from_turn: 0, to_turn: 3 }, [], {});
    expect(await summarize({ from_turn: 0, to_turn: 3 }, [], {})).toBe(first);
    await summarize({ from_turn: 0, to_turn: 4 }, [], {});
    await summarize({ from_turn: 1, to_turn: 3 }, [], {});
    await summarize({ from_turn: 0, to_turn: 3 }, [], { instructions: "shorter" });
    expect(calls).toEqual(["0..3 {}", "0..4 {}", "1..3 {}", '0..3 {"instructions":"shorter"}']);
  });

  it("summarizes each band once across configurations", async () => {
    const stream = toolHeavy(20, 8_000);
    const calls: string[] = [];
    const counting: SummarizeBand = (range, raw, rule) => {
      calls.push(`${range.from_turn}..${range.to_turn}`);
      return standInSummary(range, raw, rule);
    };
    const summarize = cachedSummaries(counting);
    const prepared = prepareStream(stream);
    const configs = expandGrid(
      parseGrid(["summary=on trigger_ratio=0.5,0.6 keep_first=1 keep_last=2"]),
    );
    let fired = 0;
    for (const config of configs) {
      const metrics = await tuneConversation(prepared, config, {
        contextWindow: 20_000,
        summarize,
      });
      fired += metrics.firings;
      expect(metrics.summary_input_tokens).toBeGreaterThan(0);
    }
    expect(fired).toBeGreaterThan(calls.length);
    expect(new Set(calls).size).toBe(calls.length);
  });
});
