/**
 * Inputs the platforms send that were refused with a 422 (issue 27): Chat
 * custom tool calls, Responses `item_reference`, Anthropic `search_result`
 * and `container_upload` blocks, AI SDK tool approvals spanning two turns.
 * Each posted shape is typed by the pinned SDK's own request types (so it is
 * one the SDK sends), goes back byte for byte in its own format, reads as
 * documented text in the others, and stays a valid request under compaction.
 */
import type {
  MessageParam,
  SearchResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import type { ModelMessage } from "ai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import type { Compaction, Entry } from "../../core/events.ts";
import { aiSdk } from "../../core/formats/ai-sdk.ts";
import { anthropicMessages } from "../../core/formats/anthropic-messages.ts";
import type { ProviderFormat } from "../../core/formats/format.ts";
import { openaiChat } from "../../core/formats/openai-chat.ts";
import { openaiResponses } from "../../core/formats/openai-responses.ts";
import { projectedView, rawView } from "../../core/formats/view.ts";
import { aiSdkSchemaIssues } from "../helpers/ai-sdk-arbitraries.ts";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import { at, compaction } from "../helpers/builders.ts";
import { openaiChatMessageErrors, openaiResponsesInputErrors } from "../helpers/openai-schema.ts";
import {
  aiSdkPairViolations,
  chatPairViolations,
  responsesPairViolations,
} from "../helpers/tool-pair-rules.ts";

type Json = Record<string, unknown>;

/** The events of `turns` posted one after the other in `format`. */
function streamOf<M>(format: ProviderFormat<M>, turns: readonly unknown[][]): Entry[] {
  return turns.flatMap(
    (turn, k) => format.toEvents(turn, { timestamp: at(k), dropSystem: false }).events,
  );
}

/** Every structural or schema rule a view breaks, in each format. */
function violations(stream: readonly Entry[]): string[] {
  const view = projectedView(stream);
  const chat = openaiChat.fromView(view) as unknown as Json[];
  const responses = openaiResponses.fromView(view) as unknown as Json[];
  const anthropic = anthropicMessages.fromView(view);
  const next = { role: "user", content: "next" };
  return [
    ...chatPairViolations(chat),
    ...openaiChatMessageErrors([...chat, next]),
    ...responsesPairViolations(responses),
    ...openaiResponsesInputErrors([...responses, next]),
    ...anthropicRuleViolations(anthropic as never),
    ...aiSdkPairViolations(aiSdk.fromView(view) as unknown as Json[]),
  ];
}

const strip = (from: number, to: number): Compaction =>
  compaction(from, to, 100, {
    tool_calls: { policy: "strip", request: true, response: true },
    reasoning: "strip",
  });
const omit = (from: number, to: number): Compaction =>
  compaction(from, to, 100, { tool_calls: { policy: "omit" } });

describe("Chat Completions custom tool calls", () => {
  const turn: ChatCompletionMessageParam[] = [
    { role: "user", content: "patch it" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "custom", custom: { name: "apply_patch", input: "*** Begin Patch" } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "patched" },
    { role: "assistant", content: "Done." },
  ];

  it("go back as posted, their input as JP's arguments.input", () => {
    const stream = streamOf(openaiChat, [turn]);
    expect(stream[2]).toMatchObject({
      type: "tool_call_request",
      id: "call_1",
      name: "apply_patch",
      arguments: { input: "*** Begin Patch" },
    });
    expect(JSON.stringify(openaiChat.fromView(rawView(stream)))).toBe(JSON.stringify(turn));
    // Elsewhere a function call of that name: Responses takes it with its JSON arguments.
    expect(openaiResponses.fromView(rawView(stream))[1]).toEqual({
      type: "function_call",
      call_id: "call_1",
      name: "apply_patch",
      arguments: '{"input":"*** Begin Patch"}',
    });
    expect(violations(stream)).toEqual([]);
  });

  it("stay custom when stripped: the input is the stripped arguments' text", () => {
    const stream = [
      ...streamOf(openaiChat, [turn, [{ role: "user", content: "next" }]]),
      strip(0, 0),
    ];
    const [, call, result] = openaiChat.fromView(projectedView(stream));
    expect(call).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "custom", custom: { name: "apply_patch", input: "{}" } }],
    });
    expect(result).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "[compacted] apply_patch: success",
    });
    expect(violations(stream)).toEqual([]);
  });
});

describe("Responses item_reference", () => {
  const turn: ResponseInputItem[] = [
    { role: "user", content: "go on" },
    { type: "item_reference", id: "msg_abc" },
    { role: "user", content: "and then?" },
  ];

  it("goes back verbatim, and reads as assistant text in the other formats", () => {
    const stream = streamOf(openaiResponses, [turn]);
    expect(stream[2]).toMatchObject({ type: "chat_response", message: "[item reference msg_abc]" });
    expect(JSON.stringify(openaiResponses.fromView(rawView(stream)))).toBe(JSON.stringify(turn));
    expect(openaiChat.fromView(rawView(stream))[1]).toEqual({
      role: "assistant",
      content: "[item reference msg_abc]",
    });
    expect(violations(stream)).toEqual([]);
  });

  it("becomes that text in a turn whose reasoning is stripped (the item it names may be gone)", () => {
    const stream = [
      ...streamOf(openaiResponses, [turn, [{ role: "user", content: "x" }]]),
      strip(0, 0),
    ];
    expect(openaiResponses.fromView(projectedView(stream))[1]).toEqual({
      role: "assistant",
      content: "[item reference msg_abc]",
    });
    expect(violations(stream)).toEqual([]);
  });
});

describe("Anthropic search_result and container_upload blocks", () => {
  const source: SearchResultBlockParam = {
    type: "search_result",
    source: "https://example.com/paris",
    title: "Paris",
    content: [{ type: "text", text: "Paris is the capital of France." }],
    citations: { enabled: true },
  };
  const turn: MessageParam[] = [
    {
      role: "user",
      content: [
        { type: "text", text: "Using these:" },
        source,
        { type: "container_upload", file_id: "file_011" },
      ],
    },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_1", name: "search", input: { q: "lyon" } }],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ ...source, title: "Lyon", content: [{ type: "text", text: "Lyon." }] }],
        },
      ],
    },
    { role: "assistant", content: "Paris." },
  ];

  it("go back verbatim; their texts are the events' content, so other formats and the estimate see them", () => {
    const stream = streamOf(anthropicMessages, [turn]);
    expect(stream[1]).toMatchObject({
      type: "chat_request",
      content: "Using these:\nParis is the capital of France.",
    });
    expect(stream[3]).toMatchObject({ type: "tool_call_response", content: "Lyon." });
    expect(JSON.stringify(anthropicMessages.fromView(rawView(stream)))).toBe(JSON.stringify(turn));
    expect(openaiChat.fromView(rawView(stream))[0]).toEqual({
      role: "user",
      content: "Using these:\nParis is the capital of France.",
    });
    expect(violations(stream)).toEqual([]);
  });

  it("a stripped result loses its search results for the placeholder", () => {
    const stream = [
      ...streamOf(anthropicMessages, [turn, [{ role: "user", content: "x" }]]),
      strip(0, 0),
    ];
    expect(anthropicMessages.fromView(projectedView(stream))[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "[compacted] search: success" },
      ],
    });
    expect(violations(stream)).toEqual([]);
  });
});

describe("AI SDK tool approvals spanning two turns", () => {
  // Turn 0 ends on the call waiting for approval; turn 1 begins with the user's answer and the result.
  const asked: ModelMessage[] = [
    { role: "user", content: "clean up" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "I will delete tmp." },
        { type: "tool-call", toolCallId: "call_1", toolName: "delete", input: { path: "tmp" } },
        { type: "tool-approval-request", approvalId: "ap_1", toolCallId: "call_1" },
      ],
    },
  ];
  const answered: ModelMessage[] = [
    {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: "ap_1", approved: true }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "delete",
          output: { type: "text", value: "deleted" },
        },
      ],
    },
    { role: "assistant", content: "Deleted." },
  ];

  it("go back as posted, each turn and both, and pass the package's schema", async () => {
    const stream = streamOf(aiSdk, [asked, answered]);
    const back = aiSdk.fromView(rawView(stream));
    expect(JSON.stringify(back)).toBe(JSON.stringify([...asked, ...answered]));
    expect(await aiSdkSchemaIssues(back)).toEqual([]);
    // Cut after turn 0: a valid prefix, the call pending with its request.
    const first = aiSdk.fromView(rawView(streamOf(aiSdk, [asked])));
    expect(JSON.stringify(first)).toBe(JSON.stringify(asked));
    expect(violations(stream)).toEqual([]);
  });

  it("other formats see the call pending at turn 0's end and its result first in turn 1", () => {
    const stream = streamOf(aiSdk, [asked, answered]);
    expect(openaiChat.fromView(rawView(stream))).toEqual([
      { role: "user", content: "clean up" },
      {
        role: "assistant",
        content: "I will delete tmp.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "delete", arguments: '{"path":"tmp"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "deleted" },
      { role: "assistant", content: "Deleted." },
    ]);
  });

  it("go where their call and result go: kept under strip, gone under omit", async () => {
    const later = [{ role: "user", content: "thanks" }];
    const stripped = [...streamOf(aiSdk, [asked, answered, later]), strip(0, 0)];
    const kept = aiSdk.fromView(projectedView(stripped)) as unknown as Json[];
    expect(kept.slice(1, 4)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "I will delete tmp." },
          { type: "tool-call", toolCallId: "call_1", toolName: "delete", input: {} },
          { type: "tool-approval-request", approvalId: "ap_1", toolCallId: "call_1" },
        ],
      },
      answered[0],
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "delete",
            output: { type: "text", value: "[compacted] delete: success" },
          },
        ],
      },
    ]);
    expect(await aiSdkSchemaIssues(kept)).toEqual([]);
    expect(violations(stripped)).toEqual([]);
    const omitted = [...streamOf(aiSdk, [asked, answered, later]), omit(0, 0)];
    expect(aiSdk.fromView(projectedView(omitted))).toEqual([
      { role: "user", content: "clean up" },
      { role: "assistant", content: "I will delete tmp." },
      { role: "assistant", content: "Deleted." },
      { role: "user", content: "thanks" },
    ]);
    expect(violations(omitted)).toEqual([]);
  });

  it("a denial: the SDK's execution-denied result carries the response", () => {
    const denied: ModelMessage[] = [
      {
        role: "tool",
        content: [
          { type: "tool-approval-response", approvalId: "ap_1", approved: false, reason: "no" },
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "delete",
            output: { type: "execution-denied", reason: "no" },
          },
        ],
      },
    ];
    const stream = streamOf(aiSdk, [asked, denied]);
    expect(stream.at(-1)).toMatchObject({
      type: "tool_call_response",
      content: "no",
      is_error: true,
    });
    expect(JSON.stringify(aiSdk.fromView(rawView(stream)))).toBe(
      JSON.stringify([...asked, ...denied]),
    );
    expect(violations(stream)).toEqual([]);
  });
});
