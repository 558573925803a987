import { describe, expect, it } from "vitest";
import type { TriggerState } from "./auto-compaction.ts";
import { resolveAutoConfig } from "./config.ts";
import { conversationWarnings, WARNING_CODES } from "./warnings.ts";

/** Enabled, a 200,000-token window (threshold 150,000), 10,000 tokens of view: nothing to warn of. */
function state(overrides: Partial<TriggerState> = {}): TriggerState {
  return {
    config: resolveAutoConfig({ enabled: true }),
    turn_count: 12,
    after_last_compaction: 0,
    estimated_tokens: 10_000,
    context_window: 200_000,
    ...overrides,
  };
}

const codes = (warnings: readonly { code: string }[]) => warnings.map((w) => w.code);

describe("conversationWarnings", () => {
  it("lists the codes in one exported order", () => {
    expect(WARNING_CODES).toEqual([
      "auto_disabled",
      "context_window_unknown",
      "over_window",
      "still_over_threshold",
    ]);
  });

  it("warns of nothing for an enabled conversation under its threshold", () => {
    expect(conversationWarnings({ conversation: "c1", state: state() })).toEqual([]);
  });

  it("names the one call that enables compaction, keeping the conversation's own layer", () => {
    const warnings = conversationWarnings({
      conversation: "team/a b",
      state: state({ config: resolveAutoConfig({ trigger_ratio: 0.5 }) }),
      layer: { trigger_ratio: 0.5 },
    });
    expect(warnings).toEqual([
      {
        code: "auto_disabled",
        detail:
          'automatic compaction is off (the default): enable it with PUT /v1/conversations/team%2Fa%20b/config {"conversation":{"compaction":{"auto":{"trigger_ratio":0.5,"enabled":true}}}}',
      },
    ]);
  });

  it("names the layer that turned compaction off, when one did", () => {
    const [warning] = conversationWarnings({
      conversation: "c1",
      state: state({ config: resolveAutoConfig({ enabled: false }) }),
      disabled_by: "tenant",
    });
    expect(warning).toEqual({
      code: "auto_disabled",
      detail:
        'automatic compaction is off (the tenant\'s config turns it off): enable it with PUT /v1/conversations/c1/config {"conversation":{"compaction":{"auto":{"enabled":true}}}}',
    });
  });

  it("says how to give an unknown window, with the model's id when a turn named one", () => {
    expect(
      conversationWarnings({
        conversation: "c1",
        state: state({ context_window: undefined }),
        model_id: "my-model",
      }),
    ).toEqual([
      {
        code: "context_window_unknown",
        detail:
          'the context window of model "my-model" is unknown, so automatic compaction cannot fire: post each turn with `model.context_window` (the window in tokens), or add the model to the service\'s catalog (`MODEL_CATALOG`, e.g. {"my-model":128000})',
      },
    ]);
    expect(
      conversationWarnings({ conversation: "c1", state: state({ context_window: undefined }) }),
    ).toEqual([
      {
        code: "context_window_unknown",
        detail:
          "no turn names its model, so the context window is unknown and automatic compaction cannot fire: post each turn with `model: {id, context_window}` (the window in tokens)",
      },
    ]);
  });

  it("warns of a view past the window only with the reserve counted", () => {
    const config = resolveAutoConfig({ enabled: true, reserve_tokens: 2_000 });
    // 198,500 alone is inside the window; with the reserve, 200,500 is past it.
    expect(
      conversationWarnings({
        conversation: "c1",
        state: state({ estimated_tokens: 198_500, config: resolveAutoConfig({ enabled: true }) }),
      }),
    ).toEqual([]);
    expect(
      conversationWarnings({
        conversation: "c1",
        state: state({ estimated_tokens: 198_500, config }),
      }),
    ).toEqual([
      {
        code: "over_window",
        detail:
          "the view is 200500 tokens (estimate 198500 plus reserve 2000), past the 200000-token context window: the next call may be refused or truncated; compact it now (POST …/compactions) or keep fewer turns (`rule.keep_last`)",
      },
    ]);
  });

  it("warns when the last band fired and left the view over the threshold", () => {
    const over = state({ estimated_tokens: 150_000.25 });
    expect(
      conversationWarnings({ conversation: "c1", state: over, last_outcome: "fired" }),
    ).toEqual([
      {
        code: "still_over_threshold",
        detail:
          "the last automatic band left the view at 150001 tokens (estimate 150001 plus reserve 0), over the threshold of 150000 (trigger_ratio 0.75 of the window): the rule keeps too much; lower `rule.keep_last`, strip or summarize more",
      },
    ]);
    // At the threshold exactly is not over it (D50's test is strict); a skip is no band.
    const at = state({ estimated_tokens: 150_000 });
    expect(conversationWarnings({ conversation: "c1", state: at, last_outcome: "fired" })).toEqual(
      [],
    );
    expect(
      conversationWarnings({ conversation: "c1", state: over, last_outcome: "skipped" }),
    ).toEqual([]);
  });

  it("gives every warning that holds, in the codes' order", () => {
    const warnings = conversationWarnings({
      conversation: "c1",
      state: state({
        config: resolveAutoConfig({}),
        estimated_tokens: 800_000,
        context_window: 200_000,
      }),
      last_outcome: "fired",
    });
    expect(codes(warnings)).toEqual(["auto_disabled", "over_window", "still_over_threshold"]);
  });

  it("reads the estimate through the calibrated estimator, as the trigger does", () => {
    // 100,000 D50 tokens are 400,000 chars: at 0.5 tokens a char, 200,000 tokens plus 100 overhead.
    const calibrated = state({
      estimated_tokens: 100_000,
      calibration: { kind: "fixed", tokens_per_char: 0.5, overhead_tokens: 100 },
    });
    expect(conversationWarnings({ conversation: "c1", state: calibrated })).toEqual([
      {
        code: "over_window",
        detail:
          "the view is 200100 tokens (estimate 200100 plus reserve 0), past the 200000-token context window: the next call may be refused or truncated; compact it now (POST …/compactions) or keep fewer turns (`rule.keep_last`)",
      },
    ]);
  });
});
