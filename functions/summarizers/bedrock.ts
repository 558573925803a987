/**
 * The Amazon Bedrock summarizer (docs/architecture.md §9, the default in AWS): one
 * Converse API call per summary, authorized by the Lambda's IAM role. The
 * client is given by the caller (created at cold start), never built here.
 */
import {
  type BedrockRuntimeClient,
  ConverseCommand,
  type ConverseResponse,
} from "@aws-sdk/client-bedrock-runtime";
import { SummarizerError } from "../errors.ts";
import type { SummarizeOptions, Summarizer, SummaryRequest, SummaryResult } from "../ports.ts";
import { bandName, ModelCaller, requireText, type SummarizerOptions } from "./common.ts";

/** Options of {@link BedrockSummarizer}. */
export interface BedrockSummarizerOptions extends SummarizerOptions {
  /** The model (or inference profile) id used when the rule names none (`summary.model.id`). */
  readonly defaultModelId: string;
}

/** Stop reasons whose text is not a summary (a guardrail's or a filter's message). */
const REFUSALS = new Set(["guardrail_intervened", "content_filtered"]);

/** Summarizes with Bedrock's Converse API. */
export class BedrockSummarizer implements Summarizer {
  readonly #client: BedrockRuntimeClient;
  readonly #defaultModelId: string;
  readonly #caller: ModelCaller;

  constructor(client: BedrockRuntimeClient, options: BedrockSummarizerOptions) {
    if (options.defaultModelId.trim() === "") {
      throw new RangeError("defaultModelId must name a Bedrock model");
    }
    this.#client = client;
    this.#defaultModelId = options.defaultModelId;
    this.#caller = new ModelCaller(options);
  }

  async summarize(request: SummaryRequest, options?: SummarizeOptions): Promise<SummaryResult> {
    const model = request.model ?? this.#defaultModelId;
    const what = `bedrock converse (${model}) summarizing ${bandName(request)}`;
    const { system, user } = this.#caller.prompt(request);
    const command = new ConverseCommand({
      modelId: model,
      system: [{ text: system }],
      messages: [{ role: "user", content: [{ text: user }] }],
      inferenceConfig: { maxTokens: this.#caller.maxOutputTokens },
    });
    const { answer: response, latencyMs: latency } = await this.#caller.call<ConverseResponse>(
      { what, model },
      (abortSignal) => this.#client.send(command, { abortSignal }),
      (error) => {
        const e = error as {
          name?: string;
          message?: string;
          $metadata?: { httpStatusCode?: number };
        };
        const status = e.$metadata?.httpStatusCode;
        return new SummarizerError(
          `${what} failed: ${e.name ?? "Error"}: ${e.message ?? String(error)}${status === undefined ? "" : ` (HTTP ${status})`}`,
          { cause: error, model, ...(status === undefined ? {} : { upstreamStatus: status }) },
        );
      },
      options?.signal,
    );
    if (response.stopReason && REFUSALS.has(response.stopReason)) {
      throw new SummarizerError(`${what}: the model refused (stop reason ${response.stopReason})`, {
        model,
      });
    }
    const blocks = response.output?.message?.content ?? [];
    const text = requireText(
      blocks
        .map((block) => ("text" in block && typeof block.text === "string" ? block.text : ""))
        .join(""),
      what,
    );
    return {
      text,
      model,
      ...(response.usage?.inputTokens === undefined
        ? {}
        : { input_tokens: response.usage.inputTokens }),
      ...(response.usage?.outputTokens === undefined
        ? {}
        : { output_tokens: response.usage.outputTokens }),
      latency_ms: latency,
    };
  }
}
