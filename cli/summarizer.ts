import { InvalidInputError } from "../core/errors.ts";
import type { SummarizeBand } from "../core/replay.ts";
import { SummarizerError } from "../functions/errors.ts";
import { type Summarizer, summaryRequest } from "../functions/ports.ts";
import { DEFAULT_SUMMARY_TIMEOUT_MS } from "../functions/summarizers/common.ts";
import { type OptionsConfig, UsageError } from "./command.ts";

/** `--summarizer`, `--base-url`, `--api-key`, `--summary-model`, `--summary-timeout`. */
export const SUMMARIZER_OPTIONS = {
  summarizer: { type: "string" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  "summary-model": { type: "string" },
  "summary-timeout": { type: "string" },
} as const satisfies OptionsConfig;

/** Help text of {@link SUMMARIZER_OPTIONS}. */
export const SUMMARIZER_HELP = `Summaries (for a rule with a summary block; the summary is generated from the
RAW events of the band, as the service does, and never faked):
  --summarizer openai-compatible
                         any OpenAI-compatible chat-completions server:
    --base-url URL       its API root, /chat/completions is appended
                         (https://api.openai.com/v1, llama.cpp http://127.0.0.1:8080/v1,
                         Ollama http://127.0.0.1:11434/v1); default $OPENAI_BASE_URL
    --api-key KEY        sent as a bearer token; default $OPENAI_API_KEY; local
                         servers need none
  --summarizer bedrock   Amazon Bedrock's Converse API with the default AWS
                         credential chain and region (AWS_PROFILE, AWS_REGION, …)
  --summary-model ID     the model when the rule's summary.model.id names none
                         (required with bedrock; without one, an OpenAI-compatible
                         server uses its own default)
  --summary-timeout S    seconds one summary may take (default ${DEFAULT_SUMMARY_TIMEOUT_MS / 1000})`;

/** The values of {@link SUMMARIZER_OPTIONS} as parsed. */
export interface SummarizerValues {
  readonly summarizer?: string | undefined;
  readonly "base-url"?: string | undefined;
  readonly "api-key"?: string | undefined;
  readonly "summary-model"?: string | undefined;
  readonly "summary-timeout"?: string | undefined;
}

function timeoutMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--summary-timeout must be a positive number of seconds (got "${value}")`);
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/**
 * The summarizer the options describe, or `undefined` without
 * `--summarizer`. The Bedrock SDK is loaded only when asked for.
 */
async function summarizerFromOptions(
  values: SummarizerValues,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Summarizer | undefined> {
  const kind = values.summarizer;
  const model = values["summary-model"];
  if (model !== undefined && model.trim() === "") {
    throw new UsageError("--summary-model needs a model id");
  }
  const timeout = timeoutMs(values["summary-timeout"]);
  if (kind === undefined) {
    const stray = (["base-url", "api-key", "summary-model", "summary-timeout"] as const).find(
      (flag) => values[flag] !== undefined,
    );
    if (stray) {
      throw new UsageError(
        `--${stray} needs --summarizer (openai-compatible${stray === "base-url" || stray === "api-key" ? "" : " or bedrock"})`,
      );
    }
    return undefined;
  }
  if (kind === "openai-compatible") {
    const baseUrl = values["base-url"] ?? env.OPENAI_BASE_URL;
    if (!baseUrl) {
      throw new UsageError(
        "--summarizer openai-compatible needs --base-url URL (or $OPENAI_BASE_URL)",
      );
    }
    const apiKey = values["api-key"] ?? env.OPENAI_API_KEY;
    const { OpenAiCompatibleSummarizer } = await import("../functions/summarizers/openai.ts");
    try {
      return new OpenAiCompatibleSummarizer({
        baseUrl,
        ...(apiKey ? { apiKey } : {}),
        ...(model === undefined ? {} : { defaultModelId: model }),
        ...(timeout === undefined ? {} : { timeoutMs: timeout }),
      });
    } catch (error) {
      if (error instanceof RangeError) throw new UsageError(`--base-url: ${error.message}`);
      throw error;
    }
  }
  if (kind === "bedrock") {
    for (const flag of ["base-url", "api-key"] as const) {
      if (values[flag] !== undefined) {
        throw new UsageError(`--${flag} is for --summarizer openai-compatible, not bedrock`);
      }
    }
    if (model === undefined) {
      throw new UsageError(
        "--summarizer bedrock needs --summary-model ID (a Bedrock model or inference profile id)",
      );
    }
    const [{ BedrockRuntimeClient }, { BedrockSummarizer }] = await Promise.all([
      import("@aws-sdk/client-bedrock-runtime"),
      import("../functions/summarizers/bedrock.ts"),
    ]);
    return new BedrockSummarizer(new BedrockRuntimeClient({}), {
      defaultModelId: model,
      ...(timeout === undefined ? {} : { timeoutMs: timeout }),
    });
  }
  throw new UsageError(`--summarizer must be openai-compatible or bedrock (got "${kind}")`);
}

/** The hint appended when a summary rule fires without a summarizer. */
export const SUMMARIZER_HINT =
  "pass --summarizer openai-compatible --base-url URL, or --summarizer bedrock --summary-model ID";

/** A failed summary as the command reports it (exit 1, one line). */
function summaryFailure(error: unknown): unknown {
  if (
    // EmptySummaryError is a SummarizerError; an InvalidInputError here is a transcript budget out of range.
    error instanceof SummarizerError ||
    (error instanceof InvalidInputError && !(error instanceof UsageError))
  ) {
    return new InvalidInputError(`summary failed: ${error.message}`, { cause: error });
  }
  return error;
}

/**
 * A `summarize` callback for core's `evaluateStream` and `simulateStream`:
 * asks `summarizer` for the summary of a band from its raw events, with the
 * rule's settings; a failed or empty summary is reported, never faked.
 */
function summarizeWith(summarizer: Summarizer): SummarizeBand {
  return async (range, rawEvents, rule) => {
    try {
      return await summarizer.summarize(summaryRequest(range, rawEvents, rule));
    } catch (error) {
      throw summaryFailure(error);
    }
  };
}

/**
 * The `summarize` callback of core's replays the options describe, or
 * `undefined` without `--summarizer`: {@link summarizeWith} the summarizer of
 * {@link summarizerFromOptions}.
 */
export async function summarizeFromOptions(
  values: SummarizerValues,
  env: Readonly<Record<string, string | undefined>>,
): Promise<SummarizeBand | undefined> {
  const summarizer = await summarizerFromOptions(values, env);
  return summarizer && summarizeWith(summarizer);
}
