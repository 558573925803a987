import { describe, expect, it } from "vitest";
import { detectTranscriptFormat } from "./input.ts";

describe("detectTranscriptFormat", () => {
  it.each([
    [
      "a Responses item",
      [[{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }]],
      "openai-responses",
    ],
    [
      "a Responses part",
      [[{ role: "user", content: [{ type: "input_text", text: "hi" }] }]],
      "openai-responses",
    ],
    ["an AI SDK tool message", [[{ role: "tool", content: [] }]], "ai-sdk"],
    [
      "an AI SDK tool-call part",
      [[{ role: "assistant", content: [{ type: "tool-call" }] }]],
      "ai-sdk",
    ],
    [
      "an AI SDK image part",
      [[{ role: "user", content: [{ type: "image", image: "https://x/y.png" }] }]],
      "ai-sdk",
    ],
    [
      "an AI SDK file part",
      [[{ role: "user", content: [{ type: "file", data: "…", mediaType: "application/pdf" }] }]],
      "ai-sdk",
    ],
    [
      "an Anthropic image block",
      [[{ role: "user", content: [{ type: "image", source: { type: "url", url: "u" } }] }]],
      "anthropic-messages",
    ],
    [
      "an Anthropic tool_use block",
      [[{ role: "assistant", content: [{ type: "tool_use" }] }]],
      "anthropic-messages",
    ],
    ["a Chat tool message", [[{ role: "tool", tool_call_id: "c", content: "ok" }]], "openai-chat"],
    [
      "a Chat file part",
      [[{ role: "user", content: [{ type: "file", file: { file_id: "f" } }] }]],
      "openai-chat",
    ],
    ["text only, in a later turn", [[], [{ role: "user", content: "hi" }]], "openai-chat"],
  ])("reads %s as its format", (_, transcript, format) => {
    expect(detectTranscriptFormat(transcript)).toBe(format);
  });
});
