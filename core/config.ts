/**
 * `conversation.compaction.auto` (D50 "What the user configures"): the schema
 * of one configuration layer, the built-in defaults, and the layered merge
 * (later layers win; the service's order of layers is `effectiveConfig` in
 * functions/conversations/state.ts). Every error names the full key, e.g.
 * `conversation.compaction.auto.trigger_ratio`.
 */
import * as z from "zod";
import { InvalidInputError, PROBLEM_VARIANTS } from "./errors.ts";
import type { ConfigDelta, Entry, ToolCallPolicy } from "./events.ts";
import { issueLines, joinIssues } from "./issues.ts";

/** The key under which D50 places automatic compaction. */
export const AUTO_CONFIG_KEY = "conversation.compaction.auto";

/** Tool call modes of a rule, as strings for config ergonomics (RFD 064). */
export const ToolCallMode = z.enum(["strip", "strip-requests", "strip-responses", "omit"]);

/** The longest model id (a turn's model, a summary's model), in UTF-16 code units. */
export const MAX_MODEL_ID_LENGTH = 256;
/** The longest summary instructions: a config is stored in one DynamoDB item (400 KB). */
export const MAX_INSTRUCTIONS_LENGTH = 16_384;

/** A non-empty string of at most `max` characters (UTF-16 code units); the bound is in the schema's `maxLength`. */
export function boundedText(max: number) {
  return z
    .string()
    .min(1, "must not be empty")
    .max(max, {
      error: (issue) => `must be at most ${max} characters (got ${(issue.input as string).length})`,
    });
}

/** The summarizer model of a rule's `summary` block. */
const SummaryModel = z.strictObject({ id: boundedText(MAX_MODEL_ID_LENGTH) });

/** The summarizer settings of a rule: a `summary` block makes a rule summarize. */
export const SummaryRuleConfig = z.strictObject({
  instructions: boundedText(MAX_INSTRUCTIONS_LENGTH).optional(),
  model: SummaryModel.optional(),
});

// The number's error also names a fraction (and a number too large to be
// whole), so `int()` needs no message of its own.
const turnsToKeep = z
  .number({ error: "must be a whole number of turns" })
  .int()
  .nonnegative("must be 0 or more");

/**
 * How the trigger turns characters into tokens (docs/architecture.md §5):
 * `chars` is D50's chars / 4; `calibrated` fits tokens = a·chars + b to the
 * turns' reported usage; `auto` is `calibrated` once enough turns carry usage.
 */
export const Estimator = z.enum(["chars", "calibrated", "auto"], {
  error: 'must be "chars", "calibrated" or "auto"',
});

// A number of tokens: real, as the estimate is never rounded.
const tokenCount = z
  .number({ error: "must be a number of tokens" })
  .nonnegative("must be 0 or more")
  .max(Number.MAX_SAFE_INTEGER, "must be at most 9007199254740991");

/**
 * When a firing below `hard_ratio` happens (issue 29): `turn` right after the
 * turn that crosses the threshold (D50); `idle` once the conversation has
 * rested `idle_seconds`, when the prompt cache is cold anyway.
 */
export const FiringWhen = z.enum(["turn", "idle"], { error: 'must be "turn" or "idle"' });

/** The shortest and longest rest `idle_seconds` accepts. */
export const IDLE_SECONDS_RANGE = { min: 30, max: 3600 } as const;

const ratio = z
  .number({ error: "must be a number in (0, 1]" })
  .gt(0, "must be greater than 0")
  .lte(1, "must be at most 1");

/** One layer of `auto.rule`: every key optional. */
export const RuleLayer = z.strictObject({
  keep_first: turnsToKeep.optional(),
  keep_last: turnsToKeep.optional(),
  reasoning: z.enum(["strip"]).nullable().optional(),
  tool_calls: ToolCallMode.nullable().optional(),
  summary: SummaryRuleConfig.nullable().optional(),
});

/** One layer of `conversation.compaction.auto`: every key optional. */
export const AutoConfigLayer = z.strictObject({
  enabled: z.boolean({ error: "must be true or false" }).optional(),
  trigger_ratio: ratio.optional(),
  min_turns: turnsToKeep.optional(),
  rule: RuleLayer.optional(),
  estimator: Estimator.optional(),
  reserve_tokens: tokenCount.optional(),
  min_gain_tokens: tokenCount.optional(),
  min_band_turns: z
    .number({ error: "must be a whole number of turns" })
    .int()
    .min(1, "must be 1 or more")
    .optional(),
  when: FiringWhen.optional(),
  idle_seconds: z
    .number({ error: "must be a whole number of seconds" })
    .int()
    .min(IDLE_SECONDS_RANGE.min, `must be at least ${IDLE_SECONDS_RANGE.min}`)
    .max(IDLE_SECONDS_RANGE.max, `must be at most ${IDLE_SECONDS_RANGE.max}`)
    .optional(),
  hard_ratio: ratio.optional(),
});

/** The parsed value of the `Estimator` schema. */
export type EstimatorSetting = z.infer<typeof Estimator>;
/** The parsed value of the `FiringWhen` schema. */
export type FiringWhen = z.infer<typeof FiringWhen>;
/** The parsed value of the `ToolCallMode` schema. */
export type ToolCallMode = z.infer<typeof ToolCallMode>;
/** The parsed value of the `SummaryRuleConfig` schema. */
export type SummaryRuleConfig = z.infer<typeof SummaryRuleConfig>;
/** The parsed value of the `RuleLayer` schema. */
export type RuleLayer = z.infer<typeof RuleLayer>;
/** The parsed value of the `AutoConfigLayer` schema. */
export type AutoConfigLayer = z.infer<typeof AutoConfigLayer>;

/** A compaction rule with every field resolved. `null` policies mean "no opinion". */
export interface CompactionRule {
  readonly keep_first: number;
  readonly keep_last: number;
  readonly reasoning: "strip" | null;
  readonly tool_calls: ToolCallMode | null;
  readonly summary: SummaryRuleConfig | null;
}

/** The resolved `conversation.compaction.auto`. */
export interface AutoConfig {
  readonly enabled: boolean;
  readonly trigger_ratio: number;
  readonly min_turns: number;
  readonly rule: CompactionRule;
  readonly estimator: EstimatorSetting;
  /** Added to the estimate before the threshold test: what the platform adds that we don't see. */
  readonly reserve_tokens: number;
  /** A band removing fewer estimated tokens is not appended (`low_gain`) unless the window is exceeded. */
  readonly min_gain_tokens: number;
  /** A rolling range spanning fewer turns is not compacted (`short_range`) unless the window is exceeded. */
  readonly min_band_turns: number;
  /** `idle` defers a firing below `hard_ratio` until the conversation rests `idle_seconds`. */
  readonly when: FiringWhen;
  readonly idle_seconds: number;
  /** Past `context_window * hard_ratio` a band fires at once, whatever `when` says. */
  readonly hard_ratio: number;
}

/** The built-in defaults of D50. */
export const DEFAULT_AUTO_CONFIG: AutoConfig = Object.freeze({
  enabled: false,
  trigger_ratio: 0.75,
  min_turns: 5,
  rule: Object.freeze({
    keep_first: 1,
    keep_last: 3,
    reasoning: "strip",
    tool_calls: "strip",
    summary: null,
  }),
  estimator: "auto",
  reserve_tokens: 0,
  min_gain_tokens: 0,
  min_band_turns: 1,
  when: "turn",
  idle_seconds: 300,
  hard_ratio: 0.95,
});

/** A configuration that failed validation; `messages` name each bad key (one issue each). */
export class ConfigError extends InvalidInputError {
  override readonly name = "ConfigError";
  constructor(readonly messages: readonly string[]) {
    super(joinIssues(messages), {
      ...PROBLEM_VARIANTS.invalidConfig,
      issues: messages.map((detail) => ({ detail })),
    });
  }
}

/** One issue per bad key (each unknown key its own), every key named in full. */
function issuesOf(error: z.ZodError): string[] {
  return issueLines(error.issues, {
    prefix: AUTO_CONFIG_KEY.split("."),
    unknownKeys: { known: knownKeysAt },
  });
}

/** The keys of the strict object at `path` (in the auto layer). */
function knownKeysAt(path: readonly PropertyKey[]): string[] {
  switch (path.map(String).join(".")) {
    case "":
      return Object.keys(AutoConfigLayer.shape);
    case "rule":
      return Object.keys(RuleLayer.shape);
    case "rule.summary":
      return Object.keys(SummaryRuleConfig.shape);
    default: // `rule.summary.model`, the only other strict object
      return Object.keys(SummaryModel.shape);
  }
}

/** Validates one layer given as the `auto` object itself. */
export function parseAutoLayer(raw: unknown): AutoConfigLayer {
  const result = AutoConfigLayer.safeParse(raw);
  if (!result.success) throw new ConfigError(issuesOf(result.error));
  return result.data;
}

const TREE_EXAMPLE = '{"conversation":{"compaction":{"auto":{"enabled":true}}}}';

/**
 * Validates a configuration tree (`{"conversation":{"compaction":{"auto":…}}}`)
 * and returns its auto layer (empty when the tree does not set one). Loose,
 * as a JP config or config delta carries much else; `strict` (a body that
 * must be exactly the auto tree, such as the API's PUT) also rejects any
 * other key and a tree without `conversation.compaction.auto`, naming the
 * first missing key.
 */
export function parseConfigTree(
  raw: unknown,
  { strict = false }: { strict?: boolean } = {},
): AutoConfigLayer {
  let node = raw;
  let path = "";
  for (const key of ["conversation", "compaction", "auto"]) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) {
      throw new ConfigError([
        path === ""
          ? `configuration must be an object rooted at "conversation" (e.g. ${TREE_EXAMPLE})`
          : `${path}: must be an object`,
      ]);
    }
    const record = node as Record<string, unknown>;
    const keyPath = (name: string) => (path === "" ? name : `${path}.${name}`);
    if (strict) {
      const unknown = Object.keys(record).filter((name) => name !== key);
      if (unknown.length > 0) {
        throw new ConfigError(
          unknown.map(
            (name) =>
              `${keyPath(name)}: unknown key (only "${key}" belongs here, e.g. ${TREE_EXAMPLE})`,
          ),
        );
      }
    }
    path = keyPath(key);
    node = record[key];
    if (node === undefined) {
      if (strict) throw new ConfigError([`${path}: missing (e.g. ${TREE_EXAMPLE})`]);
      return {};
    }
  }
  return parseAutoLayer(node);
}

/** Wraps an auto layer in the D50 tree, the shape the API and files speak. */
export function toConfigTree(layer: AutoConfigLayer): {
  conversation: { compaction: { auto: AutoConfigLayer } };
} {
  return { conversation: { compaction: { auto: layer } } };
}

/** Merges layers in order (later wins); `null` in a rule clears that key. */
export function mergeLayers(...layers: readonly AutoConfigLayer[]): AutoConfigLayer {
  const merged: AutoConfigLayer = {};
  for (const layer of layers) {
    if (layer.enabled !== undefined) merged.enabled = layer.enabled;
    if (layer.trigger_ratio !== undefined) merged.trigger_ratio = layer.trigger_ratio;
    if (layer.min_turns !== undefined) merged.min_turns = layer.min_turns;
    if (layer.estimator !== undefined) merged.estimator = layer.estimator;
    if (layer.reserve_tokens !== undefined) merged.reserve_tokens = layer.reserve_tokens;
    if (layer.min_gain_tokens !== undefined) merged.min_gain_tokens = layer.min_gain_tokens;
    if (layer.min_band_turns !== undefined) merged.min_band_turns = layer.min_band_turns;
    if (layer.when !== undefined) merged.when = layer.when;
    if (layer.idle_seconds !== undefined) merged.idle_seconds = layer.idle_seconds;
    if (layer.hard_ratio !== undefined) merged.hard_ratio = layer.hard_ratio;
    if (layer.rule !== undefined) {
      const rule: RuleLayer = { ...merged.rule };
      for (const [key, value] of Object.entries(layer.rule)) {
        if (value !== undefined) (rule as Record<string, unknown>)[key] = value;
      }
      merged.rule = rule;
    }
  }
  return merged;
}

/**
 * Resolves layers over the built-in defaults into a complete configuration.
 * A rule left with no policy at all is a {@link ConfigError}: its bands would
 * change nothing yet move the rolling range past their turns for good; so is
 * a `hard_ratio` at or below `trigger_ratio` (nothing could ever be deferred).
 */
export function resolveAutoConfig(...layers: readonly AutoConfigLayer[]): AutoConfig {
  const merged = mergeLayers(...layers);
  const defaults = DEFAULT_AUTO_CONFIG;
  const rule = merged.rule ?? {};
  const resolved: AutoConfig = {
    enabled: merged.enabled ?? defaults.enabled,
    trigger_ratio: merged.trigger_ratio ?? defaults.trigger_ratio,
    min_turns: merged.min_turns ?? defaults.min_turns,
    rule: {
      keep_first: rule.keep_first ?? defaults.rule.keep_first,
      keep_last: rule.keep_last ?? defaults.rule.keep_last,
      reasoning: rule.reasoning === undefined ? defaults.rule.reasoning : rule.reasoning,
      tool_calls: rule.tool_calls === undefined ? defaults.rule.tool_calls : rule.tool_calls,
      summary: rule.summary ?? null,
    },
    estimator: merged.estimator ?? defaults.estimator,
    reserve_tokens: merged.reserve_tokens ?? defaults.reserve_tokens,
    min_gain_tokens: merged.min_gain_tokens ?? defaults.min_gain_tokens,
    min_band_turns: merged.min_band_turns ?? defaults.min_band_turns,
    when: merged.when ?? defaults.when,
    idle_seconds: merged.idle_seconds ?? defaults.idle_seconds,
    hard_ratio: merged.hard_ratio ?? defaults.hard_ratio,
  };
  // Checked once the layers merge: the two ratios may come from different layers.
  // A defaulted hard ratio only matters when `idle` defers, so it is checked then.
  const hardMatters = merged.hard_ratio !== undefined || resolved.when === "idle";
  if (hardMatters && resolved.hard_ratio <= resolved.trigger_ratio) {
    throw new ConfigError([
      `${AUTO_CONFIG_KEY}.hard_ratio: must be greater than trigger_ratio (${resolved.trigger_ratio}); got ${resolved.hard_ratio}`,
    ]);
  }
  if (!resolved.rule.reasoning && !resolved.rule.tool_calls && !resolved.rule.summary) {
    throw new ConfigError([
      `${AUTO_CONFIG_KEY}.rule: sets no policy (reasoning, tool_calls and summary are all off); keep at least one`,
    ]);
  }
  return resolved;
}

/**
 * The auto layers carried by the stream's config deltas, in stream order.
 * A delta that sets an invalid auto config is an error naming the entry.
 */
export function streamConfigLayers(entries: readonly Entry[]): AutoConfigLayer[] {
  const layers: AutoConfigLayer[] = [];
  entries.forEach((entry, index) => {
    if (entry.type !== "config_delta") return;
    try {
      const layer = parseConfigTree((entry as ConfigDelta).delta ?? {});
      if (Object.keys(layer).length > 0) layers.push(layer);
    } catch (error) {
      // Stryker disable next-line ConditionalExpression: parseConfigTree throws nothing but ConfigError on JSON data (all a stream holds); the guard narrows `error`.
      if (!(error instanceof ConfigError)) throw error;
      throw new ConfigError(
        error.messages.map((message) => `entry ${index} (config_delta): ${message}`),
      );
    }
  });
  return layers;
}

/** Converts a rule's tool call mode to the policy stored in a compaction. */
export function toolCallPolicyOf(mode: ToolCallMode): ToolCallPolicy {
  switch (mode) {
    case "omit":
      return { policy: "omit" };
    case "strip":
      return { policy: "strip", request: true, response: true };
    case "strip-requests":
      return { policy: "strip", request: true, response: false };
    case "strip-responses":
      return { policy: "strip", request: false, response: true };
  }
}
