/**
 * `fromView` answers what the Anthropic SDK accepts: the assignment below
 * compiles under `tsc` without a cast, so our own types (core imports no SDK)
 * stay a subset of `MessageParam`. The runtime assertions check the same view
 * really becomes the expected body.
 */
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import { describe, expect, it } from "vitest";
import { anthropicMessages } from "../../core/formats/anthropic-messages.ts";
import { rawView } from "../../core/formats/view.ts";

const timestamp = "2026-01-01T00:00:00Z";

describe("anthropic-messages output type", () => {
  it("is assignable to the SDK's MessageParam[] and carries every kind of block", () => {
    const posted = [
      {
        role: "user",
        content: [
          { type: "text", text: "look", cache_control: { type: "ephemeral" } },
          { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hmm", signature: "sig" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok", is_error: true }],
      },
      { role: "assistant", content: "done" },
    ];
    const { events } = anthropicMessages.toEvents(posted, { timestamp, dropSystem: false });
    const messages: MessageParam[] = anthropicMessages.fromView(rawView(events));
    expect(messages).toEqual(posted);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    // …and makes a whole request body as the SDK types it.
    const body: MessageCreateParamsNonStreaming = { model: "claude", max_tokens: 1, messages };
    expect(body.messages).toHaveLength(4);
  });
});
