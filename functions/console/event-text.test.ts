import { describe, expect, it } from "vitest";
import { eventText } from "./client/event-text.ts";

const AT = "2026-01-01T00:00:00.000000Z";

describe("the reader's text of an event", () => {
  it("shows a user message, and an assistant's message, reasoning or data", () => {
    expect(eventText({ type: "chat_request", timestamp: AT, content: "What is in README?" })).toBe(
      "What is in README?",
    );
    expect(eventText({ type: "chat_response", timestamp: AT, message: "A title." })).toBe(
      "A title.",
    );
    expect(eventText({ type: "chat_response", timestamp: AT, reasoning: "Look first." })).toBe(
      "(reasoning) Look first.",
    );
    expect(eventText({ type: "chat_response", timestamp: AT, data: { ok: true } })).toBe(
      '{"ok":true}',
    );
  });

  it("shows a tool call with its arguments, and its result", () => {
    expect(
      eventText({
        type: "tool_call_request",
        timestamp: AT,
        id: "call-1",
        name: "read_file",
        arguments: { path: "README.md" },
      }),
    ).toBe('read_file({"path":"README.md"})');
    expect(
      eventText({
        type: "tool_call_response",
        timestamp: AT,
        id: "call-1",
        content: "# autocompact",
        is_error: false,
      }),
    ).toBe("# autocompact");
  });
});
