/**
 * Tool arguments exactly (issue 27, item 4), format by format: the OpenAI
 * formats give back the arguments string as posted, in either of the two;
 * a duplicate key or a number JSON cannot carry is a located 400 in every
 * format, never a silent change.
 */
import { describe, expect, it } from "vitest";
import { at, compaction, toolCall, turnStart } from "../../test/helpers/builders.ts";
import { InvalidInputError } from "../errors.ts";
import { type Entry, parseEntry } from "../events.ts";
import { aiSdk } from "./ai-sdk.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import type { ProviderFormat } from "./format.ts";
import { openaiChat } from "./openai-chat.ts";
import { openaiResponses } from "./openai-responses.ts";
import { projectedView, rawView } from "./view.ts";

const options = { timestamp: at(0), dropSystem: false };
const BIG = '{"n": 12345678901234567890, "f": 1.0, "s": "\\u00e9"}';

const chatTurn = (args: string) => [
  { role: "user", content: "go" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: args } }],
  },
  { role: "tool", tool_call_id: "c1", content: "ok" },
];
const responsesTurn = (args: string) => [
  { role: "user", content: "go" },
  { type: "function_call", call_id: "c1", name: "f", arguments: args },
  { type: "function_call_output", call_id: "c1", output: "ok" },
];
const anthropicTurn = (input: unknown) => [
  { role: "user", content: "go" },
  { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "ok" }] },
];
const aiSdkTurn = (input: unknown) => [
  { role: "user", content: "go" },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "f", input }] },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "c1",
        toolName: "f",
        output: { type: "text", value: "ok" },
      },
    ],
  },
];

/** The refusal of `messages` in `format`. */
function refusal(format: ProviderFormat, messages: unknown): InvalidInputError {
  try {
    format.toEvents(messages, options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error("expected the turn to be refused");
}

/** The arguments string of the first tool call of a Chat view. */
function chatArguments(stream: readonly Entry[], projected = false): unknown {
  const view = projected ? projectedView(stream) : rawView(stream);
  const assistant = openaiChat.fromView(view)[1] as unknown as {
    tool_calls: [{ function: { arguments: unknown } }];
  };
  return assistant.tool_calls[0].function.arguments;
}

/** The arguments string of the first function call of a Responses view. */
function responsesArguments(stream: readonly Entry[]): unknown {
  return (openaiResponses.fromView(rawView(stream))[1] as { arguments: unknown }).arguments;
}

describe("tool arguments in the OpenAI formats", () => {
  it("gives back the posted string, digits, spacing and escapes as they were (Chat)", () => {
    const { events } = openaiChat.toEvents(chatTurn(BIG), options);
    expect(chatArguments(events)).toBe(BIG);
    // The JP arguments are the parsed object, the long number as a float holds it.
    expect(events[2]).toMatchObject({ arguments: { n: 12345678901234567000, f: 1, s: "é" } });
  });

  it("gives back the posted string (Responses)", () => {
    const { events } = openaiResponses.toEvents(responsesTurn(BIG), options);
    expect(responsesArguments(events)).toBe(BIG);
  });

  it("gives back the string across the family: posted in Chat, read as Responses, and back", () => {
    expect(responsesArguments(openaiChat.toEvents(chatTurn(BIG), options).events)).toBe(BIG);
    expect(chatArguments(openaiResponses.toEvents(responsesTurn(BIG), options).events)).toBe(BIG);
  });

  it("stores nothing for compact arguments, which re-serialize as posted", () => {
    const { events } = openaiChat.toEvents(chatTurn('{"a":[1,{"b":null}]}'), options);
    expect(events[2]).not.toHaveProperty("metadata");
    expect(chatArguments(events)).toBe('{"a":[1,{"b":null}]}');
  });

  it("re-serializes arguments a compaction stripped", () => {
    const { events } = openaiChat.toEvents(chatTurn(BIG), options);
    const stripped = [
      ...events,
      compaction(0, 0, 9, { tool_calls: { policy: "strip", request: true, response: false } }),
    ];
    expect(chatArguments(stripped, true)).not.toBe(BIG);
    expect(JSON.parse(chatArguments(stripped, true) as string)).not.toHaveProperty("n");
  });

  it("ignores a stored string that no longer encodes the event's arguments", () => {
    const call = {
      ...toolCall("c1", "f", { a: 2 }),
      metadata: { "openai-chat": { arguments: '{"a": 1}' } },
    };
    const duplicated = {
      ...toolCall("c1", "f", { a: 2 }),
      metadata: { "openai-responses": { arguments: '{"a": 1, "a": 2}' } },
    };
    const stream = (entry: Entry): Entry[] => [
      turnStart(0),
      { type: "chat_request", timestamp: at(0), content: "go" },
      entry,
    ];
    expect(chatArguments(stream(call))).toBe('{"a":2}');
    expect(chatArguments(stream(duplicated))).toBe('{"a":2}');
  });

  it("refuses a duplicate key, located in the message and in the arguments (Chat, Responses)", () => {
    const args = '{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}';
    const chat = refusal(openaiChat, chatTurn(args));
    expect(chat.message).toBe(
      'messages[1].tool_calls[0].function.arguments: at /b/c: duplicate key "c": keys must be unique within an object (a JSON reader keeps only one of them); at /a: duplicate key "a": keys must be unique within an object (a JSON reader keeps only one of them)',
    );
    expect(chat.issues[0]?.pointer).toBe("/messages/1/tool_calls/0/function/arguments");
    const responses = refusal(openaiResponses, responsesTurn(args));
    expect(responses.message.startsWith('input[1].arguments: at /b/c: duplicate key "c"')).toBe(
      true,
    );
  });

  it("refuses a number beyond a float's range (Chat, Responses)", () => {
    const args = '{"x": [0, 1e999]}';
    expect(refusal(openaiChat, chatTurn(args)).message).toBe(
      "messages[1].tool_calls[0].function.arguments: at /x/1: 1e999 is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
    );
    expect(refusal(openaiResponses, responsesTurn(args)).message).toBe(
      "input[1].arguments: at /x/1: 1e999 is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
    );
  });
});

describe("tool input as an object (Anthropic, AI SDK, JP)", () => {
  it("refuses a number JSON cannot carry, at its path in the input", () => {
    expect(refusal(anthropicMessages, anthropicTurn({ a: { b: [1, Infinity] } })).message).toBe(
      "messages[1].content[0].input.a.b[1]: is not a finite number: JSON cannot carry it (stored, it would become null)",
    );
    expect(refusal(aiSdk, aiSdkTurn({ n: -Infinity })).message).toBe(
      "messages[1].content[0].input.n: is not a finite number: JSON cannot carry it (stored, it would become null)",
    );
    expect(refusal(aiSdk, aiSdkTurn({ n: Number.NaN })).issues[0]?.pointer).toBe(
      "/messages/1/content/0/input/n",
    );
  });

  it("refuses a JP tool call whose arguments hold a non-finite number", () => {
    const parsed = parseEntry({ ...toolCall("c1", "f", { list: [1, Infinity] }) });
    expect(parsed).toEqual({
      ok: false,
      issues: [
        { path: "arguments.list.1", message: "is not a finite number: JSON cannot carry it" },
      ],
    });
    expect(parseEntry(toolCall("c1", "f", { list: [1, 2.5] })).ok).toBe(true);
  });
});
