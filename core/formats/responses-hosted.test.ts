/**
 * The Responses API's hosted and built-in tool items, item by item: which
 * are taken, the JP events each becomes (ids, names, result text, errors),
 * and when a stored item goes back verbatim. The families' round trips are
 * in hosted.test.ts.
 */
import { describe, expect, it } from "vitest";
import { at, request, toolCall, toolResult, turnStart } from "../../test/helpers/builders.ts";
import { RESPONSES_ITEMS } from "../../test/helpers/responses-hosted-items.ts";
import { InvalidInputError } from "../errors.ts";
import type { Entry, ToolCallRequest, ToolCallResponse } from "../events.ts";
import { openaiResponses } from "./openai-responses.ts";
import { hostedItemEvents, isHostedItemType } from "./responses-hosted.ts";
import { rawView } from "./view.ts";

const T = at(0);
const go = { role: "user", content: "go" };

/** The events of the items posted after a user message, without `turn_start` and the message's. */
function events(...items: Record<string, unknown>[]): Entry[] {
  return openaiResponses
    .toEvents([go, ...items], { timestamp: T, dropSystem: false })
    .events.slice(2);
}

/** The 400 the items are refused with, posted after a user message. */
function refusal(...items: Record<string, unknown>[]): InvalidInputError {
  try {
    openaiResponses.toEvents([go, ...items], { timestamp: T, dropSystem: false });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error("expected the turn to be refused");
}

/** `event` carrying `hosted` as a Responses item. */
function carrying<E extends ToolCallRequest | ToolCallResponse>(event: E, hosted: unknown): E {
  return { ...event, metadata: { "openai-responses": { hosted } } };
}

/** The Responses items a stored turn of `stored` events (after a user message) is written as. */
function written(...stored: Entry[]): unknown[] {
  return openaiResponses.fromView(rawView([turnStart(0), request("go"), ...stored])).slice(1);
}

const computerCall = RESPONSES_ITEMS[6] as Record<string, unknown>;
const computerOutput = RESPONSES_ITEMS[7] as Record<string, unknown>;
const mcp = { type: "mcp_call", id: "mc_1", server_label: "s", name: "t", arguments: "{}" };
const mcpArguments = { server_label: "s", name: "t", arguments: "{}" };

describe("isHostedItemType", () => {
  it.each(["web_search_call", "compaction", "mcp_approval_response", "local_shell_call_output"])(
    "%s is a hosted item type",
    (type) => {
      expect(isHostedItemType(type)).toBe(true);
    },
  );

  it.each([
    ["a modelled item type", "function_call"],
    ["an inherited property's name", "toString"],
    ["a one-element array naming a hosted type", ["web_search_call"]],
    ["no type", undefined],
  ])("%s is not", (_, type) => {
    expect(isHostedItemType(type)).toBe(false);
  });
});

describe("which hosted items are refused", () => {
  it.each([
    [
      "a custom tool call without its name",
      { type: "custom_tool_call", call_id: "c", input: "x" },
      "input[1].name",
    ],
    [
      "an MCP approval request with an empty name",
      { type: "mcp_approval_request", id: "mar_1", server_label: "s", name: "", arguments: "{}" },
      "input[1].name",
    ],
    [
      "a computer call without call_id",
      { type: "computer_call", id: "cu_1", action: { type: "screenshot" } },
      "input[1].call_id",
    ],
    [
      "a custom tool output without call_id",
      { type: "custom_tool_call_output", output: "ok" },
      "input[1].call_id",
    ],
    ["a web search without id", { type: "web_search_call", status: "completed" }, "input[1].id"],
    [
      "a shell call with an empty call_id",
      { type: "shell_call", call_id: "", action: {} },
      "input[1].call_id",
    ],
  ])("%s is refused", (_, item, path) => {
    expect(refusal(item).message.startsWith(`${path}: `)).toBe(true);
  });

  it("refuses a call whose arguments hold a number JSON cannot carry", () => {
    const item = { type: "computer_call", call_id: "c", action: { type: "click", x: Infinity } };
    expect(refusal(item).message).toBe(
      "input[1].action.x: is not a finite number: JSON cannot carry it (stored, it would become null)",
    );
  });
});

describe("the events of a hosted item", () => {
  it("a call item is a tool request alone, named for its tool, its arguments the item's other fields", () => {
    expect(events(computerCall)).toEqual([
      {
        type: "tool_call_request",
        timestamp: T,
        id: "call_c",
        name: "computer",
        arguments: { pending_safety_checks: [], action: { type: "screenshot" } },
        metadata: { "openai-responses": { hosted: computerCall } },
      },
    ]);
  });

  it("a local shell output pairs by its id when it has no call_id", () => {
    const item = { type: "local_shell_call_output", id: "call_l", output: "a\nb" };
    expect(events(item)).toEqual([
      {
        type: "tool_call_response",
        timestamp: T,
        id: "call_l",
        content: "a\nb",
        is_error: false,
        metadata: { "openai-responses": { hosted: item } },
      },
    ]);
  });

  it("a tool search without call_id is taken whole under its id, named tool_search", () => {
    const item = { type: "tool_search_call", id: "ts_1", arguments: { q: "x" } };
    const call = {
      type: "tool_call_request",
      timestamp: T,
      id: "ts_1",
      name: "tool_search",
      arguments: { arguments: { q: "x" } },
      metadata: { "openai-responses": { hosted: item } },
    };
    const result = {
      type: "tool_call_response",
      timestamp: T,
      id: "ts_1",
      content: "",
      is_error: false,
      metadata: { "openai-responses": { hosted: true } },
    };
    expect(events(item)).toEqual([call, result]);
    // A null call_id is none either.
    const nulled = { ...item, call_id: null };
    expect(events(nulled)).toEqual([
      { ...call, metadata: { "openai-responses": { hosted: nulled } } },
      result,
    ]);
  });

  it.each([
    ["no id at all", {}],
    ["a null call_id and an empty id", { call_id: null, id: "" }],
  ])(
    "a tool search with %s is taken whole under a made-up id: type, timestamp, index",
    (_, ids) => {
      const item = { type: "tool_search_call", ...ids, arguments: {} };
      expect(events(item).map((e) => [e.type, (e as ToolCallRequest).id])).toEqual([
        ["tool_call_request", `tool_search_call:${T}:1`],
        ["tool_call_response", `tool_search_call:${T}:1`],
      ]);
    },
  );

  it("a made-up id ends with the item's index, the last step of its path", () => {
    const item = { type: "tool_search_call", arguments: {} };
    const [call] = hostedItemEvents(item, T, ["input", 2, "content", 7]);
    expect(call?.id).toBe(`tool_search_call:${T}:7`);
  });

  it("an output without its id is taken whole, named by its type, its arguments what is left", () => {
    const item = { type: "local_shell_call_output", status: "completed", output: "a\nb" };
    expect(events(item)).toEqual([
      {
        type: "tool_call_request",
        timestamp: T,
        id: `local_shell_call_output:${T}:1`,
        name: "local_shell_call_output",
        arguments: {},
        metadata: { "openai-responses": { hosted: item } },
      },
      {
        type: "tool_call_response",
        timestamp: T,
        id: `local_shell_call_output:${T}:1`,
        content: "a\nb",
        is_error: false,
        metadata: { "openai-responses": { hosted: true } },
      },
    ]);
  });

  it("a tool search output without call_id is named tool_search_output, its tools the result", () => {
    const item = { type: "tool_search_output", id: "tso_1", tools: [{ name: "f" }] };
    const [call, result] = events(item) as [ToolCallRequest, ToolCallResponse];
    expect([call.id, call.name, call.arguments]).toEqual(["tso_1", "tool_search_output", {}]);
    expect([result.id, result.content]).toEqual(["tso_1", '[{"name":"f"}]']);
  });

  // An MCP call's result fields are `output` and `error`.
  it.each([
    ["its output alone, as it is", { output: "done" }, "done", false],
    ["a null error left out", { output: "done", error: null }, "done", false],
    [
      "output and error both, as JSON",
      { output: "half", error: "boom" },
      '{"output":"half","error":"boom"}',
      true,
    ],
    ["an error alone: a failure", { error: "boom" }, "boom", true],
    ["an empty error: no failure", { error: "" }, "", false],
    ["a failed status without error: a failure", { status: "failed" }, "", true],
    ["nothing", {}, "", false],
  ])("an MCP call's result is %s", (_, fields, content, isError) => {
    const item = { ...mcp, ...fields };
    expect(events(item)).toEqual([
      {
        type: "tool_call_request",
        timestamp: T,
        id: "mc_1",
        name: "t",
        arguments: mcpArguments,
        metadata: { "openai-responses": { hosted: item } },
      },
      {
        type: "tool_call_response",
        timestamp: T,
        id: "mc_1",
        content,
        is_error: isError,
        metadata: { "openai-responses": { hosted: true } },
      },
    ]);
  });

  it.each([
    ["an image", "aGVsbG8=", "[generated image]"],
    ["no image yet", null, ""],
  ])("an image generation's result text with %s is %j", (_, result, content) => {
    const item = { type: "image_generation_call", id: "ig_1", status: "generating", result };
    expect(events(item)[1]).toMatchObject({ type: "tool_call_response", id: "ig_1", content });
  });
});

describe("a stored hosted item goes back verbatim only while it matches its event", () => {
  const call = toolCall("call_c", "computer", { action: { type: "screenshot" } });
  const callText = '[hosted tool call computer call_c] {"action":{"type":"screenshot"}}';

  it("a call's item goes back as posted", () => {
    expect(written(carrying(call, computerCall))).toEqual([computerCall]);
  });

  it("an item with a made-up id goes back on a call of any id", () => {
    const item = { type: "tool_search_call", arguments: {} };
    const stored = carrying(toolCall("tool_search_call:x:1", "tool_search", {}), item);
    expect(written(stored)).toEqual([item]);
  });

  it.each([
    ["a call's item of another call_id", carrying(call, { ...computerCall, call_id: "call_d" })],
    ["an output's item on a call", carrying(call, computerOutput)],
    ["the mark of a whole item's result on a call", carrying(call, true)],
    ["an item of a type not hosted", carrying(call, { type: "program", id: "call_c" })],
    ["an item its type's schema refuses", carrying(call, { type: "computer_call", action: {} })],
  ])("%s is written as text", (_, stored) => {
    expect(written(stored)).toEqual([{ role: "assistant", content: callText }]);
  });

  it("a whole item's result mark goes back as nothing after its call", () => {
    const item = RESPONSES_ITEMS[0] as Record<string, unknown>;
    const stored = [
      carrying(toolCall("ws_1", "web_search", {}), item),
      carrying(toolResult("ws_1", ""), true),
    ];
    expect(written(...stored)).toEqual([item]);
  });
});
