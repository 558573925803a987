import { describe, expect, it } from "vitest";
import { configDelta } from "../test/helpers/builders.ts";
import {
  ConfigError,
  DEFAULT_AUTO_CONFIG,
  mergeLayers,
  parseAutoLayer,
  parseConfigTree,
  resolveAutoConfig,
  streamConfigLayers,
  toConfigTree,
  toolCallPolicyOf,
} from "./config.ts";
import type { Entry } from "./events.ts";

function issuesOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.messages;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const EXAMPLE = '{"conversation":{"compaction":{"auto":{"enabled":true}}}}';

describe("auto configuration", () => {
  it("defaults to D50's values", () => {
    expect(resolveAutoConfig()).toEqual({
      enabled: false,
      trigger_ratio: 0.75,
      min_turns: 5,
      rule: { keep_first: 1, keep_last: 3, reasoning: "strip", tool_calls: "strip", summary: null },
      estimator: "auto",
      reserve_tokens: 0,
      min_gain_tokens: 0,
      min_band_turns: 1,
      when: "turn",
      idle_seconds: 300,
      hard_ratio: 0.95,
    });
    expect(resolveAutoConfig()).toEqual(DEFAULT_AUTO_CONFIG);
  });

  it("merges layers with later ones winning, key by key", () => {
    const config = resolveAutoConfig(
      { enabled: true, rule: { keep_last: 5, tool_calls: "omit" } },
      { trigger_ratio: 0.5, rule: { keep_last: 2 } },
    );
    expect(config).toMatchObject({
      enabled: true,
      trigger_ratio: 0.5,
      min_turns: 5,
      rule: { keep_first: 1, keep_last: 2, tool_calls: "omit" },
    });
  });

  it("keeps an earlier layer's value where a later layer leaves the key unset", () => {
    expect(
      mergeLayers(
        {
          enabled: true,
          trigger_ratio: 0.5,
          min_turns: 2,
          rule: { keep_first: 0, keep_last: 4, tool_calls: "omit" },
        },
        { rule: { keep_last: undefined } },
        {},
      ),
    ).toEqual({
      enabled: true,
      trigger_ratio: 0.5,
      min_turns: 2,
      rule: { keep_first: 0, keep_last: 4, tool_calls: "omit" },
    });
    expect(mergeLayers({ enabled: true, min_turns: 2 }, { enabled: false, min_turns: 0 })).toEqual({
      enabled: false,
      min_turns: 0,
    });
  });

  it("sets no key a layer leaves out, not even to undefined (the firing keys too)", () => {
    expect(
      mergeLayers({ when: "idle", idle_seconds: 60, hard_ratio: 0.9 }, { enabled: true }),
    ).toStrictEqual({ when: "idle", idle_seconds: 60, hard_ratio: 0.9, enabled: true });
  });

  it("lets a later layer clear a rule policy with null", () => {
    const config = resolveAutoConfig(
      { rule: { summary: { instructions: "x" } } },
      { rule: { reasoning: null, summary: null } },
    );
    expect(config.rule.reasoning).toBeNull();
    expect(config.rule.summary).toBeNull();
    expect(mergeLayers({ rule: { keep_first: 4 } }, {}).rule?.keep_first).toBe(4);
  });

  it("rejects a resolved rule with no policy at all, naming the key", () => {
    expect(
      issuesOf(() => resolveAutoConfig({ rule: { reasoning: null, tool_calls: null } })),
    ).toEqual([
      "conversation.compaction.auto.rule: sets no policy (reasoning, tool_calls and summary are all off); keep at least one",
    ]);
    expect(
      resolveAutoConfig({ rule: { reasoning: null, tool_calls: null, summary: {} } }).rule.summary,
    ).toEqual({});
  });

  it("reads the auto layer from a D50 tree and ignores the rest of the config", () => {
    expect(
      parseConfigTree({
        assistant: { model: "x" },
        conversation: { compaction: { auto: { enabled: true } } },
      }),
    ).toEqual({ enabled: true });
    expect(parseConfigTree({ conversation: { title: "t" } })).toEqual({});
  });

  it.each([
    [{ enabled: "yes" }, "enabled: must be true or false"],
    [{ trigger_ratio: 0 }, "trigger_ratio: must be greater than 0"],
    [{ trigger_ratio: 1.5 }, "trigger_ratio: must be at most 1"],
    [{ trigger_ratio: "0.5" }, "trigger_ratio: must be a number in (0, 1]"],
    [{ min_turns: 2.5 }, "min_turns: must be a whole number of turns"],
    [{ min_turns: "5" }, "min_turns: must be a whole number of turns"],
    [{ min_turns: -1 }, "min_turns: must be 0 or more"],
    [{ estimator: "tiktoken" }, 'estimator: must be "chars", "calibrated" or "auto"'],
    [{ reserve_tokens: -1 }, "reserve_tokens: must be 0 or more"],
    [{ reserve_tokens: "8k" }, "reserve_tokens: must be a number of tokens"],
    [{ min_gain_tokens: -0.5 }, "min_gain_tokens: must be 0 or more"],
    [{ min_gain_tokens: 1e300 }, "min_gain_tokens: must be at most 9007199254740991"],
    [{ min_band_turns: 0 }, "min_band_turns: must be 1 or more"],
    [{ min_band_turns: 1.5 }, "min_band_turns: must be a whole number of turns"],
    [{ rule: { keep_first: 0.5 } }, "rule.keep_first: must be a whole number of turns"],
    [{ rule: { keep_last: -1 } }, "rule.keep_last: must be 0 or more"],
    [{ rule: { reasoning: "keep" } }, 'rule.reasoning: Invalid input: expected "strip"'],
    [
      { rule: { tool_calls: "shred" } },
      'rule.tool_calls: Invalid option: expected one of "strip"|"strip-requests"|"strip-responses"|"omit"',
    ],
    [{ rule: { summary: { instructions: "" } } }, "rule.summary.instructions: must not be empty"],
    [{ rule: { summary: { model: { id: "" } } } }, "rule.summary.model.id: must not be empty"],
  ])("names the full key of an invalid value: %j", (layer, issue) => {
    expect(issuesOf(() => parseAutoLayer(layer))).toEqual([
      `conversation.compaction.auto.${issue}`,
    ]);
  });

  it("puts every issue in the error's message", () => {
    let thrown: unknown;
    try {
      parseAutoLayer({ trigger_ratio: 0, min_turns: -1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({
      name: "ConfigError",
      status: 400,
      type: "/problems/invalid-config",
      message:
        "conversation.compaction.auto.trigger_ratio: must be greater than 0; conversation.compaction.auto.min_turns: must be 0 or more",
    });
  });

  it("accepts every valid value at its bounds", () => {
    const layer = {
      enabled: false,
      trigger_ratio: 1,
      min_turns: 0,
      rule: {
        keep_first: 0,
        keep_last: 0,
        reasoning: "strip",
        tool_calls: "strip-requests",
        summary: { instructions: "Keep every decision.", model: { id: "m" } },
      },
      estimator: "calibrated",
      reserve_tokens: 0,
      min_gain_tokens: 0,
      min_band_turns: 1,
    };
    expect(parseAutoLayer(layer)).toEqual(layer);
  });

  it("merges and resolves the estimator and the guards key by key", () => {
    const layers = [
      { estimator: "chars", reserve_tokens: 8_000, min_band_turns: 4 },
      { estimator: "calibrated", min_gain_tokens: 1_500.5 },
      { min_band_turns: undefined },
    ] as const;
    expect(mergeLayers(...layers)).toEqual({
      estimator: "calibrated",
      reserve_tokens: 8_000,
      min_gain_tokens: 1_500.5,
      min_band_turns: 4,
    });
    expect(resolveAutoConfig(...layers)).toMatchObject({
      estimator: "calibrated",
      reserve_tokens: 8_000,
      min_gain_tokens: 1_500.5,
      min_band_turns: 4,
    });
  });

  it.each([["strip"], ["strip-requests"], ["strip-responses"], ["omit"]])(
    "accepts the tool call mode %s",
    (mode) => {
      expect(parseAutoLayer({ rule: { tool_calls: mode } })).toEqual({
        rule: { tool_calls: mode },
      });
    },
  );

  it.each([
    [
      { trigger_ration: 0.5 },
      "trigger_ration",
      "enabled, trigger_ratio, min_turns, rule, estimator, reserve_tokens, min_gain_tokens, min_band_turns, when, idle_seconds, hard_ratio",
    ],
    [
      { rule: { keepLast: 1 } },
      "rule.keepLast",
      "keep_first, keep_last, reasoning, tool_calls, summary",
    ],
    [{ rule: { summary: { prompt: "x" } } }, "rule.summary.prompt", "instructions, model"],
    [{ rule: { summary: { model: { id: "m", name: "m" } } } }, "rule.summary.model.name", "id"],
  ])("rejects an unknown key, naming it and the known ones: %j", (layer, key, known) => {
    expect(issuesOf(() => parseAutoLayer(layer))).toEqual([
      `conversation.compaction.auto.${key}: unknown key (known: ${known})`,
    ]);
  });

  it("names each of several unknown keys in full", () => {
    expect(issuesOf(() => parseAutoLayer({ rule: { keepLast: 1, keepFirst: 1 } }))).toEqual([
      "conversation.compaction.auto.rule.keepLast: unknown key (known: keep_first, keep_last, reasoning, tool_calls, summary)",
      "conversation.compaction.auto.rule.keepFirst: unknown key (known: keep_first, keep_last, reasoning, tool_calls, summary)",
    ]);
  });

  it.each([[[]], [null], ["x"]])("rejects a tree that is not an object: %j", (tree) => {
    expect(issuesOf(() => parseConfigTree(tree))).toEqual([
      `configuration must be an object rooted at "conversation" (e.g. ${EXAMPLE})`,
    ]);
  });

  it.each([
    [{ conversation: 1 }, "conversation: must be an object"],
    [{ conversation: null }, "conversation: must be an object"],
    [{ conversation: [] }, "conversation: must be an object"],
    [{ conversation: { compaction: "x" } }, "conversation.compaction: must be an object"],
    [
      { conversation: { compaction: { auto: 1 } } },
      "conversation.compaction.auto: Invalid input: expected object, received number",
    ],
  ])("rejects a tree with a non-object at a key, naming it: %j", (tree, issue) => {
    expect(issuesOf(() => parseConfigTree(tree))).toEqual([issue]);
    expect(issuesOf(() => parseConfigTree(tree, { strict: true }))).toEqual([issue]);
  });

  it("finds no auto layer in a tree that stops short of one", () => {
    expect(parseConfigTree({})).toEqual({});
    expect(parseConfigTree({ conversation: {} })).toEqual({});
    expect(parseConfigTree({ conversation: { compaction: {} } })).toEqual({});
  });

  it("accepts exactly the auto tree in strict mode", () => {
    expect(
      parseConfigTree(
        { conversation: { compaction: { auto: { enabled: true } } } },
        { strict: true },
      ),
    ).toEqual({ enabled: true });
  });

  it.each([
    [{}, `conversation: missing (e.g. ${EXAMPLE})`],
    [{ conversation: {} }, `conversation.compaction: missing (e.g. ${EXAMPLE})`],
    [
      { conversation: { compaction: {} } },
      `conversation.compaction.auto: missing (e.g. ${EXAMPLE})`,
    ],
  ])("in strict mode, names the first missing key of %j", (tree, issue) => {
    expect(issuesOf(() => parseConfigTree(tree, { strict: true }))).toEqual([issue]);
  });

  it("in strict mode, rejects every other key, naming it and the one that belongs", () => {
    expect(
      issuesOf(() =>
        parseConfigTree({ enabled: true, assistant: {}, conversation: {} }, { strict: true }),
      ),
    ).toEqual([
      `enabled: unknown key (only "conversation" belongs here, e.g. ${EXAMPLE})`,
      `assistant: unknown key (only "conversation" belongs here, e.g. ${EXAMPLE})`,
    ]);
    expect(
      issuesOf(() =>
        parseConfigTree(
          { conversation: { title: "t", compaction: { auto: {} } } },
          { strict: true },
        ),
      ),
    ).toEqual([
      `conversation.title: unknown key (only "compaction" belongs here, e.g. ${EXAMPLE})`,
    ]);
    expect(
      issuesOf(() =>
        parseConfigTree(
          { conversation: { compaction: { auto: {}, manual: {} } } },
          { strict: true },
        ),
      ),
    ).toEqual([
      `conversation.compaction.manual: unknown key (only "auto" belongs here, e.g. ${EXAMPLE})`,
    ]);
  });

  it("wraps a layer in the D50 tree, which strict parsing reads back", () => {
    const layer = { enabled: true, rule: { keep_last: 2, tool_calls: "omit" as const } };
    expect(toConfigTree(layer)).toEqual({
      conversation: {
        compaction: { auto: { enabled: true, rule: { keep_last: 2, tool_calls: "omit" } } },
      },
    });
    expect(parseConfigTree(toConfigTree(layer), { strict: true })).toEqual({
      enabled: true,
      rule: { keep_last: 2, tool_calls: "omit" },
    });
  });

  it("collects layers from config deltas, naming the entry of a bad one", () => {
    const good = configDelta({ conversation: { compaction: { auto: { enabled: true } } } });
    const unrelated = configDelta({ assistant: { name: "x" } });
    expect(streamConfigLayers([good, unrelated])).toEqual([{ enabled: true }]);
    const bad = configDelta({ conversation: { compaction: { auto: { min_turns: -2 } } } });
    expect(issuesOf(() => streamConfigLayers([good, bad]))).toEqual([
      "entry 1 (config_delta): conversation.compaction.auto.min_turns: must be 0 or more",
    ]);
    expect(issuesOf(() => streamConfigLayers([configDelta({ conversation: 1 })]))).toEqual([
      "entry 0 (config_delta): conversation: must be an object",
    ]);
  });

  it("takes layers from config deltas only, and none from a delta that sets nothing", () => {
    const auto = { conversation: { compaction: { auto: { enabled: true } } } };
    const other: Entry = { type: "settings_delta", timestamp: "2025-01-01T00:00:00Z", delta: auto };
    const empty: Entry = { ...configDelta({}), delta: undefined };
    expect(streamConfigLayers([other, empty, configDelta({})])).toEqual([]);
  });

  it("maps tool call modes to stored policies", () => {
    expect(toolCallPolicyOf("strip")).toEqual({ policy: "strip", request: true, response: true });
    expect(toolCallPolicyOf("strip-requests")).toEqual({
      policy: "strip",
      request: true,
      response: false,
    });
    expect(toolCallPolicyOf("strip-responses")).toEqual({
      policy: "strip",
      request: false,
      response: true,
    });
    expect(toolCallPolicyOf("omit")).toEqual({ policy: "omit" });
  });
});

describe("bounded settings", () => {
  it("refuse a summary model id past 256 characters and instructions past 16,384, saying how long they were", () => {
    expect(
      issuesOf(() => parseAutoLayer({ rule: { summary: { model: { id: "m".repeat(257) } } } })),
    ).toEqual([
      "conversation.compaction.auto.rule.summary.model.id: must be at most 256 characters (got 257)",
    ]);
    expect(parseAutoLayer({ rule: { summary: { model: { id: "m".repeat(256) } } } })).toEqual({
      rule: { summary: { model: { id: "m".repeat(256) } } },
    });
    expect(
      issuesOf(() => parseAutoLayer({ rule: { summary: { instructions: "i".repeat(16_385) } } })),
    ).toEqual([
      "conversation.compaction.auto.rule.summary.instructions: must be at most 16384 characters (got 16385)",
    ]);
  });

  it("list each issue of a config error as a located problem", () => {
    let thrown: unknown;
    try {
      parseAutoLayer({ trigger_ratio: 0, min_turns: -1 });
    } catch (error) {
      thrown = error;
    }
    expect((thrown as ConfigError).problemExtensions()).toEqual({
      errors: [
        { detail: "conversation.compaction.auto.trigger_ratio: must be greater than 0" },
        { detail: "conversation.compaction.auto.min_turns: must be 0 or more" },
      ],
    });
  });
});
