import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  at,
  compaction,
  configDelta,
  message,
  messageTurn,
  reasoning,
  request,
  toolCall,
  turnStart,
} from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import { SummaryRequiredError } from "./errors.ts";
import { estimateStream } from "./estimate.ts";
import type { Entry } from "./events.ts";
import { compactionsOf } from "./projection.ts";
import { evaluateStream, type Firing, prepareStream, simulateStream } from "./replay.ts";
import { indexTurns } from "./turns.ts";

const enabled = { enabled: true } as const;

describe("simulateStream", () => {
  it("fires bands that never overlap and respect keep_first/keep_last (property)", async () => {
    let runsThatFired = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 5, max: 60 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 2_000, max: 60_000 }),
        async (seed, turns, keepFirst, keepLast, window) => {
          const stream = generateConversation({ seed, turns });
          const { firings, entries } = await simulateStream(stream, {
            layers: [
              { ...enabled, min_turns: 2, rule: { keep_first: keepFirst, keep_last: keepLast } },
            ],
            model: { context_window: window },
          });
          let previousTo = -1;
          for (const firing of firings) {
            expect(firing.from_turn).toBeGreaterThan(previousTo);
            expect(firing.from_turn).toBeGreaterThanOrEqual(keepFirst);
            expect(firing.to_turn).toBeLessThanOrEqual(firing.turn - keepLast);
            expect(firing.from_turn).toBeLessThanOrEqual(firing.to_turn);
            expect(firing.estimated_tokens).toBeGreaterThan(firing.threshold);
            previousTo = firing.to_turn;
          }
          expect(compactionsOf(entries)).toHaveLength(firings.length);
          expect(entries.filter((e) => e.type !== "compaction")).toEqual(stream);
          if (firings.length > 0) runsThatFired++;
        },
      ),
      propertyRuns(60),
    );
    // The property is only worth something if the bands it checks exist: about
    // 90% of these conversations outgrow their window (542 of 600 sampled).
    expect(runsThatFired).toBeGreaterThan(30);
  });

  it("fires exactly where evaluating each stored prefix would", async () => {
    const stream = generateConversation({ seed: 42, turns: 40 });
    const layers = [{ ...enabled, trigger_ratio: 0.6 }];
    const model = { context_window: 20_000 };
    const { firings, entries } = await simulateStream(stream, { layers, model });
    expect(firings.length).toBeGreaterThan(1);
    for (const firing of firings) {
      const position = entries.indexOf(firing.compaction);
      const prefix = entries.slice(0, position);
      const { decision } = await evaluateStream(prefix, { layers, model, nowMillis: 0 });
      expect(indexTurns(prefix).turnCount - 1).toBe(firing.turn);
      expect(decision.fire).toBe(true);
      expect(decision.range).toEqual({ from_turn: firing.from_turn, to_turn: firing.to_turn });
      expect(decision.estimated_tokens).toBe(firing.estimated_tokens);
      expect(estimateStream(entries.slice(0, position + 1)).estimated_tokens).toBe(
        firing.estimated_tokens_after,
      );
    }
  });

  it("never fires when disabled", async () => {
    const stream = generateConversation({ seed: 5, turns: 30 });
    expect((await simulateStream(stream, { model: { context_window: 1_000 } })).firings).toEqual(
      [],
    );
  });

  it("reports a summary rule without a summarizer instead of faking a summary", async () => {
    const stream = generateConversation({ seed: 5, turns: 30 });
    const layers = [{ ...enabled, rule: { summary: {} } }];
    await expect(
      simulateStream(stream, { layers, model: { context_window: 1_000 } }),
    ).rejects.toBeInstanceOf(SummaryRequiredError);
  });

  it("summarizes from the raw events of the band when given a summarizer", async () => {
    const stream = generateConversation({ seed: 5, turns: 30 });
    const layers = [{ ...enabled, rule: { summary: {} } }];
    const seen: { from: number; to: number; turns: number; compactions: number }[] = [];
    const { firings } = await simulateStream(stream, {
      layers,
      model: { context_window: 4_000 },
      summarize: async (range, raw: readonly Entry[]) => {
        seen.push({
          from: range.from_turn,
          to: range.to_turn,
          turns: indexTurns(raw).turnCount,
          compactions: compactionsOf(raw).length,
        });
        return {
          text: `summary of ${range.from_turn}-${range.to_turn}`,
          model: "m",
          latency_ms: 5,
        };
      },
    });
    expect(firings.length).toBeGreaterThan(0);
    for (const call of seen) {
      expect(call.turns).toBe(call.to - call.from + 1);
      expect(call.compactions).toBe(0);
    }
    expect(firings[0]?.compaction.summary?.summary).toBe(
      `summary of ${seen[0]?.from}-${seen[0]?.to}`,
    );
    expect(firings[0]?.compaction.trigger).toMatchObject({
      summary_model: "m",
      summary_latency_ms: 5,
    });
  });
});

/**
 * Six turns of 200 estimated tokens each (200-character request and message,
 * 400 characters of reasoning), the turn's last entry at 10·t + 2 seconds.
 */
function sixTurns(): Entry[][] {
  return Array.from({ length: 6 }, (_, t) => [
    turnStart(10 * t),
    request("q".repeat(200), 10 * t),
    reasoning("r".repeat(400), 10 * t + 1),
    message("m".repeat(200), 10 * t + 2),
  ]);
}

/** Fires above 500 estimated tokens, keeps the last turn, strips reasoning. */
const RULE = { min_turns: 2, trigger_ratio: 0.5, rule: { keep_first: 0, keep_last: 1 } };
const WINDOW = { context_window: 1_000 };
const firingsOf = (firings: readonly Firing[]) =>
  firings.map((f) => [
    f.turn,
    f.from_turn,
    f.to_turn,
    f.estimated_tokens,
    f.estimated_tokens_after,
  ]);

describe("simulateStream on hand-made streams", () => {
  it("starts the rolling range after a band already in the stream", async () => {
    const turns = sixTurns();
    const manual = compaction(0, 2, 15, { reasoning: "strip" });
    const stream = [...turns.slice(0, 2).flat(), manual, ...turns.slice(2).flat()];
    const { firings, entries } = await simulateStream(stream, {
      layers: [{ ...enabled, ...RULE }],
      model: WINDOW,
    });
    // Turns 0–2 are stripped to 100 tokens each: 300, then 500 (not over), then 700.
    expect(firingsOf(firings)).toEqual([
      [4, 3, 3, 700, 600],
      [5, 4, 4, 800, 700],
    ]);
    expect(firings.map((f) => f.threshold)).toEqual([500, 500]);
    // Each band is stamped from the last entry before it (42 s and 52 s after the origin).
    expect(firings.map((f) => f.compaction.timestamp)).toEqual([at(42), at(52)]);
    expect(entries.indexOf(manual)).toBe(8);
  });

  it("follows config deltas in the stream, from the turn that carries them", async () => {
    const turns = sixTurns();
    const delta = configDelta(
      { conversation: { compaction: { auto: { ...enabled, ...RULE } } } },
      30,
    );
    (turns[3] as Entry[]).splice(2, 0, delta);
    const { firings } = await simulateStream(turns.flat(), { model: WINDOW });
    expect(firingsOf(firings)).toEqual([
      [3, 0, 2, 800, 500],
      [4, 3, 3, 700, 600],
      [5, 4, 4, 800, 700],
    ]);
  });

  it("counts a last turn's unanswered call, which the view keeps, and drops it once the next turn leaves it unanswered", async () => {
    const call = toolCall("c", "deploy", { env: "prod", notes: "x".repeat(400) }, 20);
    const stream = [
      ...messageTurn(0),
      turnStart(10),
      request("deploy?", 10),
      call,
      turnStart(30),
      request("never mind", 30),
      message("ok", 30),
    ];
    const estimates: number[] = [];
    await simulateStream(stream, {
      model: WINDOW,
      onTurn: (turn) => estimates.push(turn.estimated_tokens),
    });
    const upTo = (end: number) => estimateStream(stream.slice(0, end)).estimated_tokens;
    expect(estimates).toEqual([upTo(3), upTo(6), upTo(9)]);
    expect(upTo(6) - upTo(5)).toBeGreaterThan(100);
    expect(upTo(9)).toBeLessThan(upTo(6));
  });

  it("passes entries it does not know through, without reading a timestamp from them", async () => {
    const turns = sixTurns();
    const unknown = { type: "future_thing", payload: 1 } as unknown as Entry;
    (turns[4] as Entry[]).push(unknown);
    const { firings, entries } = await simulateStream(turns.flat(), {
      layers: [{ ...enabled, ...RULE }],
      model: WINDOW,
    });
    expect(firings.map((f) => [f.turn, f.compaction.timestamp])).toEqual([
      [2, at(22)],
      [3, at(32)],
      [4, at(42)],
      [5, at(52)],
    ]);
    expect(entries).toContain(unknown);
  });

  it("opens no turn for an entry it does not know before the first turn", async () => {
    const unknown = { type: "future_thing", payload: 1 } as unknown as Entry;
    const { firings } = await simulateStream([unknown, ...sixTurns().flat()], {
      layers: [{ ...enabled, ...RULE }],
      model: WINDOW,
    });
    expect(firings.map((f) => [f.turn, f.from_turn, f.to_turn])).toEqual([
      [2, 0, 1],
      [3, 2, 2],
      [4, 3, 3],
      [5, 4, 4],
    ]);
  });

  it("gives the summarizer exactly the raw entries of the band's turns, config deltas included", async () => {
    const turns = sixTurns();
    const delta = configDelta({ assistant: { name: "x" } }, 11);
    (turns[1] as Entry[]).push(delta);
    const asked: Entry[][] = [];
    const { firings } = await simulateStream(turns.flat(), {
      layers: [{ ...enabled, ...RULE, rule: { ...RULE.rule, summary: {} } }],
      model: WINDOW,
      summarize: async (range, raw) => {
        asked.push([...raw]);
        return { text: `turns ${range.from_turn}-${range.to_turn}`, model: "m", latency_ms: 3 };
      },
    });
    expect(asked[0]).toEqual([...(turns[0] as Entry[]), ...(turns[1] as Entry[])]);
    expect(firings[0]?.summary).toEqual({ text: "turns 0-1", model: "m", latency_ms: 3 });
  });

  it("counts a compaction stored after later turns from the turn that stores it on", async () => {
    // A manual band stripping the reasoning of turns 0–1 (100 tokens each), stored in turn 3.
    const turns = sixTurns();
    (turns[3] as Entry[]).push(compaction(0, 1, 33, { reasoning: "strip" }));
    const estimates: number[] = [];
    await simulateStream(turns.flat(), {
      model: WINDOW,
      onTurn: (turn) => estimates.push(turn.estimated_tokens),
    });
    expect(estimates).toEqual([200, 400, 600, 600, 800, 1_000]);
  });

  it("stamps each band after every compaction in the stream, even those stamped after the turns", async () => {
    // Manual bands over turns 0 and 1 from clocks ahead of the turns', the later one stored first.
    const turns = sixTurns();
    (turns[0] as Entry[]).push(compaction(0, 0, 2_000, { reasoning: "strip" }));
    (turns[1] as Entry[]).push(compaction(1, 1, 1_000, { reasoning: "strip" }));
    const { firings } = await simulateStream(turns.flat(), {
      layers: [{ ...enabled, ...RULE }],
      model: WINDOW,
    });
    // 100 + 100 + 200 + 200 = 600 after turn 3; each band strips one turn (100 tokens).
    expect(firingsOf(firings)).toEqual([
      [3, 2, 2, 600, 500],
      [4, 3, 3, 700, 600],
      [5, 4, 4, 800, 700],
    ]);
    // One microsecond after the latest stamp before each band.
    expect(firings.map((f) => f.compaction.timestamp)).toEqual([
      at(2_000.000_001),
      at(2_000.000_002),
      at(2_000.000_003),
    ]);
  });

  it("estimates with the calibration it is given, and names it in each band", async () => {
    // 0.5 tokens a character plus 100: an 800-character turn, 500; 400 once stripped, 300.
    const { firings } = await simulateStream(sixTurns().flat(), {
      layers: [{ ...enabled, ...RULE }],
      model: WINDOW,
      calibration: { kind: "fixed", tokens_per_char: 0.5, overhead_tokens: 100 },
    });
    expect(firingsOf(firings)).toEqual([
      [2, 0, 1, 1_300, 900],
      [3, 2, 2, 1_300, 1_100],
      [4, 3, 3, 1_500, 1_300],
      [5, 4, 4, 1_700, 1_500],
    ]);
    expect(firings[0]?.compaction.trigger).toMatchObject({
      estimator: "calibrated",
      tokens_per_char: 0.5,
      overhead_tokens: 100,
    });
  });

  it("evaluates no turn in a stream without a conversation event, and passes its entries through", async () => {
    const delta = configDelta({ conversation: { compaction: { auto: enabled } } });
    const evaluated: number[] = [];
    const { firings, entries } = await simulateStream([delta], {
      model: WINDOW,
      onTurn: (turn) => evaluated.push(turn.turn),
    });
    expect(evaluated).toEqual([]);
    expect(firings).toEqual([]);
    expect(entries).toEqual([delta]);
  });

  it("names the turn a summary rule fired after when there is no summarizer", async () => {
    await expect(
      simulateStream(sixTurns().flat(), {
        layers: [{ ...enabled, ...RULE, rule: { ...RULE.rule, summary: {} } }],
        model: WINDOW,
      }),
    ).rejects.toThrow(
      expect.objectContaining({
        name: "SummaryRequiredError",
        message:
          "the auto rule summarizes and fired after turn 2: give a summarizer (a summary is never faked)",
      }),
    );
  });
});

describe("prepareStream", () => {
  it("keeps the auto layers of the stream's config deltas and how many precede each turn's end", () => {
    const turns = sixTurns();
    (turns[1] as Entry[]).push(
      configDelta({ conversation: { compaction: { auto: { trigger_ratio: 0.6 } } } }, 12),
    );
    (turns[4] as Entry[]).push(
      configDelta({ conversation: { compaction: { auto: { enabled: true } } } }, 42),
    );
    const prepared = prepareStream(turns.flat());
    expect(prepared.layers).toEqual([{ trigger_ratio: 0.6 }, { enabled: true }]);
    expect(prepared.boundaries.map((b) => b.layers)).toEqual([0, 1, 1, 1, 2, 2]);
  });
});

describe("evaluateStream on hand-made streams", () => {
  it("estimates with the calibration it is given", async () => {
    // 4,800 characters: 0.5 · 4,800 + 100 = 2,500; turns 0–4 stripped leave 2,800: 1,500.
    const step = await evaluateStream(sixTurns().flat(), {
      layers: [{ ...enabled, ...RULE }],
      model: WINDOW,
      calibration: { kind: "fixed", tokens_per_char: 0.5, overhead_tokens: 100 },
      nowMillis: 0,
    });
    if (step.kind !== "fire") throw new Error("expected a firing");
    expect(step.decision).toMatchObject({
      estimated_tokens: 2_500,
      range: { from_turn: 0, to_turn: 4 },
    });
    expect(step.band.estimated_tokens_after).toBe(1_500);
  });

  it("summarizes the raw entries of the range, leaving compactions out", async () => {
    const turns = sixTurns();
    const band = compaction(0, 0, 5, { tool_calls: { policy: "omit" } });
    (turns[1] as Entry[]).push(band);
    const asked: Entry[][] = [];
    const step = await evaluateStream(
      turns.flat(),
      {
        layers: [{ ...enabled, ...RULE, rule: { ...RULE.rule, summary: {} } }],
        model: WINDOW,
        nowMillis: 0,
      },
      async (range, raw) => {
        asked.push([...raw]);
        return { text: `turns ${range.from_turn}-${range.to_turn}`, model: "m", latency_ms: 3 };
      },
    );
    expect(step.kind).toBe("fire");
    expect(step.decision.range).toEqual({ from_turn: 1, to_turn: 4 });
    expect(asked).toEqual([
      turns
        .slice(1, 5)
        .flat()
        .filter((e) => e !== band),
    ]);
  });
});
