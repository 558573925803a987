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
  toolCallPolicyOf,
} from "./config.ts";

function issuesOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("auto configuration", () => {
  it("defaults to D50's values", () => {
    expect(resolveAutoConfig()).toEqual({
      enabled: false,
      trigger_ratio: 0.75,
      min_turns: 5,
      rule: { keep_first: 1, keep_last: 3, reasoning: "strip", tool_calls: "strip", summary: null },
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

  it("names the key of every invalid value", () => {
    expect(issuesOf(() => parseAutoLayer({ trigger_ratio: 0 }))).toEqual([
      "conversation.compaction.auto.trigger_ratio: must be greater than 0",
    ]);
    expect(issuesOf(() => parseAutoLayer({ trigger_ratio: 1.5 }))[0]).toMatch(
      /^conversation\.compaction\.auto\.trigger_ratio: /,
    );
    expect(issuesOf(() => parseAutoLayer({ min_turns: 2.5 }))[0]).toMatch(
      /^conversation\.compaction\.auto\.min_turns: must be a whole number/,
    );
    expect(issuesOf(() => parseAutoLayer({ enabled: "yes" }))[0]).toMatch(
      /^conversation\.compaction\.auto\.enabled: must be true or false/,
    );
    expect(issuesOf(() => parseAutoLayer({ rule: { tool_calls: "shred" } }))[0]).toMatch(
      /^conversation\.compaction\.auto\.rule\.tool_calls: /,
    );
    expect(issuesOf(() => parseAutoLayer({ rule: { keep_last: -1 } }))[0]).toMatch(
      /rule\.keep_last: must be 0 or more/,
    );
    expect(issuesOf(() => parseAutoLayer({ rule: { summary: { model: { id: "" } } } }))[0]).toMatch(
      /rule\.summary\.model\.id: must not be empty/,
    );
  });

  it("rejects unknown keys, naming them and the known ones", () => {
    const [issue] = issuesOf(() => parseAutoLayer({ trigger_ration: 0.5 }));
    expect(issue).toMatch(/conversation\.compaction\.auto\.trigger_ration: unknown key/);
    expect(issue).toMatch(/trigger_ratio/);
    expect(issuesOf(() => parseAutoLayer({ rule: { keepLast: 1 } }))[0]).toMatch(
      /auto\.rule\.keepLast: unknown key/,
    );
  });

  it("rejects trees of the wrong shape", () => {
    expect(issuesOf(() => parseConfigTree([]))[0]).toMatch(/rooted at "conversation"/);
    expect(issuesOf(() => parseConfigTree({ conversation: 1 }))).toEqual([
      "conversation: must be an object",
    ]);
    expect(issuesOf(() => parseConfigTree({ conversation: { compaction: "x" } }))).toEqual([
      "conversation.compaction: must be an object",
    ]);
  });

  it("collects layers from config deltas, naming the entry of a bad one", () => {
    const good = configDelta({ conversation: { compaction: { auto: { enabled: true } } } });
    const unrelated = configDelta({ assistant: { name: "x" } });
    expect(streamConfigLayers([good, unrelated])).toEqual([{ enabled: true }]);
    const bad = configDelta({ conversation: { compaction: { auto: { min_turns: -2 } } } });
    expect(issuesOf(() => streamConfigLayers([good, bad]))[0]).toMatch(
      /^entry 1 \(config_delta\): conversation\.compaction\.auto\.min_turns/,
    );
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
