/**
 * Anthropic's server tool blocks in the Messages format (docs/architecture.md
 * §15 "Hosted tools"): how a posted `server_tool_use` and its result become
 * JP tool events, and when a stored block goes back verbatim rather than as
 * text. Round trips of every result family are in ./hosted.test.ts.
 */
import { describe, expect, it } from "vitest";
import { at, request, toolCall, toolResult, turnStart } from "../../test/helpers/builders.ts";
import type { Entry } from "../events.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import { rawView } from "./view.ts";

const META = "anthropic-messages";

/** The events of one posted turn: a user question, then the assistant's `blocks`. */
function post(blocks: unknown[]): Entry[] {
  const messages = [
    { role: "user", content: "look it up" },
    { role: "assistant", content: blocks },
  ];
  return anthropicMessages.toEvents(messages, { timestamp: at(0), dropSystem: false }).events;
}

const call = (input: unknown) => ({
  type: "server_tool_use",
  id: "srvtoolu_1",
  name: "web_search",
  input,
});
const result = (content: unknown) => ({
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_1",
  content,
});

describe("hosted blocks posted in the Messages format", () => {
  it.each([
    ["a string", "weather", { input: "weather" }],
    ["an array", ["a", "b"], { input: ["a", "b"] }],
    ["null", null, { input: null }],
  ])("takes a server tool call whose input is %s as arguments {input}", (_, input, expected) => {
    expect(post([call(input)])[2]).toMatchObject({
      type: "tool_call_request",
      id: "srvtoolu_1",
      name: "web_search",
      arguments: expected,
    });
  });

  it.each([
    ["an object", { a: { b: [1, Number.POSITIVE_INFINITY] } }, "input.a.b[1]"],
    ["a non-object (kept under `input`)", [Number.NaN], "input.input[0]"],
  ])(
    "refuses a server tool call whose input, %s, holds a non-finite number, naming where",
    (_, input, where) => {
      expect(() => post([call(input)])).toThrow(
        `messages[1].content[0].${where}: is not a finite number: JSON cannot carry it (stored, it would become null)`,
      );
    },
  );

  it("refuses a server tool result without content", () => {
    expect(() =>
      post([call({}), { type: "web_search_tool_result", tool_use_id: "srvtoolu_1" }]),
    ).toThrow("messages[1].content[1].content: a result needs its content");
  });

  it.each([
    ["an *_error block", { type: "web_search_tool_result_error", error_code: "unavailable" }, true],
    ["a result block", { type: "web_fetch_result", url: "https://example.com" }, false],
    ["an object without a type", { url: "https://example.com" }, false],
    ["an object whose type is no string", { type: 7 }, false],
    ["a string ending in _error", "too_many_requests_error", false],
    ["an array of *_error blocks", [{ type: "web_search_tool_result_error" }], false],
  ])("a result whose content is %s is an error: %s", (_, content, failed) => {
    expect(post([call({}), result(content)])[3]).toMatchObject({
      type: "tool_call_response",
      id: "srvtoolu_1",
      is_error: failed,
    });
  });
});

describe("hosted blocks written back in the Messages format", () => {
  const search = call({ query: "weather" });
  const found = result([{ type: "web_search_result", url: "https://example.com/w" }]);

  /** A JP stream of one turn: a question, a call and its result each carrying a stored block under `format`. */
  function stream(storedCall: unknown, storedResult: unknown, format = META): Entry[] {
    return [
      turnStart(),
      request("look it up"),
      {
        ...toolCall("srvtoolu_1", "web_search", { query: "weather" }),
        metadata: { [format]: { hosted: storedCall } },
      },
      {
        ...toolResult("srvtoolu_1", '[{"type":"web_search_result","url":"https://example.com/w"}]'),
        metadata: { [format]: { hosted: storedResult } },
      },
    ];
  }

  /** `block` without its `key` (a stored block missing a field). */
  const without = (block: Record<string, unknown>, key: string) =>
    Object.fromEntries(Object.entries(block).filter(([k]) => k !== key));

  const written = (entries: Entry[]) => anthropicMessages.fromView(rawView(entries));

  /** The pair as assistant text, hand-written from hostedText's wording. */
  const asText = [
    { role: "user", content: "look it up" },
    {
      role: "assistant",
      content: [
        { type: "text", text: '[hosted tool call web_search srvtoolu_1] {"query":"weather"}' },
        {
          type: "text",
          text: '[hosted tool result srvtoolu_1] [{"type":"web_search_result","url":"https://example.com/w"}]',
        },
      ],
    },
  ];

  it("gives back an intact call and result as the blocks stored", () => {
    expect(written(stream(search, found))).toEqual([
      { role: "user", content: "look it up" },
      { role: "assistant", content: [search, found] },
    ]);
  });

  it.each([
    ["the call's stored block is no valid block (no name)", without(search, "name"), found],
    ["the call's stored block is of an unknown type", { ...search, type: "tool_use" }, found],
    ["the result's stored block has no content", search, without(found, "content")],
    ["the call's stored block names another id", { ...search, id: "srvtoolu_2" }, found],
    [
      "the result's stored block answers another id",
      search,
      { ...found, tool_use_id: "srvtoolu_2" },
    ],
    ["the call carries a result block", found, found],
    ["the result carries a call block", search, search],
    ["the result carries no block of its own (true)", search, true],
  ])("writes the pair as text when %s", (_, storedCall, storedResult) => {
    expect(written(stream(storedCall, storedResult))).toEqual(asText);
  });

  it("writes a call and result stored in another format as text", () => {
    expect(written(stream(search, found, "openai-responses"))).toEqual(asText);
  });
});
