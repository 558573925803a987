/**
 * The summarizer the Lambdas use, chosen by the environment (functions/env.ts):
 * `SUMMARIZER=none` (no summarizer: a summary rule fails its evaluation and a
 * manual summary answers 501), `bedrock` (Converse, IAM; `SUMMARY_MODEL_ID`
 * required) or `openai-compatible` (`OPENAI_BASE_URL`, optional
 * `OPENAI_API_KEY` and `SUMMARY_MODEL_ID`). A rule's `summary.model.id`
 * overrides `SUMMARY_MODEL_ID`. Call it once at cold start: it creates the
 * Bedrock client.
 *
 * Each summarizer (and the Bedrock client) is a dynamic import on its own
 * path, so a function without one, or with the other, never loads it: in the
 * Lambda bundles it sits outside the static import graph, evaluated only
 * when configured (test/cdk/bundles.suite.ts).
 */
import type { Environment } from "../env.ts";
import { SetupError } from "../errors.ts";
import type { Summarizer } from "../ports.ts";

/** Reads the OpenAI-compatible key: `OPENAI_API_KEY`, or the secret `OPENAI_API_KEY_SECRET_ID` names. */
async function openAiKey(env: Environment): Promise<string | undefined> {
  if (env.openaiApiKey || !env.openaiApiKeySecretId) return env.openaiApiKey;
  const { GetSecretValueCommand, SecretsManagerClient } = await import(
    "@aws-sdk/client-secrets-manager"
  );
  const client = new SecretsManagerClient({});
  try {
    const secret = await client.send(
      new GetSecretValueCommand({ SecretId: env.openaiApiKeySecretId }),
    );
    if (!secret.SecretString) {
      throw new SetupError(
        `invalid environment: OPENAI_API_KEY_SECRET_ID: secret "${env.openaiApiKeySecretId}" has no string value`,
      );
    }
    return secret.SecretString.trim();
  } finally {
    client.destroy();
  }
}

/**
 * Builds the configured summarizer, or `undefined` when `SUMMARIZER` is `none`.
 * `options.timeoutMs` caps a summary (the API uses less than API Gateway's 30 s).
 */
export async function summarizerFromEnvironment(
  env: Environment,
  options: { timeoutMs?: number } = {},
): Promise<Summarizer | undefined> {
  const timeoutMs = options.timeoutMs ?? env.summaryTimeoutMs;
  switch (env.summarizer) {
    case "none":
      return undefined;
    case "bedrock": {
      if (!env.summaryModelId) {
        throw new SetupError(
          "invalid environment: SUMMARY_MODEL_ID: required when SUMMARIZER is bedrock (a Bedrock model or inference profile id)",
        );
      }
      const [{ BedrockRuntimeClient }, { BedrockSummarizer }] = await Promise.all([
        import("@aws-sdk/client-bedrock-runtime"),
        import("./bedrock.ts"),
      ]);
      return new BedrockSummarizer(new BedrockRuntimeClient({}), {
        defaultModelId: env.summaryModelId,
        ...(timeoutMs ? { timeoutMs } : {}),
      });
    }
    case "openai-compatible": {
      if (!env.openaiBaseUrl) {
        throw new SetupError(
          "invalid environment: OPENAI_BASE_URL: required when SUMMARIZER is openai-compatible",
        );
      }
      const [apiKey, { OpenAiCompatibleSummarizer }] = await Promise.all([
        openAiKey(env),
        import("./openai.ts"),
      ]);
      return new OpenAiCompatibleSummarizer({
        baseUrl: env.openaiBaseUrl,
        ...(apiKey ? { apiKey } : {}),
        ...(timeoutMs ? { timeoutMs } : {}),
        ...(env.summaryModelId ? { defaultModelId: env.summaryModelId } : {}),
      });
    }
  }
}
