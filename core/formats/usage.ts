/**
 * A turn's reported usage read from the response object a provider's SDK
 * returned for the turn's last call (issue 26; docs/integrate.md "Provider
 * formats"): a format post may carry it as `response` instead of `usage`,
 * and only the token counts are read (the SDKs' field names, as pinned in
 * package.json). Each schema checks the fields it reads and turns them into
 * a {@link TurnUsage}; anything else in the object is left alone.
 *
 * - OpenAI Chat `ChatCompletion.usage`: `prompt_tokens` (cached included),
 *   `completion_tokens`, `prompt_tokens_details.cached_tokens`.
 * - OpenAI Responses `Response.usage`: `input_tokens` (cached included),
 *   `output_tokens`, `input_tokens_details.cached_tokens`.
 * - Anthropic `Message.usage`: `input_tokens` counts only the uncached part,
 *   so the call's input is it plus `cache_read_input_tokens` plus
 *   `cache_creation_input_tokens`; cached is `cache_read_input_tokens`.
 * - AI SDK (`ai` 6) `generateText`'s result: `usage` (the last step's:
 *   `inputTokens`, `outputTokens`, `inputTokenDetails.cacheReadTokens`, or the
 *   deprecated `cachedInputTokens`), or, as `JSON.stringify` writes the
 *   result (`usage` is a getter), the last of `steps[].usage`; `calls` is
 *   `steps.length`. `totalUsage` sums every step, not the last call, so it
 *   is not read.
 */
import * as z from "zod";
import type { TurnUsage } from "../calibration.ts";

// A count the SDKs type as a number: whole and 0 or more, as a posted usage's.
const count = z
  .number({ error: "must be a whole number of tokens" })
  .int()
  .nonnegative("must be 0 or more");
// The SDKs type their optional counts as nullable (`null` in JSON) or absent.
const optionalCount = count.nullish();

const missingUsage = { error: "the response has no usage object (the SDK's `usage`)" };

/** A {@link TurnUsage} with only the counts that are there. */
function turnUsage(input: number, output: number | null | undefined, cached?: number | null) {
  return {
    input_tokens: input,
    ...(output == null ? {} : { output_tokens: output }),
    ...(cached == null ? {} : { cached_input_tokens: cached }),
  } satisfies TurnUsage;
}

/**
 * An OpenAI response's usage: its `usage` holds the input (cached included),
 * the output and the input's details with `cached_tokens`, under the names
 * the API gives them.
 */
function openAiUsage(names: { input: string; output: string; details: string }) {
  const { input, output, details } = names;
  const usage = z.looseObject(
    {
      [input]: count,
      [output]: optionalCount,
      [details]: z.looseObject({ cached_tokens: optionalCount }).nullish(),
    },
    missingUsage,
  );
  return z.looseObject({ usage }).transform(({ usage: read }): TurnUsage => {
    const counts = read as Record<string, number | null | undefined>;
    const detail = read[details] as { cached_tokens?: number | null } | null | undefined;
    return turnUsage(counts[input] as number, counts[output], detail?.cached_tokens);
  });
}

/** OpenAI Chat's `ChatCompletion` (or a streamed chunk with usage) → its usage. */
export const ChatResponseUsage = openAiUsage({
  input: "prompt_tokens",
  output: "completion_tokens",
  details: "prompt_tokens_details",
});

/** OpenAI Responses' `Response` → its usage. */
export const ResponsesResponseUsage = openAiUsage({
  input: "input_tokens",
  output: "output_tokens",
  details: "input_tokens_details",
});

/** Anthropic's `Message` → its usage, the cache's reads and writes counted as input. */
export const AnthropicResponseUsage = z
  .looseObject({
    usage: z.looseObject(
      {
        input_tokens: count,
        output_tokens: optionalCount,
        cache_read_input_tokens: optionalCount,
        cache_creation_input_tokens: optionalCount,
      },
      missingUsage,
    ),
  })
  .transform(({ usage }): TurnUsage => {
    const read = usage.cache_read_input_tokens ?? 0;
    const written = usage.cache_creation_input_tokens ?? 0;
    return turnUsage(
      usage.input_tokens + read + written,
      usage.output_tokens,
      usage.cache_read_input_tokens,
    );
  });

const AiSdkUsage = z.looseObject({
  inputTokens: count.optional(),
  outputTokens: optionalCount,
  inputTokenDetails: z.looseObject({ cacheReadTokens: optionalCount }).nullish(),
  cachedInputTokens: optionalCount,
});

/** The AI SDK's `generateText` result (or `{usage}`, `{steps}`) → the last step's usage. */
export const AiSdkResponseUsage = z
  .looseObject({
    usage: AiSdkUsage.optional(),
    steps: z.array(z.looseObject({ usage: AiSdkUsage.optional() })).optional(),
  })
  .transform((response, ctx): TurnUsage | typeof z.NEVER => {
    const last = (response.steps?.length ?? 0) - 1;
    const [usage, at] =
      response.usage === undefined
        ? [response.steps?.[last]?.usage, ["steps", last, "usage"]]
        : [response.usage, ["usage"]];
    if (usage?.inputTokens === undefined) {
      ctx.addIssue({
        code: "custom",
        path: usage === undefined ? ["usage"] : [...at, "inputTokens"],
        message:
          usage === undefined
            ? "the response has no usage (the result's `usage`, or its last step's)"
            : "the provider reported no inputTokens",
      });
      return z.NEVER;
    }
    const steps = response.steps?.length ?? 0;
    return {
      ...turnUsage(
        usage.inputTokens,
        usage.outputTokens,
        usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens,
      ),
      ...(steps > 0 ? { calls: steps } : {}),
    };
  });
