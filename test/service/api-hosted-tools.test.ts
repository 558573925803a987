/**
 * Hosted tools through the HTTP API (issue 27 item 3, docs/architecture.md
 * §15 "Hosted tools"): a turn holding a provider's own tool calls is stored
 * (main answered 422), read back byte for byte in its format and as text in
 * another, and stripped by a compaction like any tool call.
 */
import { describe, expect, it } from "vitest";
import { harness } from "../helpers/service.ts";

const TURNS = "/v1/conversations/c/turns";

const ANTHROPIC_TURN = [
  { role: "user", content: "What is the weather in Paris?" },
  {
    role: "assistant",
    content: [
      {
        type: "server_tool_use",
        id: "srvtoolu_1",
        name: "web_search",
        input: { query: "Paris weather" },
      },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_1",
        content: [
          {
            type: "web_search_result",
            url: "https://example.com/paris",
            title: "Paris",
            encrypted_content: "enc",
          },
        ],
      },
      { type: "text", text: "Sunny, 21°C." },
    ],
  },
];

const RESPONSES_TURN = [
  { role: "user", content: "Search the docs" },
  {
    type: "web_search_call",
    id: "ws_1",
    status: "completed",
    action: { type: "search", query: "docs" },
  },
  { role: "assistant", content: "Found them." },
];

describe("POST …/turns with hosted tools", () => {
  it("stores an Anthropic server tool turn and reads it back byte for byte, and as text in Chat", async () => {
    const h = harness();
    const posted = await h.request("POST", TURNS, {
      turn: 0,
      format: "anthropic-messages",
      messages: ANTHROPIC_TURN,
    });
    expect(posted.status).toBe(202);
    const own = await h.request("GET", "/v1/conversations/c/projection?format=anthropic-messages");
    const body = (await own.json()) as { messages: unknown };
    expect(JSON.stringify(body.messages)).toBe(JSON.stringify(ANTHROPIC_TURN));
    const chat = await h.request("GET", "/v1/conversations/c/projection?format=openai-chat");
    expect(((await chat.json()) as { messages: unknown }).messages).toEqual([
      { role: "user", content: "What is the weather in Paris?" },
      {
        role: "assistant",
        content:
          '[hosted tool call web_search srvtoolu_1] {"query":"Paris weather"}\n' +
          '[hosted tool result srvtoolu_1] [{"type":"web_search_result","url":"https://example.com/paris","title":"Paris","encrypted_content":"enc"}]',
      },
      { role: "assistant", content: "Sunny, 21°C." },
    ]);
  });

  it("stores a Responses web_search_call and strips it under a compaction", async () => {
    const h = harness();
    for (const turn of [0, 1]) {
      const posted = await h.request("POST", TURNS, {
        turn,
        format: "openai-responses",
        input: RESPONSES_TURN,
      });
      expect(posted.status).toBe(202);
    }
    const band = await h.request("POST", "/v1/conversations/c/compactions", {
      spec: "t=strip:0..0",
    });
    expect(band.status).toBeLessThan(300);
    const read = await h.request("GET", "/v1/conversations/c/projection?format=openai-responses");
    expect(((await read.json()) as { input: unknown }).input).toEqual([
      { role: "user", content: "Search the docs" },
      { role: "assistant", content: "[hosted tool call web_search ws_1] {}" },
      { role: "assistant", content: "[hosted tool result ws_1] [compacted] web_search: success" },
      { role: "assistant", content: "Found them." },
      ...RESPONSES_TURN,
    ]);
  });
});
