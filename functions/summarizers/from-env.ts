/**
 * The summarizer the Lambdas use, chosen by the environment (functions/env.ts):
 * `SUMMARIZER=none` (no summarizer: a summary rule fails its evaluation and a
 * manual summary answers 501), `bedrock` (Converse, IAM; `SUMMARY_MODEL_ID`
 * required) or `openai-compatible` (`OPENAI_BASE_URL`, optional
 * `OPENAI_API_KEY` and `SUMMARY_MODEL_ID`). A rule's `summary.model.id`
 * overrides `SUMMARY_MODEL_ID`. Call it once at cold start: it creates the
 * Bedrock client.
 */
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { type Environment, EnvironmentError } from "../env.ts";
import type { Summarizer } from "../ports.ts";
import { BedrockSummarizer } from "./bedrock.ts";
import { OpenAiCompatibleSummarizer } from "./openai.ts";

/** Builds the configured summarizer, or `undefined` when `SUMMARIZER` is `none`. */
export function summarizerFromEnvironment(env: Environment): Summarizer | undefined {
  switch (env.summarizer) {
    case "none":
      return undefined;
    case "bedrock":
      if (!env.summaryModelId) {
        throw new EnvironmentError(
          "invalid environment: SUMMARY_MODEL_ID: required when SUMMARIZER is bedrock (a Bedrock model or inference profile id)",
        );
      }
      return new BedrockSummarizer(new BedrockRuntimeClient({}), {
        defaultModelId: env.summaryModelId,
      });
    case "openai-compatible":
      if (!env.openaiBaseUrl) {
        throw new EnvironmentError(
          "invalid environment: OPENAI_BASE_URL: required when SUMMARIZER is openai-compatible",
        );
      }
      return new OpenAiCompatibleSummarizer({
        baseUrl: env.openaiBaseUrl,
        ...(env.openaiApiKey ? { apiKey: env.openaiApiKey } : {}),
        ...(env.summaryModelId ? { defaultModelId: env.summaryModelId } : {}),
      });
  }
}
