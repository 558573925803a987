import type { Message } from "@anthropic-ai/sdk/resources/messages/messages";
import type { GenerateTextResult, LanguageModelUsage, ToolSet } from "ai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import type { Response } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../errors.ts";
import { formatTurnUsage } from "../turn-validation.ts";
import {
  AiSdkResponseUsage,
  AnthropicResponseUsage,
  ChatResponseUsage,
  ResponsesResponseUsage,
} from "./usage.ts";

// Each object is typed by the pinned SDK (package.json), so the field names read are the SDK's.
const chat: Pick<ChatCompletion, "id" | "object" | "usage"> = {
  id: "chatcmpl-1",
  object: "chat.completion",
  usage: {
    prompt_tokens: 1_200,
    completion_tokens: 80,
    total_tokens: 1_280,
    prompt_tokens_details: { cached_tokens: 1_024 },
  },
};

const responses: Pick<Response, "id" | "object" | "usage"> = {
  id: "resp_1",
  object: "response",
  usage: {
    input_tokens: 3_000,
    input_tokens_details: { cached_tokens: 2_048 },
    output_tokens: 150,
    output_tokens_details: { reasoning_tokens: 40 },
    total_tokens: 3_150,
  },
};

const anthropic: Pick<Message, "id" | "type" | "usage"> = {
  id: "msg_1",
  type: "message",
  usage: {
    cache_creation: null,
    cache_creation_input_tokens: 500,
    cache_read_input_tokens: 6_000,
    inference_geo: null,
    input_tokens: 25,
    output_tokens: 310,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    speed: null,
  },
};

const aiUsage = (input: number, output: number, cached: number): LanguageModelUsage => ({
  inputTokens: input,
  inputTokenDetails: {
    noCacheTokens: input - cached,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  },
  outputTokens: output,
  outputTokenDetails: { textTokens: output, reasoningTokens: 0 },
  totalTokens: input + output,
});

describe("usage read from the SDKs' response objects", () => {
  it("OpenAI Chat: prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens", () => {
    expect(ChatResponseUsage.parse(chat)).toEqual({
      input_tokens: 1_200,
      output_tokens: 80,
      cached_input_tokens: 1_024,
    });
    // A completion without details (as older models answer), in JSON's nulls.
    expect(
      ChatResponseUsage.parse({
        usage: { prompt_tokens: 9, completion_tokens: 2, prompt_tokens_details: null },
      }),
    ).toEqual({ input_tokens: 9, output_tokens: 2 });
  });

  it("OpenAI Responses: input_tokens, output_tokens, input_tokens_details.cached_tokens", () => {
    expect(ResponsesResponseUsage.parse(responses)).toEqual({
      input_tokens: 3_000,
      output_tokens: 150,
      cached_input_tokens: 2_048,
    });
  });

  it("Anthropic: the uncached input plus the cache's reads and writes, cached the reads", () => {
    expect(AnthropicResponseUsage.parse(anthropic)).toEqual({
      input_tokens: 6_525,
      output_tokens: 310,
      cached_input_tokens: 6_000,
    });
    expect(AnthropicResponseUsage.parse({ usage: { input_tokens: 40, output_tokens: 3 } })).toEqual(
      { input_tokens: 40, output_tokens: 3 },
    );
  });

  it("AI SDK: the last step's usage, calls from the steps", () => {
    const result: Pick<GenerateTextResult<ToolSet, never>, "usage" | "totalUsage"> = {
      usage: aiUsage(900, 60, 512),
      totalUsage: aiUsage(1_500, 100, 512),
    };
    expect(AiSdkResponseUsage.parse(result)).toEqual({
      input_tokens: 900,
      output_tokens: 60,
      cached_input_tokens: 512,
    });
    // JSON.stringify(result) drops the `usage` getter: the last step's is read.
    const serialized = {
      steps: [{ usage: aiUsage(600, 40, 0) }, { usage: aiUsage(900, 60, 512) }],
      totalUsage: aiUsage(1_500, 100, 512),
    };
    expect(AiSdkResponseUsage.parse(serialized)).toEqual({
      input_tokens: 900,
      output_tokens: 60,
      cached_input_tokens: 512,
      calls: 2,
    });
    // The deprecated cachedInputTokens, when the details are not there.
    expect(
      AiSdkResponseUsage.parse({
        usage: { inputTokens: 10, outputTokens: 1, cachedInputTokens: 4 },
      }),
    ).toEqual({ input_tokens: 10, output_tokens: 1, cached_input_tokens: 4 });
  });
});

describe("formatTurnUsage", () => {
  const refusal = (body: Parameters<typeof formatTurnUsage>[0]) => {
    try {
      formatTurnUsage(body);
    } catch (error) {
      if (error instanceof InvalidInputError)
        return { message: error.message, issues: error.issues };
      throw error;
    }
    throw new Error("not refused");
  };

  it("is the posted usage, or the response's", () => {
    expect(formatTurnUsage({ format: "openai-chat", usage: { input_tokens: 5 } })).toEqual({
      input_tokens: 5,
    });
    expect(formatTurnUsage({ format: "openai-chat" })).toBeUndefined();
    expect(formatTurnUsage({ format: "anthropic-messages", response: anthropic })).toEqual({
      input_tokens: 6_525,
      output_tokens: 310,
      cached_input_tokens: 6_000,
    });
  });

  it("refuses both, a response without usage, and counts that break usage's rules", () => {
    expect(refusal({ format: "openai-chat", usage: { input_tokens: 5 }, response: chat })).toEqual({
      message: "post either `usage` or the `response` it is read from, not both",
      issues: [{ pointer: "/response", detail: "not with usage" }],
    });
    expect(refusal({ format: "openai-responses", response: { id: "resp_1" } })).toMatchObject({
      issues: [{ pointer: "/response/usage" }],
    });
    expect(
      refusal({ format: "openai-chat", response: { usage: { prompt_tokens: 1.5 } } }),
    ).toMatchObject({ issues: [{ pointer: "/response/usage/prompt_tokens" }] });
    expect(
      refusal({ format: "ai-sdk", response: { steps: [{ usage: { outputTokens: 3 } }] } }),
    ).toMatchObject({ issues: [{ pointer: "/response/steps/0/usage/inputTokens" }] });
    // More cached than input: TurnUsageSchema's rule.
    expect(
      refusal({
        format: "openai-chat",
        response: { usage: { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 11 } } },
      }),
    ).toMatchObject({ issues: [{ pointer: "/response/cached_input_tokens" }] });
  });
});

describe("counts a response does not report", () => {
  it.each([
    ["openai-chat", { usage: { prompt_tokens: 9, completion_tokens: null } }],
    [
      "openai-chat",
      { usage: { prompt_tokens: 9, prompt_tokens_details: { cached_tokens: null } } },
    ],
    ["openai-responses", { usage: { input_tokens: 9, output_tokens: null } }],
    [
      "anthropic-messages",
      { usage: { input_tokens: 9, output_tokens: null, cache_read_input_tokens: null } },
    ],
    ["ai-sdk", { usage: { inputTokens: 9, outputTokens: null, cachedInputTokens: null } }],
  ] as const)("%s: a null count is left out of the turn's usage (%j)", (format, response) => {
    expect(formatTurnUsage({ format, response })).toStrictEqual({ input_tokens: 9 });
  });

  it("an absent count is absent from the usage, not a key holding undefined", () => {
    expect(ChatResponseUsage.parse({ usage: { prompt_tokens: 9 } })).toStrictEqual({
      input_tokens: 9,
    });
    expect(AnthropicResponseUsage.parse({ usage: { input_tokens: 9 } })).toStrictEqual({
      input_tokens: 9,
    });
  });
});

describe("an AI SDK result without the last call's inputTokens", () => {
  const noUsage = "the response has no usage (the result's `usage`, or its last step's)";
  const noInput = "the provider reported no inputTokens";

  it.each([
    ["no usage and no steps", {}, "/response/usage", noUsage],
    ["no usage and no step", { steps: [] }, "/response/usage", noUsage],
    [
      "a last step without usage",
      { steps: [{ usage: aiUsage(5, 1, 0) }, {}] },
      "/response/usage",
      noUsage,
    ],
    [
      "a usage without inputTokens",
      { usage: { outputTokens: 3 } },
      "/response/usage/inputTokens",
      noInput,
    ],
    [
      "a last step's usage without inputTokens",
      { steps: [{ usage: aiUsage(5, 1, 0) }, { usage: { outputTokens: 3 } }] },
      "/response/steps/1/usage/inputTokens",
      noInput,
    ],
  ])("is refused: %s", (_, response, pointer, detail) => {
    let refused: unknown;
    try {
      formatTurnUsage({ format: "ai-sdk", response });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).issues).toEqual([{ pointer, detail }]);
  });

  it("the schema's issue is a custom one, at the result's usage", () => {
    const parsed = AiSdkResponseUsage.safeParse({});
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues).toMatchObject([
      { code: "custom", path: ["usage"], message: noUsage },
    ]);
  });
});
