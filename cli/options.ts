/**
 * Options shared by `evaluate` and `simulate`: configuration layers
 * (`--config` TOML file, JSON file or inline JSON; `--enable`), the model and
 * its context window, and the clock.
 */
import { readFile } from "node:fs/promises";
import { parse as parseToml } from "smol-toml";
import { type Calibration, TOKENS_PER_CHAR_BOUNDS } from "../core/calibration.ts";
import {
  type ModelCatalog,
  ModelCatalogLayer,
  type ModelInfo,
  resolveContextWindow,
} from "../core/catalog.ts";
import { type AutoConfigLayer, ConfigError, parseConfigTree } from "../core/config.ts";
import { InvalidInputError } from "../core/errors.ts";
import type { Entry } from "../core/events.ts";
import { issueLines } from "../core/issues.ts";
import type { SummarizeBand } from "../core/replay.ts";
import { timestampNanos } from "../core/timestamp.ts";
import { type Io, type OptionsConfig, UsageError } from "./command.ts";
import { FORMAT_OPTION, type InputFlags, loadStream } from "./input.ts";
import { SUMMARIZER_OPTIONS, type SummarizerValues, summarizeFromOptions } from "./summarizer.ts";

/** `--config` (repeatable) and `--enable`. */
export const CONFIG_OPTIONS = {
  config: { type: "string", multiple: true },
  enable: { type: "boolean" },
} as const satisfies OptionsConfig;

/** `--context-window` and `--model`. */
export const MODEL_OPTIONS = {
  "context-window": { type: "string" },
  model: { type: "string" },
} as const satisfies OptionsConfig;

/** The options of a command that replays a stream under a configuration (`evaluate`, `simulate`). */
export const REPLAY_OPTIONS = {
  ...FORMAT_OPTION,
  ...CONFIG_OPTIONS,
  ...MODEL_OPTIONS,
  ...SUMMARIZER_OPTIONS,
} as const satisfies OptionsConfig;

/** Help text of {@link CONFIG_OPTIONS}. */
export const CONFIG_HELP = `Configuration (D50 "conversation.compaction.auto"; later layers win, and the
stream's own config_delta entries win over all of them):
  --config F             a TOML file rooted like D50:
                           [conversation.compaction.auto]
                           enabled = true
                           trigger_ratio = 0.75
                           min_turns = 5
                           [conversation.compaction.auto.rule]
                           keep_first = 1
                           keep_last = 3
                           reasoning = "strip"
                           tool_calls = "strip"   # strip-requests, strip-responses, omit
                         or a .json file, or the same tree as inline JSON when F starts
                         with "{". Repeatable: each one is a layer over the previous.
  --enable               shorthand for --config '{"conversation":{"compaction":{"auto":{"enabled":true}}}}'
                         Automatic compaction is disabled by default (D50), so without
                         --enable or a config enabling it nothing ever fires.`;

/** Help text of {@link MODEL_OPTIONS}. */
export const MODEL_HELP = `  --context-window N     the model's context window in tokens
  --model ID             a model id; its window comes from the bundled catalog
                         (e.g. claude-sonnet-4-5, anthropic/claude-sonnet-4-5, gpt-4o-2024-08-06)
                         when --context-window is not given`;

async function configText(
  source: string,
  what = "config",
): Promise<{ name: string; text: string }> {
  try {
    return { name: source, text: await readFile(source, "utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT" ? "no such file" : error instanceof Error ? error.message : String(error);
    throw new InvalidInputError(`cannot read ${what} ${source}: ${reason}`, { cause: error });
  }
}

function parseConfigDocument(name: string, text: string, json: boolean): unknown {
  if (json) {
    try {
      return JSON.parse(text);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new InvalidInputError(`config ${name}: invalid JSON: ${message}`, { cause: error });
    }
  }
  try {
    return parseToml(text);
  } catch (error) {
    // smol-toml's message carries a code frame after its first line.
    const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
    const { line, column } = error as { line?: number; column?: number };
    const at = line === undefined ? "" : ` (line ${line}, column ${column ?? 1})`;
    throw new InvalidInputError(`config ${name}: ${message}${at}`, { cause: error });
  }
}

/** Reads and validates one `--config` argument into an auto layer. */
export async function loadConfigLayer(argument: string): Promise<AutoConfigLayer> {
  const inline = argument.trimStart().startsWith("{");
  const { name, text } = inline ? { name: "(inline)", text: argument } : await configText(argument);
  const tree = parseConfigDocument(name, text, inline || /\.json$/i.test(argument));
  const auto = (tree as { conversation?: { compaction?: { auto?: unknown } } } | null)?.conversation
    ?.compaction?.auto;
  if (auto === undefined) {
    throw new InvalidInputError(
      `config ${name}: sets nothing under conversation.compaction.auto (e.g. {"conversation":{"compaction":{"auto":{"enabled":true}}}} or [conversation.compaction.auto] in TOML)`,
    );
  }
  try {
    return parseConfigTree(tree);
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new InvalidInputError(`config ${name}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * `--models`: model id → context window in tokens, inline JSON or a JSON
 * file, each bad entry named (`--models: acme-coder-1: must be at least 1 token`).
 */
export async function loadModels(argument: string): Promise<ModelCatalog> {
  const inline = argument.trimStart().startsWith("{");
  const { name, text } = inline
    ? { name: "(inline)", text: argument }
    : await configText(argument, "models");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`--models ${name}: not JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
  const models = ModelCatalogLayer.safeParse(value);
  if (!models.success) {
    throw new InvalidInputError(
      `--models ${name}: ${issueLines(models.error.issues).join("; ")} (e.g. {"my-model":128000})`,
    );
  }
  return models.data;
}

/** `--tokens-per-char` and `--overhead`: replay with a calibration (e.g. the one the service answered). */
export const CALIBRATION_OPTIONS = {
  "tokens-per-char": { type: "string" },
  overhead: { type: "string" },
} as const satisfies OptionsConfig;

/** Help text of {@link CALIBRATION_OPTIONS}. */
export const CALIBRATION_HELP = `  --tokens-per-char A   estimate tokens as A·chars + B instead of the config's
  --overhead B           estimator (A in [0.1, 1], default 0.25; B tokens ≥ 0,
                         default 0): GET /v1/conversations/{id}'s estimator
                         answers both`;

/** A finite number flag within bounds. */
function boundedNumber(flag: string, value: string, min: number, max: number): number {
  const number = value.trim() === "" ? Number.NaN : Number(value.replaceAll("_", ""));
  if (!Number.isFinite(number) || number < min || number > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `in [${min}, ${max}]`;
    throw new UsageError(`${flag} must be a number ${range} (got "${value}")`);
  }
  return number;
}

/** The calibration `--tokens-per-char` and `--overhead` give, or `undefined` without either. */
export function calibrationOf(values: {
  "tokens-per-char"?: string | undefined;
  overhead?: string | undefined;
}): Calibration | undefined {
  const perChar = values["tokens-per-char"];
  const overhead = values.overhead;
  if (perChar === undefined && overhead === undefined) return undefined;
  const { min, max } = TOKENS_PER_CHAR_BOUNDS;
  return {
    kind: "fixed",
    tokens_per_char:
      perChar === undefined ? 0.25 : boundedNumber("--tokens-per-char", perChar, min, max),
    overhead_tokens:
      overhead === undefined
        ? 0
        : boundedNumber("--overhead", overhead, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** The layers given on the command line, in order; `--enable` comes last. */
export async function configLayers(values: {
  config?: string[] | undefined;
  enable?: boolean | undefined;
}): Promise<AutoConfigLayer[]> {
  const layers: AutoConfigLayer[] = [];
  for (const argument of values.config ?? []) layers.push(await loadConfigLayer(argument));
  if (values.enable) layers.push({ enabled: true });
  return layers;
}

/** Parses a positive whole number flag. */
export function positiveInteger(flag: string, value: string): number {
  const text = value.replaceAll("_", "");
  const number = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(number) || number <= 0) {
    throw new UsageError(`${flag} must be a positive whole number of tokens (got "${value}")`);
  }
  return number;
}

/** The model described by `--model` and `--context-window`, or `undefined`. */
export function modelInfo(values: {
  "context-window"?: string | undefined;
  model?: string | undefined;
}): ModelInfo | undefined {
  const contextWindow =
    values["context-window"] === undefined
      ? undefined
      : positiveInteger("--context-window", values["context-window"]);
  if (contextWindow === undefined && values.model === undefined) return undefined;
  return {
    ...(values.model === undefined ? {} : { id: values.model }),
    ...(contextWindow === undefined ? {} : { context_window: contextWindow }),
  };
}

/** The context window of {@link modelInfo}'s model; a {@link UsageError} when it is not known. */
export function requiredContextWindow(values: {
  "context-window"?: string | undefined;
  model?: string | undefined;
}): number {
  const contextWindow = resolveContextWindow(modelInfo(values));
  if (contextWindow === undefined) {
    throw new UsageError(
      values.model === undefined
        ? "--context-window N is required (or a catalogued --model)"
        : `the context window of model "${values.model}" is unknown: give --context-window N`,
    );
  }
  return contextWindow;
}

/** Parses `--now` (RFC 3339, or JP's stored form) to ms since the epoch. */
export function nowMillis(value: string | undefined, clock: () => number): number {
  if (value === undefined) return clock();
  try {
    return Number(timestampNanos(value) / 1_000_000n);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(`--now: ${error.message}`);
    throw error;
  }
}

/** The stderr note when nothing can fire because the feature is off. */
export const DISABLED_NOTE =
  "automatic compaction is disabled (the D50 default): pass --enable or a --config that enables it";

/**
 * What a replaying command (`evaluate`, `simulate`) reads from its options
 * and input, in the order its errors are reported: calibration, summarizer,
 * config layers, then the stream.
 */
export async function replayInputs(
  values: InputFlags &
    SummarizerValues &
    Parameters<typeof calibrationOf>[0] &
    Parameters<typeof configLayers>[0],
  positionals: readonly string[],
  io: Io,
): Promise<{
  calibration: Calibration | undefined;
  summarize: SummarizeBand | undefined;
  layers: AutoConfigLayer[];
  entries: Entry[];
}> {
  const calibration = calibrationOf(values);
  const summarize = await summarizeFromOptions(values, io.env);
  const layers = await configLayers(values);
  const entries = await loadStream(positionals, values, io);
  return { calibration, summarize, layers, entries };
}
