import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compaction } from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import {
  buildBand,
  type Decision,
  decide,
  type FiringContext,
  stepAutoCompaction,
  summaryAudit,
  type TriggerState,
} from "./auto-compaction.ts";
import { type AutoConfig, resolveAutoConfig } from "./config.ts";
import { estimateStream } from "./estimate.ts";
import type { Compaction } from "./events.ts";
import { evaluateStream } from "./replay.ts";
import { afterLastCompaction } from "./rules.ts";
import { timestampNanos } from "./timestamp.ts";

const enabled: AutoConfig = resolveAutoConfig({ enabled: true });
const NOW = Date.UTC(2026, 5, 15);

type Input = Omit<TriggerState, "after_last_compaction"> &
  Omit<FiringContext, "compactions"> & { readonly compactions: readonly Compaction[] };

function input(overrides: Partial<Input>): Input {
  return {
    config: enabled,
    turn_count: 13,
    compactions: [],
    estimated_tokens: 160_000,
    context_window: 200_000,
    nowMillis: NOW,
    estimateWith: () => 40_000,
    ...overrides,
  };
}

type Outcome = Decision & { compaction?: Compaction; estimated_tokens_after?: number };

const stateOf = (inputs: Input): TriggerState => ({
  ...inputs,
  after_last_compaction: afterLastCompaction(inputs.compactions),
});

/** Decides and, on a mechanical firing, builds the band, as the compactor does. */
function run(inputs: Input): Outcome {
  const state = stateOf(inputs);
  const decision = decide(state);
  return decision.fire ? { ...decision, ...buildBand(state, decision, inputs) } : decision;
}

describe("decide", () => {
  it("fires with the D50 worked example's first band after turn 12", () => {
    const decision = run(input({}));
    expect(decision).toMatchObject({
      fire: true,
      reason: "over_threshold",
      range: { from_turn: 1, to_turn: 9 },
      threshold: 150_000,
      estimated_tokens: 160_000,
      estimated_tokens_after: 40_000,
    });
    expect(decision.compaction).toMatchObject({
      type: "compaction",
      source: "auto",
      from_turn: 1,
      to_turn: 9,
      reasoning: "strip",
      tool_calls: { policy: "strip", request: true, response: true },
      trigger: {
        turn: 12,
        estimated_tokens: 160_000,
        threshold: 150_000,
        context_window: 200_000,
        estimated_tokens_after: 40_000,
      },
    });
    expect(decision.compaction?.summary).toBeUndefined();
  });

  it("fires with the D50 worked example's second band [10, 17] after turn 20", () => {
    const first = run(input({})).compaction as Compaction;
    const decision = run(input({ turn_count: 21, compactions: [first] }));
    expect(decision.range).toEqual({ from_turn: 10, to_turn: 17 });
    expect(decision.compaction?.trigger?.turn).toBe(20);
  });

  it("does not fire exactly at the threshold (strict >)", () => {
    expect(run(input({ estimated_tokens: 150_000 }))).toMatchObject({
      fire: false,
      reason: "under_threshold",
    });
    expect(run(input({ estimated_tokens: 150_000.25 })).fire).toBe(true);
  });

  it("respects min_turns at and above the bound", () => {
    const config = resolveAutoConfig({
      enabled: true,
      min_turns: 5,
      rule: { keep_first: 0, keep_last: 0 },
    });
    expect(run(input({ config, turn_count: 5 }))).toMatchObject({
      fire: false,
      reason: "min_turns",
    });
    expect(run(input({ config, turn_count: 6 }))).toMatchObject({
      fire: true,
      range: { from_turn: 0, to_turn: 5 },
    });
  });

  it("starts the next auto band after a manual band ending at 15", () => {
    const manual = compaction(2, 15, 10, { reasoning: "strip" });
    const decision = run(input({ turn_count: 25, compactions: [manual] }));
    expect(decision.range).toEqual({ from_turn: 16, to_turn: 21 });
  });

  it("skips when disabled, with an unknown window, or with an empty range", () => {
    expect(run(input({ config: resolveAutoConfig({}) })).reason).toBe("disabled");
    expect(run(input({ context_window: undefined }))).toMatchObject({
      fire: false,
      reason: "context_window_unknown",
      threshold: null,
    });
    const band = compaction(1, 9, 10, { reasoning: "strip" });
    expect(run(input({ compactions: [band] }))).toMatchObject({
      fire: false,
      reason: "empty_range",
      range: null,
    });
  });

  it("fires on a rolling range of exactly one turn", () => {
    // keep_first 1 and keep_last 3 leave turn 1 alone between the protected ends of 5 turns.
    const config = resolveAutoConfig({ enabled: true, min_turns: 2 });
    expect(run(input({ config, turn_count: 5 }))).toMatchObject({
      fire: true,
      range: { from_turn: 1, to_turn: 1 },
    });
    expect(run(input({ config, turn_count: 4 }))).toMatchObject({
      fire: false,
      reason: "empty_range",
    });
  });

  it("honours trigger_ratio", () => {
    const config = resolveAutoConfig({ enabled: true, trigger_ratio: 0.5 });
    expect(run(input({ config, estimated_tokens: 100_001 })).fire).toBe(true);
    expect(run(input({ config, estimated_tokens: 100_000 })).fire).toBe(false);
  });

  it("stamps the band strictly after every existing compaction, even with a slow clock", () => {
    const future = {
      ...compaction(0, 0, 0, { reasoning: "strip" }),
      timestamp: "2030-01-01T00:00:00.000000Z",
    };
    const decision = run(input({ turn_count: 20, compactions: [future] }));
    expect(timestampNanos(decision.compaction?.timestamp ?? "")).toBeGreaterThan(
      timestampNanos(future.timestamp),
    );
  });

  it("asks for a summary instead of building a band for a summary rule", async () => {
    const config = resolveAutoConfig({
      enabled: true,
      rule: { summary: { instructions: "be brief" } },
    });
    const inputs = input({ config });
    let firingRead = false;
    const firing = () => {
      firingRead = true;
      return inputs;
    };
    const pending = await stepAutoCompaction({ state: stateOf(inputs), firing });
    expect(pending).toMatchObject({ kind: "needs_summary", decision: { fire: true } });
    expect(firingRead).toBe(false);

    const asked: unknown[] = [];
    const done = await stepAutoCompaction({
      state: stateOf(inputs),
      firing,
      summarize: async (range, rule) => {
        asked.push({ range, rule });
        return { text: "the summary", model: "m1", input_tokens: 900, latency_ms: 42 };
      },
    });
    expect(asked).toEqual([
      { range: { from_turn: 1, to_turn: 9 }, rule: { instructions: "be brief" } },
    ]);
    if (done.kind !== "fire") throw new Error(`expected a firing, got ${done.kind}`);
    expect(done.band.compaction).toStrictEqual({
      type: "compaction",
      timestamp: "2026-06-15T00:00:00.000000Z",
      from_turn: 1,
      to_turn: 9,
      source: "auto",
      summary: { summary: "the summary" },
      trigger: {
        turn: 12,
        estimated_tokens: 160_000,
        threshold: 150_000,
        context_window: 200_000,
        estimated_tokens_after: 40_000,
        summary_model: "m1",
        summary_input_tokens: 900,
        summary_latency_ms: 42,
      },
    });
    expect(done.summary).toEqual({
      text: "the summary",
      model: "m1",
      input_tokens: 900,
      latency_ms: 42,
    });
  });

  it("audits a summary's model and latency, and its tokens only when reported", () => {
    expect(summaryAudit({ text: "s", model: "m1", latency_ms: 7 })).toStrictEqual({
      summary_model: "m1",
      summary_latency_ms: 7,
    });
    expect(
      summaryAudit({ text: "s", model: "m1", input_tokens: 0, output_tokens: 12, latency_ms: 7 }),
    ).toStrictEqual({
      summary_model: "m1",
      summary_input_tokens: 0,
      summary_output_tokens: 12,
      summary_latency_ms: 7,
    });
  });

  it("reads nothing beyond the state when it skips", async () => {
    const step = await stepAutoCompaction({
      state: stateOf(input({ estimated_tokens: 10 })),
      firing: () => {
        throw new Error("the firing context must not be read on a skip");
      },
    });
    expect(step).toMatchObject({ kind: "skip", decision: { reason: "under_threshold" } });
  });
});

describe("evaluateStream", () => {
  it("reports estimated_tokens_after equal to the estimate of the stream with the band appended (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 6, max: 40 }),
        async (seed, turns) => {
          const stream = generateConversation({ seed, turns });
          const tokens = estimateStream(stream).estimated_tokens;
          const step = await evaluateStream(stream, {
            layers: [{ enabled: true, trigger_ratio: 0.5 }],
            model: { context_window: Math.max(1, Math.floor(tokens)) },
            nowMillis: NOW,
          });
          expect(step.decision.estimated_tokens).toBe(tokens);
          if (step.kind === "fire") {
            const after = estimateStream([...stream, step.band.compaction]).estimated_tokens;
            expect(step.band.estimated_tokens_after).toBe(after);
            expect(step.band.compaction.trigger?.estimated_tokens_after).toBe(after);
          } else {
            expect(step.decision.reason).toBe("empty_range");
          }
        },
      ),
      propertyRuns(60),
    );
  });

  it("uses the catalog when only the model id is known, and says so when it is not", async () => {
    const stream = generateConversation({ seed: 1, turns: 8 });
    const known = await evaluateStream(stream, {
      model: { id: "anthropic/claude-sonnet-4-5" },
      nowMillis: NOW,
    });
    expect(known.decision.context_window).toBe(200_000);
    const unknown = await evaluateStream(stream, {
      layers: [{ enabled: true }],
      model: { id: "my-local-model" },
      nowMillis: NOW,
    });
    expect(unknown.decision.reason).toBe("context_window_unknown");
  });

  it("applies auto config from config deltas in the stream", async () => {
    const stream = [
      {
        type: "config_delta",
        timestamp: "2026-01-01T00:00:00Z",
        delta: { conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.01 } } } },
      },
      ...generateConversation({ seed: 3, turns: 12 }),
    ] as Parameters<typeof evaluateStream>[0];
    const step = await evaluateStream(stream, {
      model: { context_window: 10_000 },
      nowMillis: NOW,
    });
    expect(step.decision.fire).toBe(true);
  });
});
