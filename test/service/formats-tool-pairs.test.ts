/**
 * A tool approval spanning two turns, through the HTTP API (issue 27, items
 * 1 and 2; docs/architecture.md §5 "Tool pairs"): in every format turn 0 ends
 * with a call awaiting approval and turn 1 begins with its result. Both
 * posts are taken, and the projection, raw or with an omit band over the
 * call's turn or a summary over the result's, holds no result without its
 * call (test/helpers/tool-pair-rules.ts, anthropic-rules.ts).
 */
import { describe, expect, it } from "vitest";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import { harness } from "../helpers/service.ts";
import {
  aiSdkPairViolations,
  chatPairViolations,
  responsesPairViolations,
} from "../helpers/tool-pair-rules.ts";

const TURNS = "/v1/conversations/c/turns";
const AT = "2026-01-01T00:00:00Z";
type Json = Record<string, unknown>;

/** Each format's two turns: the call left pending, then its result first. */
const APPROVAL: Record<string, [Json, Json]> = {
  "openai-chat": [
    {
      messages: [
        { role: "user", content: "deploy?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "deploy", arguments: "{}" } },
          ],
        },
      ],
    },
    {
      messages: [
        { role: "tool", tool_call_id: "c1", content: "deployed" },
        { role: "assistant", content: "Done." },
      ],
    },
  ],
  "openai-responses": [
    {
      input: [
        { role: "user", content: "deploy?" },
        { type: "function_call", call_id: "c1", name: "deploy", arguments: "{}" },
      ],
    },
    {
      input: [
        { type: "function_call_output", call_id: "c1", output: "deployed" },
        { role: "assistant", content: "Done." },
      ],
    },
  ],
  "anthropic-messages": [
    {
      messages: [
        { role: "user", content: "deploy?" },
        { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "deploy", input: {} }] },
      ],
    },
    {
      messages: [
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "c1", content: "deployed" }],
        },
        { role: "assistant", content: "Done." },
      ],
    },
  ],
  "ai-sdk": [
    {
      messages: [
        { role: "user", content: "deploy?" },
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "deploy", input: {} }],
        },
      ],
    },
    {
      messages: [
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "deploy",
              output: { type: "text", value: "deployed" },
            },
          ],
        },
        { role: "assistant", content: "Done." },
      ],
    },
  ],
};

function violationsOf(format: string, body: Json): string[] {
  if (format === "openai-responses") return responsesPairViolations(body.input as Json[]);
  const messages = body.messages as Json[];
  if (format === "openai-chat") return chatPairViolations(messages);
  if (format === "ai-sdk") return aiSdkPairViolations(messages);
  return anthropicRuleViolations(messages as never);
}

describe.each(Object.keys(APPROVAL))("%s: a tool approval spanning two turns", (format) => {
  const [first, second] = APPROVAL[format] as [Json, Json];

  it("takes a turn ending in a pending call and one beginning with its result", async () => {
    const h = harness();
    expect((await h.request("POST", TURNS, { turn: 0, format, ...first })).status).toBe(202);
    const pending = (await (
      await h.request("GET", `/v1/conversations/c/projection?format=${format}`)
    ).json()) as Json;
    // The view so far ends with the call: a valid request prefix, the result to be appended.
    expect(violationsOf(format, pending)).toEqual([]);
    expect((await h.request("POST", TURNS, { turn: 1, format, ...second })).status).toBe(202);
    const read = await h.request("GET", `/v1/conversations/c/projection?format=${format}`);
    expect(violationsOf(format, (await read.json()) as Json)).toEqual([]);
  });

  it.each([
    ["an omit band over the call's turn", "t=omit:0..0"],
    ["a strip band over the call's turn", "t:0..0"],
  ])("leaves no orphan result under %s", async (_, spec) => {
    const h = harness();
    expect((await h.request("POST", TURNS, { turn: 0, format, ...first })).status).toBe(202);
    expect((await h.request("POST", TURNS, { turn: 1, format, ...second })).status).toBe(202);
    await h.request("POST", TURNS, {
      turn: 2,
      events: [
        { type: "turn_start", timestamp: AT },
        { type: "chat_request", timestamp: AT, content: "thanks" },
        { type: "chat_response", timestamp: AT, message: "You're welcome." },
      ],
    });
    expect((await h.request("POST", "/v1/conversations/c/compactions", { spec })).status).toBe(201);
    const read = await h.request("GET", `/v1/conversations/c/projection?format=${format}`);
    expect(violationsOf(format, (await read.json()) as Json)).toEqual([]);
  });
});
