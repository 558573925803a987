import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateConversation } from "../test/helpers/conversation.ts";
import { estimateStream } from "./estimate.ts";
import type { Entry } from "./events.ts";
import { compactionsOf } from "./projection.ts";
import { evaluateStream, SummarizerRequiredError, simulateStream } from "./replay.ts";
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
      { numRuns: 60 },
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
    ).rejects.toBeInstanceOf(SummarizerRequiredError);
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
