/**
 * Hosted tools (docs/architecture.md §15 "Hosted tools"): every hosted item
 * or block the pinned SDKs allow in a request is taken (main answered 422
 * for each family below), given back byte for byte in its own format,
 * written as assistant text in the others, and compacted by tool policies.
 */
import { describe, expect, it } from "vitest";
import { at, compaction } from "../../test/helpers/builders.ts";
import { openaiResponsesInputErrors } from "../../test/helpers/openai-schema.ts";
import { RESPONSES_ITEMS } from "../../test/helpers/responses-hosted-items.ts";
import type { Entry, ToolCallRequest, ToolCallResponse } from "../events.ts";
import { checkTurnShape } from "../turn-validation.ts";
import { aiSdk } from "./ai-sdk.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import type { ProviderFormat } from "./format.ts";
import { hostedOf, hostedText, payloadText, verbatimHosted } from "./hosted.ts";
import { openaiChat } from "./openai-chat.ts";
import { openaiResponses } from "./openai-responses.ts";
import { projectedView, rawView, type ViewEvent, type ViewTurn } from "./view.ts";

const options = { timestamp: at(0), dropSystem: false };

/** The events of `turns` posted one after the other in `format`, each a turn the service stores. */
function post(format: ProviderFormat, ...turns: unknown[][]): Entry[] {
  return turns.flatMap((turn, k) => {
    const { events } = format.toEvents(turn, options);
    checkTurnShape(k, events);
    return events;
  });
}

/** What `format` gives back for the raw stream, as JSON text (byte-exact comparison). */
function echoed(format: ProviderFormat, events: readonly Entry[]): string {
  return JSON.stringify(format.fromView(rawView(events)));
}

const search = {
  type: "server_tool_use",
  id: "srvtoolu_1",
  name: "web_search",
  input: { query: "weather" },
  cache_control: { type: "ephemeral" },
};
const searchResult = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_1",
  content: [
    {
      type: "web_search_result",
      url: "https://example.com/w",
      title: "W",
      encrypted_content: "enc==",
      page_age: null,
    },
  ],
};

/** Anthropic's server tool result families, each answering a `server_tool_use` of its tool. */
const ANTHROPIC_FAMILIES: [string, Record<string, unknown>][] = [
  ["web_search", searchResult],
  [
    "web_fetch",
    {
      type: "web_fetch_tool_result",
      tool_use_id: "srvtoolu_1",
      content: {
        type: "web_fetch_result",
        url: "https://example.com",
        content: {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "d" },
        },
      },
    },
  ],
  [
    "code_execution",
    {
      type: "code_execution_tool_result",
      tool_use_id: "srvtoolu_1",
      content: {
        type: "code_execution_result",
        stdout: "1",
        stderr: "",
        return_code: 0,
        content: [],
      },
    },
  ],
  [
    "bash_code_execution",
    {
      type: "bash_code_execution_tool_result",
      tool_use_id: "srvtoolu_1",
      content: { type: "bash_code_execution_tool_result_error", error_code: "unavailable" },
    },
  ],
  [
    "text_editor_code_execution",
    {
      type: "text_editor_code_execution_tool_result",
      tool_use_id: "srvtoolu_1",
      content: { type: "text_editor_code_execution_create_result", is_file_update: false },
    },
  ],
  [
    "tool_search_tool_regex",
    {
      type: "tool_search_tool_result",
      tool_use_id: "srvtoolu_1",
      content: { type: "tool_search_tool_search_result", tool_references: [] },
    },
  ],
];

const user = { role: "user", content: "look it up" };

describe("Anthropic server tools", () => {
  for (const [name, result] of ANTHROPIC_FAMILIES) {
    it(`takes server_tool_use ${name} and its ${String(result.type)}, given back byte for byte`, () => {
      const posted = [
        user,
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me check." },
            { ...search, name, input: { q: name } },
            result,
            { type: "text", text: "Done." },
          ],
        },
      ];
      const events = post(anthropicMessages, posted);
      expect(echoed(anthropicMessages, events)).toBe(JSON.stringify(posted));
    });
  }

  it("maps a server tool to JP tool events carrying the blocks verbatim", () => {
    const events = post(anthropicMessages, [
      user,
      { role: "assistant", content: [search, searchResult] },
    ]);
    expect(events.slice(2)).toEqual([
      {
        type: "tool_call_request",
        timestamp: at(0),
        id: "srvtoolu_1",
        name: "web_search",
        arguments: { query: "weather" },
        metadata: { "anthropic-messages": { hosted: search } },
      },
      {
        type: "tool_call_response",
        timestamp: at(0),
        id: "srvtoolu_1",
        content:
          '[{"type":"web_search_result","url":"https://example.com/w","title":"W","encrypted_content":"enc==","page_age":null}]',
        is_error: false,
        metadata: { "anthropic-messages": { hosted: searchResult } },
      },
    ]);
  });

  it("marks a result whose content is an *_error block as an error", () => {
    const [, bash] = ANTHROPIC_FAMILIES[3] as [string, Record<string, unknown>];
    const events = post(anthropicMessages, [
      user,
      { role: "assistant", content: [{ ...search, name: "bash_code_execution" }, bash] },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "tool_call_response", is_error: true });
  });

  it("refuses a server tool result in a user message (400: the API puts them in the assistant's)", () => {
    expect(() => post(anthropicMessages, [{ role: "user", content: [searchResult] }])).toThrow(
      "messages[0].content[0].type: a user message takes text, image, document, search_result, container_upload and tool_result blocks",
    );
  });
});

/** How Chat writes RESPONSES_ITEMS[0], the web search. */
const SEARCH_TEXT =
  '[hosted tool call web_search ws_1] {"action":{"type":"search","query":"x"}}\n[hosted tool result ws_1]';

describe("Responses hosted and built-in tool items", () => {
  it("are valid input items by OpenAI's published schema (the fixtures below are real bodies)", () => {
    expect(
      openaiResponsesInputErrors([{ role: "user", content: "x" }, ...RESPONSES_ITEMS]),
    ).toEqual([]);
  });

  // A call and its output are one family: a call left pending must end its turn.
  const families = RESPONSES_ITEMS.reduce<Record<string, unknown>[][]>((out, item) => {
    if (String(item.type).endsWith("_output") || item.type === "mcp_approval_response") {
      out.at(-1)?.push(item);
    } else out.push([item]);
    return out;
  }, []);
  for (const family of families) {
    it(`takes ${family.map((item) => String(item.type)).join(" and ")}, given back byte for byte`, () => {
      const posted = [
        { role: "user", content: "go" },
        ...family,
        { role: "assistant", content: "ok" },
      ];
      expect(echoed(openaiResponses, post(openaiResponses, posted))).toBe(JSON.stringify(posted));
    });
  }

  it("maps a whole item to a call and its result, a call and its output to one event each", () => {
    const events = post(openaiResponses, [
      { role: "user", content: "go" },
      RESPONSES_ITEMS[5],
      RESPONSES_ITEMS[6],
      RESPONSES_ITEMS[7],
    ]);
    expect(events.slice(2)).toEqual([
      {
        type: "tool_call_request",
        timestamp: at(0),
        id: "mc_1",
        name: "t",
        arguments: { server_label: "s", name: "t", arguments: '{"a": 1}' },
        metadata: { "openai-responses": { hosted: RESPONSES_ITEMS[5] } },
      },
      {
        type: "tool_call_response",
        timestamp: at(0),
        id: "mc_1",
        content: "done",
        is_error: false,
        metadata: { "openai-responses": { hosted: true } },
      },
      {
        type: "tool_call_request",
        timestamp: at(0),
        id: "call_c",
        name: "computer",
        arguments: { pending_safety_checks: [], action: { type: "screenshot" } },
        metadata: { "openai-responses": { hosted: RESPONSES_ITEMS[6] } },
      },
      {
        type: "tool_call_response",
        timestamp: at(0),
        id: "call_c",
        content: '{"type":"computer_screenshot","image_url":"https://example.com/s.png"}',
        is_error: false,
        metadata: { "openai-responses": { hosted: RESPONSES_ITEMS[7] } },
      },
    ]);
  });

  it("takes a computer call pending at the end of a turn, and its output first in the next", () => {
    const events = post(
      openaiResponses,
      [{ role: "user", content: "go" }, RESPONSES_ITEMS[6]],
      [RESPONSES_ITEMS[7], { role: "user", content: "next" }],
    );
    expect(echoed(openaiResponses, events)).toBe(
      JSON.stringify([
        { role: "user", content: "go" },
        RESPONSES_ITEMS[6],
        RESPONSES_ITEMS[7],
        { role: "user", content: "next" },
      ]),
    );
  });
});

describe("AI SDK provider-executed tools", () => {
  const call = {
    type: "tool-call",
    toolCallId: "ws_1",
    toolName: "web_search",
    input: { query: "x" },
    providerExecuted: true,
  };
  const result = {
    type: "tool-result",
    toolCallId: "ws_1",
    toolName: "web_search",
    output: { type: "json", value: [{ url: "https://example.com" }] },
  };

  it("takes a provider-executed call and its result in the assistant message, given back byte for byte", () => {
    const posted = [
      { role: "user", content: "go" },
      { role: "assistant", content: [call, result, { type: "text", text: "done" }] },
    ];
    const events = post(aiSdk, posted);
    expect(echoed(aiSdk, events)).toBe(JSON.stringify(posted));
    expect(events[2]).toMatchObject({ type: "tool_call_request", id: "ws_1", name: "web_search" });
    expect(events[3]).toMatchObject({
      type: "tool_call_response",
      id: "ws_1",
      content: '[{"url":"https://example.com"}]',
    });
  });
});

describe("in another format", () => {
  // Posted in each test: main refused it (422) at posting.
  const events = () =>
    post(anthropicMessages, [
      user,
      { role: "assistant", content: [search, searchResult, { type: "text", text: "Sunny." }] },
    ]);
  const callText = '[hosted tool call web_search srvtoolu_1] {"query":"weather"}';
  const resultText =
    '[hosted tool result srvtoolu_1] [{"type":"web_search_result","url":"https://example.com/w","title":"W","encrypted_content":"enc==","page_age":null}]';

  it("is assistant text in Chat, before the next message", () => {
    expect(openaiChat.fromView(rawView(events()))).toEqual([
      { role: "user", content: "look it up" },
      { role: "assistant", content: `${callText}\n${resultText}` },
      { role: "assistant", content: "Sunny." },
    ]);
  });

  it("is assistant text in Responses and in the AI SDK", () => {
    expect(openaiResponses.fromView(rawView(events()))).toEqual([
      { role: "user", content: "look it up" },
      { role: "assistant", content: callText },
      { role: "assistant", content: resultText },
      { role: "assistant", content: "Sunny." },
    ]);
    expect(aiSdk.fromView(rawView(events()))).toEqual([
      { role: "user", content: "look it up" },
      {
        role: "assistant",
        content: [
          { type: "text", text: callText },
          { type: "text", text: resultText },
          { type: "text", text: "Sunny." },
        ],
      },
    ]);
  });

  it("never splits a function call from its results in Chat", () => {
    const mixed = post(openaiResponses, [
      { role: "user", content: "go" },
      { type: "function_call", call_id: "f1", name: "read", arguments: "{}" },
      RESPONSES_ITEMS[0],
      { type: "function_call_output", call_id: "f1", output: "x" },
    ]);
    expect(openaiChat.fromView(rawView(mixed))).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "f1", type: "function", function: { name: "read", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "f1", content: "x" },
      {
        role: "assistant",
        content:
          '[hosted tool call web_search ws_1] {"action":{"type":"search","query":"x"}}\n[hosted tool result ws_1]',
      },
    ]);
  });

  it("writes the text in Chat before the assistant message a later call joins", () => {
    const joined = post(openaiResponses, [
      { role: "user", content: "go" },
      { role: "assistant", content: "Searching." },
      RESPONSES_ITEMS[0],
      { type: "function_call", call_id: "f1", name: "read", arguments: "{}" },
      { type: "function_call_output", call_id: "f1", output: "a" },
    ]);
    expect(openaiChat.fromView(rawView(joined))).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: SEARCH_TEXT },
      {
        role: "assistant",
        content: "Searching.",
        tool_calls: [{ id: "f1", type: "function", function: { name: "read", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "f1", content: "a" },
    ]);
  });

  it("writes the text in Chat as the assistant message a call joins when none is open", () => {
    const joining = post(openaiResponses, [
      { role: "user", content: "go" },
      RESPONSES_ITEMS[0],
      { type: "function_call", call_id: "f1", name: "read", arguments: "{}" },
      { type: "function_call_output", call_id: "f1", output: "a" },
    ]);
    expect(openaiChat.fromView(rawView(joining))).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: SEARCH_TEXT,
        tool_calls: [{ id: "f1", type: "function", function: { name: "read", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "f1", content: "a" },
    ]);
  });

  it("writes the text in Chat after answered calls, and before a call run with one pending", () => {
    const ids = ["f1", "f2", "f3"];
    const calls = ids.map((id) => ({
      type: "function_call",
      call_id: id,
      name: "read",
      arguments: "{}",
    }));
    const chatCalls = {
      role: "assistant",
      content: null,
      tool_calls: ids.map((id) => ({
        id,
        type: "function",
        function: { name: "read", arguments: "{}" },
      })),
    };
    const answered = post(openaiResponses, [
      { role: "user", content: "go" },
      ...calls,
      { type: "function_call_output", call_id: "f1", output: "a" },
      { type: "function_call_output", call_id: "f2", output: "b" },
      { type: "function_call_output", call_id: "f3", output: "c" },
      RESPONSES_ITEMS[0],
    ]);
    expect(openaiChat.fromView(rawView(answered))).toEqual([
      { role: "user", content: "go" },
      chatCalls,
      { role: "tool", tool_call_id: "f1", content: "a" },
      { role: "tool", tool_call_id: "f2", content: "b" },
      { role: "tool", tool_call_id: "f3", content: "c" },
      { role: "assistant", content: SEARCH_TEXT },
    ]);
    const onePending = post(openaiResponses, [
      { role: "user", content: "go" },
      ...calls,
      { type: "function_call_output", call_id: "f1", output: "a" },
      { type: "function_call_output", call_id: "f2", output: "b" },
      RESPONSES_ITEMS[0],
    ]);
    expect(openaiChat.fromView(rawView(onePending))).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: SEARCH_TEXT },
      chatCalls,
      { role: "tool", tool_call_id: "f1", content: "a" },
      { role: "tool", tool_call_id: "f2", content: "b" },
    ]);
  });

  it("keeps a pending call last in Chat: the text goes before the call's message", () => {
    const pending = post(openaiResponses, [
      { role: "user", content: "go" },
      { type: "function_call", call_id: "f1", name: "read", arguments: "{}" },
      RESPONSES_ITEMS[0],
    ]);
    expect(openaiChat.fromView(rawView(pending))).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content:
          '[hosted tool call web_search ws_1] {"action":{"type":"search","query":"x"}}\n[hosted tool result ws_1]',
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "f1", type: "function", function: { name: "read", arguments: "{}" } }],
      },
    ]);
  });

  it("is text in Anthropic for a Responses item", () => {
    const items = post(openaiResponses, [{ role: "user", content: "go" }, RESPONSES_ITEMS[3]]);
    expect(anthropicMessages.fromView(rawView(items))).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "[hosted tool call image_generation ig_1] {}" },
          { type: "text", text: "[hosted tool result ig_1] [generated image]" },
        ],
      },
    ]);
  });
});

describe("under tool policies", () => {
  const turn = [
    user,
    { role: "assistant", content: [search, searchResult, { type: "text", text: "Sunny." }] },
  ];
  const raw = () => post(anthropicMessages, turn, [user, { role: "assistant", content: "again" }]);

  it("strip replaces the payloads with the placeholder, as text even in their own format", () => {
    const stream = [
      ...raw(),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    expect(anthropicMessages.fromView(projectedView(stream))).toEqual([
      { role: "user", content: "look it up" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "[hosted tool call web_search srvtoolu_1] {}" },
          { type: "text", text: "[hosted tool result srvtoolu_1] [compacted] web_search: success" },
          { type: "text", text: "Sunny." },
        ],
      },
      { role: "user", content: "look it up" },
      { role: "assistant", content: "again" },
    ]);
  });

  it("strip of the result alone writes the call as text too (half a pair is no valid body)", () => {
    const stream = [
      ...raw(),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: false, response: true } }),
    ];
    const [, assistant] = anthropicMessages.fromView(projectedView(stream));
    expect(assistant?.content).toEqual([
      { type: "text", text: '[hosted tool call web_search srvtoolu_1] {"query":"weather"}' },
      { type: "text", text: "[hosted tool result srvtoolu_1] [compacted] web_search: success" },
      { type: "text", text: "Sunny." },
    ]);
  });

  it("omit removes them, and a later untouched turn keeps its blocks verbatim", () => {
    const twice = post(anthropicMessages, turn, turn);
    const stream = [...twice, compaction(0, 0, 10, { tool_calls: { policy: "omit" } })];
    expect(anthropicMessages.fromView(projectedView(stream))).toEqual([
      { role: "user", content: "look it up" },
      { role: "assistant", content: "Sunny." },
      ...turn,
    ]);
  });

  it("a Responses item in a turn whose reasoning is stripped is written as text (it needs its id)", () => {
    const items = post(
      openaiResponses,
      [{ role: "user", content: "go" }, RESPONSES_ITEMS[0]],
      [{ role: "user", content: "next" }],
    );
    const stream = [...items, compaction(0, 0, 10, { reasoning: "strip" })];
    expect(openaiResponses.fromView(projectedView(stream))).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: '[hosted tool call web_search ws_1] {"action":{"type":"search","query":"x"}}',
      },
      { role: "assistant", content: "[hosted tool result ws_1]" },
      { role: "user", content: "next" },
    ]);
  });
});

describe("the hosted helpers", () => {
  const call = (id: string, metadata: Record<string, unknown>): ToolCallRequest => ({
    type: "tool_call_request",
    timestamp: at(0),
    id,
    name: "web_search",
    arguments: { q: "x" },
    metadata,
  });
  const result = (id: string, metadata: Record<string, unknown>): ToolCallResponse => ({
    type: "tool_call_response",
    timestamp: at(0),
    id,
    content: "found",
    is_error: false,
    metadata,
  });
  const turn = (...events: ViewEvent[]): ViewTurn => ({
    events,
    reasoningStripped: false,
    summary: false,
  });

  it("finds the hosted item of a tool event under whichever format holds one", () => {
    const metadata = { other: null, plain: { id: "x" }, fmt: { hosted: true } };
    expect(hostedOf(call("c1", metadata))).toEqual({ format: "fmt", hosted: true });
    expect(hostedOf(result("c1", { fmt: { hosted: { type: "x" } } }))).toEqual({
      format: "fmt",
      hosted: { type: "x" },
    });
    expect(hostedOf(call("c1", { fmt: { hosted: "text" } }))).toBeUndefined();
    const chat = { type: "chat_response", timestamp: at(0), content: "hi", metadata } as const;
    expect(hostedOf(chat)).toBeUndefined();
  });

  it("goes back verbatim pair by pair: an id repeated in a later turn starts a pair of its own", () => {
    const hosted = { fmt: { hosted: { type: "item" } } };
    const first = { event: call("c1", hosted), rewritten: false };
    const firstResult = { event: result("c1", { fmt: { hosted: true } }), rewritten: false };
    const again = { event: { ...call("c1", hosted), timestamp: at(1) }, rewritten: false };
    const againResult = {
      event: { ...result("c1", { fmt: { hosted: true } }), timestamp: at(1) },
      rewritten: false,
    };
    const foreign = { event: call("c2", { other: { hosted: true } }), rewritten: false };
    const view = [turn(first, firstResult, foreign), turn(again, againResult)];
    const usable = (viewEvent: ViewEvent) => viewEvent !== first;
    expect(verbatimHosted(view, "fmt", usable)).toEqual(new Set([again, againResult]));
    expect(verbatimHosted(view, "fmt", () => true)).toEqual(
      new Set([first, firstResult, again, againResult]),
    );
  });

  it("writes a result's id, its error mark and its content, the content left out when empty", () => {
    expect(hostedText({ ...result("c1", {}), is_error: true })).toBe(
      "[hosted tool result c1 (error)] found",
    );
    expect(hostedText({ ...result("c1", {}), content: "" })).toBe("[hosted tool result c1]");
    expect(hostedText(call("c1", {}))).toBe('[hosted tool call web_search c1] {"q":"x"}');
  });

  it.each([
    ["nothing", undefined, ""],
    ["null", null, ""],
    ["a string", "as is", "as is"],
    ["an empty string", "", ""],
    ["an object", { a: [1] }, '{"a":[1]}'],
    ["a number", 0, "0"],
  ])("writes %s as payload text", (_, value, text) => {
    expect(payloadText(value)).toBe(text);
  });
});
