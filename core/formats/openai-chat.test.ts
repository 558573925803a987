import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  at,
  compaction,
  message,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../../test/helpers/builders.ts";
import { openaiChatMessageErrors } from "../../test/helpers/openai-schema.ts";
import { AutocompactError, InvalidInputError, UnprocessableError } from "../errors.ts";
import type { Entry } from "../events.ts";
import { providerFormat } from "./index.ts";
import type { ChatMessage } from "./openai-chat.schema.ts";
import { openaiChat } from "./openai-chat.ts";
import { projectedView, rawView } from "./view.ts";

const T = at(0);
const options = { timestamp: T, dropSystem: false };

/** The events of one turn posted as `messages`, without the leading `turn_start`. */
function events(messages: unknown, dropSystem = false): Entry[] {
  const { events: all } = openaiChat.toEvents(messages, { timestamp: T, dropSystem });
  expect(all[0]).toEqual({ type: "turn_start", timestamp: T });
  return all.slice(1);
}

/** The error `messages` is refused with. */
function refusal(messages: unknown, dropSystem = false): AutocompactError {
  try {
    openaiChat.toEvents(messages, { timestamp: T, dropSystem });
  } catch (error) {
    expect(error).toBeInstanceOf(AutocompactError);
    return error as AutocompactError;
  }
  throw new Error("expected the turn to be refused");
}

/** Asserts a 400 whose detail starts with `path` and says `says`. */
function expectInvalid(messages: unknown, path: string, says: string | RegExp): void {
  const error = refusal(messages);
  expect(error).toBeInstanceOf(InvalidInputError);
  expect(error.status).toBe(400);
  expect(error.type).toBe("/problems/invalid-messages");
  expect(error.message.startsWith(`${path}: `)).toBe(true);
  expect(error.message).toMatch(says);
}

/** Asserts a 422 whose detail starts with `path` and says `says`. */
function expectUnsupported(
  messages: unknown,
  path: string,
  says: string | RegExp,
  dropSystem = false,
): void {
  const error = refusal(messages, dropSystem);
  expect(error).toBeInstanceOf(UnprocessableError);
  expect(error.status).toBe(422);
  expect(error.type).toBe("/problems/unsupported-message");
  expect(error.message.startsWith(`${path}: `)).toBe(true);
  expect(error.message).toMatch(says);
}

const user = (content: unknown): ChatMessage => ({ role: "user", content }) as ChatMessage;
const call = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});
const calls = (...list: ReturnType<typeof call>[]): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: list,
});
const tool = (id: string, content: unknown): ChatMessage =>
  ({ role: "tool", tool_call_id: id, content }) as ChatMessage;
const meta = (value: unknown) => ({ metadata: { "openai-chat": value } });

describe("openaiChat", () => {
  it("is the openai-chat format, posted and answered in `messages`", () => {
    expect(openaiChat.name).toBe("openai-chat");
    expect(openaiChat.field).toBe("messages");
    expect(providerFormat("openai-chat")).toBe(openaiChat);
  });

  it("has a message schema that documents as JSON Schema, one branch per role", () => {
    const schema = z.toJSONSchema(openaiChat.messageSchema, { io: "input" }) as unknown as {
      oneOf: { properties: { role: { const: string } } }[];
    };
    expect(schema.oneOf.map((branch) => branch.properties.role.const)).toEqual([
      "system",
      "developer",
      "user",
      "assistant",
      "tool",
      "function",
    ]);
  });
});

describe("openaiChat.toEvents: mapping", () => {
  it("opens the turn and stamps every event with the given time", () => {
    const { events: all, droppedSystem } = openaiChat.toEvents(
      [user("hi"), { role: "assistant", content: "hello" }],
      options,
    );
    expect(all).toEqual([
      { type: "turn_start", timestamp: T },
      { type: "chat_request", timestamp: T, content: "hi" },
      { type: "chat_response", timestamp: T, message: "hello" },
    ]);
    expect(droppedSystem).toBe(0);
  });

  it("joins a user message's text parts with a newline and keeps its parts and name", () => {
    const parts = [
      { type: "text", text: "look at" },
      { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
      { type: "text", text: "this" },
      { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
      { type: "file", file: { file_id: "file-1" } },
    ];
    expect(events([{ role: "user", content: parts, name: "ann" }])).toEqual([
      {
        type: "chat_request",
        timestamp: T,
        content: "look at\nthis",
        ...meta({ message: { content: parts, name: "ann" } }),
      },
    ]);
  });

  it("takes a user message of an image alone as empty text with its part", () => {
    const parts = [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }];
    expect(events([user(parts)])).toEqual([
      { type: "chat_request", timestamp: T, content: "", ...meta({ message: { content: parts } }) },
    ]);
  });

  it("takes empty text beside an image", () => {
    const parts = [
      { type: "text", text: "" },
      { type: "image_url", image_url: { url: "https://example.com/a.png" } },
    ];
    expect(events([user(parts)])).toEqual([
      { type: "chat_request", timestamp: T, content: "", ...meta({ message: { content: parts } }) },
    ]);
  });

  it("keeps a user message's unknown keys, `__proto__` included, as data", () => {
    const posted = JSON.parse('[{"role":"user","content":"x","__proto__":{"a":1},"tag":2}]');
    const [event] = events(posted);
    const kept = ((event as Entry).metadata as { "openai-chat": { message: object } })[
      "openai-chat"
    ].message;
    expect(Object.keys(kept)).toEqual(["__proto__", "tag"]);
    expect(JSON.stringify(kept)).toBe('{"__proto__":{"a":1},"tag":2}');
  });

  it("maps assistant text and its parallel tool calls, arguments parsed (their text kept when not compact)", () => {
    expect(
      events([
        user("read both"),
        {
          role: "assistant",
          content: "Reading.",
          tool_calls: [call("c1", "fs_read", '{"path": "a"}'), call("c2", "fs_read", "{}")],
        },
        tool("c2", "B"),
        tool("c1", "Error: ENOENT"),
      ]),
    ).toEqual([
      { type: "chat_request", timestamp: T, content: "read both" },
      { type: "chat_response", timestamp: T, message: "Reading." },
      {
        type: "tool_call_request",
        timestamp: T,
        id: "c1",
        name: "fs_read",
        arguments: { path: "a" },
        metadata: { "openai-chat": { arguments: '{"path": "a"}' } },
      },
      { type: "tool_call_request", timestamp: T, id: "c2", name: "fs_read", arguments: {} },
      { type: "tool_call_response", timestamp: T, id: "c2", content: "B", is_error: false },
      {
        type: "tool_call_response",
        timestamp: T,
        id: "c1",
        content: "Error: ENOENT",
        is_error: false,
      },
    ]);
  });

  it("keeps what the SDK leaves on a response message (refusal: null, annotations)", () => {
    expect(events([{ role: "assistant", content: "Hi.", refusal: null, annotations: [] }])).toEqual(
      [
        {
          type: "chat_response",
          timestamp: T,
          message: "Hi.",
          ...meta({ message: { refusal: null, annotations: [] } }),
        },
      ],
    );
  });

  it("joins assistant text and refusal parts with a newline and keeps the parts", () => {
    const parts = [
      { type: "text", text: "a" },
      { type: "refusal", refusal: "no" },
    ];
    expect(events([{ role: "assistant", content: parts }])).toEqual([
      {
        type: "chat_response",
        timestamp: T,
        message: "a\nno",
        ...meta({ message: { content: parts } }),
      },
    ]);
  });

  it("takes a refusal as the text of an assistant message that has no other", () => {
    expect(events([{ role: "assistant", content: null, refusal: "I can't help." }])).toEqual([
      {
        type: "chat_response",
        timestamp: T,
        message: "I can't help.",
        ...meta({ message: { content: null, refusal: "I can't help." } }),
      },
    ]);
  });

  it("keeps a refusal beside text, and an assistant's name", () => {
    expect(events([{ role: "assistant", content: "text", refusal: "no", name: "bot" }])).toEqual([
      {
        type: "chat_response",
        timestamp: T,
        message: "text",
        ...meta({ message: { refusal: "no", name: "bot" } }),
      },
    ]);
  });

  it("keeps the empty content of an assistant message with tool calls", () => {
    expect(
      events([{ role: "assistant", content: "", tool_calls: [call("c", "f", "{}")] }]),
    ).toEqual([
      {
        type: "tool_call_request",
        timestamp: T,
        id: "c",
        name: "f",
        arguments: {},
        ...meta({ message: { content: "" } }),
      },
    ]);
  });

  it("marks the calls of a text-less assistant message that follows another assistant message", () => {
    expect(
      events([
        { role: "assistant", content: "first" },
        { role: "assistant", tool_calls: [call("c1", "f", "{}")] },
        calls(call("c2", "g", "{}")),
        tool("c2", "ok"),
        calls(call("c3", "h", "{}")),
      ]),
    ).toEqual([
      { type: "chat_response", timestamp: T, message: "first" },
      {
        type: "tool_call_request",
        timestamp: T,
        id: "c1",
        name: "f",
        arguments: {},
        ...meta({ split: true }),
      },
      {
        type: "tool_call_request",
        timestamp: T,
        id: "c2",
        name: "g",
        arguments: {},
        ...meta({ split: true }),
      },
      { type: "tool_call_response", timestamp: T, id: "c2", content: "ok", is_error: false },
      { type: "tool_call_request", timestamp: T, id: "c3", name: "h", arguments: {} },
    ]);
  });

  it("puts a message's metadata on its first event only", () => {
    expect(
      events([
        { role: "assistant", content: "a", name: "bot", tool_calls: [call("c1", "f", "{}")] },
        {
          role: "assistant",
          name: "bot",
          tool_calls: [call("c2", "f", "{}"), call("c3", "f", "{}")],
        },
      ]),
    ).toEqual([
      { type: "chat_response", timestamp: T, message: "a", ...meta({ message: { name: "bot" } }) },
      { type: "tool_call_request", timestamp: T, id: "c1", name: "f", arguments: {} },
      {
        type: "tool_call_request",
        timestamp: T,
        id: "c2",
        name: "f",
        arguments: {},
        ...meta({ message: { name: "bot" }, split: true }),
      },
      { type: "tool_call_request", timestamp: T, id: "c3", name: "f", arguments: {} },
    ]);
  });

  it("keeps a tool call's own extra keys on its request", () => {
    const extra = { extra_content: { google: { thought_signature: "sig" } } };
    expect(events([calls({ ...call("c", "f", "{}"), ...extra })])).toEqual([
      {
        type: "tool_call_request",
        timestamp: T,
        id: "c",
        name: "f",
        arguments: {},
        ...meta({ call: extra }),
      },
    ]);
  });

  it("joins a tool result's text parts with a newline and keeps the parts", () => {
    const parts = [
      { type: "text", text: "line 1" },
      { type: "text", text: "line 2" },
    ];
    expect(events([calls(call("c", "f", "{}")), tool("c", parts)])).toEqual([
      { type: "tool_call_request", timestamp: T, id: "c", name: "f", arguments: {} },
      {
        type: "tool_call_response",
        timestamp: T,
        id: "c",
        content: "line 1\nline 2",
        is_error: false,
        ...meta({ message: { content: parts } }),
      },
    ]);
  });

  it("takes an empty tool result", () => {
    expect(events([calls(call("c", "f", "{}")), tool("c", "")])[1]).toEqual({
      type: "tool_call_response",
      timestamp: T,
      id: "c",
      content: "",
      is_error: false,
    });
  });

  it("drops leading system and developer messages with dropSystem and counts them", () => {
    const converted = openaiChat.toEvents(
      [
        { role: "system", content: "be brief" },
        { role: "developer", content: [{ type: "text", text: "rules" }] },
        user("hi"),
      ],
      { timestamp: T, dropSystem: true },
    );
    expect(converted).toEqual({
      events: [
        { type: "turn_start", timestamp: T },
        { type: "chat_request", timestamp: T, content: "hi" },
      ],
      droppedSystem: 2,
    });
  });

  it("lets each turn reuse the call ids of another", () => {
    const turn = [calls(call("c", "f", "{}")), tool("c", "ok")];
    expect(events(turn)).toEqual(events(turn));
  });
});

describe("openaiChat.toEvents: refusals", () => {
  it("refuses anything but a non-empty array", () => {
    expectInvalid([], "messages", "a turn needs at least one message");
    expectInvalid({ role: "user" }, "messages", /expected array/);
    expectInvalid(null, "messages", /expected array/);
  });

  it("refuses a message that is not an object", () => {
    expectInvalid([user("a"), "b"], "messages[1]", "expected a message object");
    expectInvalid([null], "messages[0]", "expected a message object");
  });

  it("refuses an unknown or missing role, naming the roles it takes", () => {
    expectInvalid(
      [user("a"), { role: "bot", content: "x" }],
      "messages[1].role",
      'unknown message role "bot": expected one of system, developer, user, assistant, tool, function',
    );
    expectInvalid(
      [{ content: "x" }],
      "messages[0].role",
      "a message needs a role: one of system, developer, user, assistant, tool, function",
    );
  });

  it("locates a bad content part at its own path", () => {
    expectInvalid(
      [
        user([
          { type: "text", text: "a" },
          { type: "video", url: "v" },
        ]),
      ],
      "messages[0].content[1].type",
      'unknown content part type "video": expected one of text, image_url, input_audio, file',
    );
    expectInvalid(
      [user([{ type: "text", text: 1 }])],
      "messages[0].content[0].text",
      /expected string/,
    );
    expectInvalid(
      [user([{ type: "image_url", image_url: {} }])],
      "messages[0].content[0].image_url.url",
      /expected string/,
    );
    expectInvalid(
      [{ role: "assistant", content: [{ type: "image_url", image_url: { url: "u" } }] }],
      "messages[0].content[0].type",
      'unknown content part type "image_url": expected one of text, refusal',
    );
    expectInvalid(
      [calls(call("c", "f", "{}")), tool("c", [{ type: "refusal", refusal: "r" }])],
      "messages[1].content[0].type",
      'unknown content part type "refusal": expected "text"',
    );
  });

  it("says when a part or a tool call is no object or has no type", () => {
    expectInvalid([user(["a"])], "messages[0].content[0]", "expected a content part object");
    expectInvalid(
      [user([{ text: "a" }])],
      "messages[0].content[0].type",
      "a content part needs a type: one of text, image_url, input_audio, file",
    );
    expectInvalid(
      [user([{ type: "input_audio", input_audio: { format: "wav" } }])],
      "messages[0].content[0].input_audio.data",
      /expected string/,
    );
    expectInvalid(
      [user([{ type: "file", file: { file_id: 5 } }])],
      "messages[0].content[0].file.file_id",
      /expected string/,
    );
    expectInvalid(
      [{ role: "assistant", content: [{ type: "refusal" }] }],
      "messages[0].content[0].refusal",
      /expected string/,
    );
    expectInvalid(
      [{ role: "system", content: [{ type: "text" }] }],
      "messages[0].content[0].text",
      /expected string/,
    );
    expectInvalid(
      [{ role: "assistant", tool_calls: [{ id: "c", type: "custom", custom: { name: "f" } }] }],
      "messages[0].tool_calls[0].custom.input",
      /expected string/,
    );
    expectInvalid(
      [{ role: "assistant", tool_calls: [5] }],
      "messages[0].tool_calls[0]",
      "expected a tool call object",
    );
    expectInvalid(
      [{ role: "assistant", tool_calls: [{ id: "c", function: { name: "f", arguments: "{}" } }] }],
      "messages[0].tool_calls[0].type",
      "a tool call needs a type: one of function, custom",
    );
  });

  it("refuses content that is neither a string nor parts, and an empty parts array", () => {
    expectInvalid(
      [user(5)],
      "messages[0].content",
      "expected a string or an array of content parts",
    );
    expectInvalid([user([])], "messages[0].content", "a content array needs at least one part");
    expectInvalid([{ role: "assistant", content: 3 }], "messages[0].content", /string or an array/);
  });

  it("lists every shape issue, each located", () => {
    const error = refusal([user(5), { role: "x" }]) as InvalidInputError;
    expect(error.issues.map((issue) => issue.pointer)).toEqual([
      "/messages/0/content",
      "/messages/1/role",
    ]);
  });

  it("refuses a user message without content", () => {
    expectInvalid([user("")], "messages[0].content", "a user message needs text or a content part");
    expectInvalid(
      [user([{ type: "text", text: "" }])],
      "messages[0].content",
      "a user message needs text or a content part",
    );
  });

  it("refuses an assistant message with neither text nor tool calls", () => {
    for (const empty of [
      { role: "assistant" },
      { role: "assistant", content: null },
      { role: "assistant", content: "" },
      { role: "assistant", content: [{ type: "text", text: "" }], refusal: "" },
    ]) {
      expectInvalid(
        [user("a"), empty],
        "messages[1]",
        "an assistant message needs text content or tool_calls",
      );
    }
    expectInvalid(
      [{ role: "assistant", content: "a", tool_calls: [] }],
      "messages[0].tool_calls",
      "tool_calls needs at least one call",
    );
  });

  it("refuses tool arguments that are not a JSON object", () => {
    const path = "messages[0].tool_calls[0].function.arguments";
    expectInvalid([calls(call("c", "f", "{"))], path, /^[^:]+: is not valid JSON \(/);
    expectInvalid([calls(call("c", "f", ""))], path, "is not valid JSON");
    expectInvalid(
      [calls(call("c", "f", "[1]"))],
      path,
      "must be a JSON object encoded as a string (got an array)",
    );
    expectInvalid([calls(call("c", "f", '"x"'))], path, "(got a string)");
    expectInvalid([calls(call("c", "f", "null"))], path, "(got null)");
    expectInvalid([calls(call("c", "f", "2"))], path, "(got a number)");
  });

  it("refuses a tool call of an unknown type or with unknown function keys", () => {
    expectInvalid(
      [calls({ ...call("c", "f", "{}"), type: "web" as "function" })],
      "messages[0].tool_calls[0].type",
      'unknown tool call type "web": expected one of function, custom',
    );
    expectInvalid(
      [
        calls({
          id: "c",
          type: "function",
          function: { name: "f", arguments: "{}", strict: true },
        } as never),
      ],
      "messages[0].tool_calls[0].function",
      /strict/,
    );
  });

  it("refuses assistant audio and function_call with a 422 that names them", () => {
    expectUnsupported(
      [user("a"), { role: "assistant", content: "x", audio: { id: "audio_1" } }],
      "messages[1].audio",
      "assistant audio is not supported",
    );
    expectUnsupported(
      [{ role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }],
      "messages[0].function_call",
      "the deprecated function_call is not supported: post the call in tool_calls",
    );
    expect(events([{ role: "assistant", content: "x", audio: null, function_call: null }])).toEqual(
      [
        {
          type: "chat_response",
          timestamp: T,
          message: "x",
          ...meta({ message: { audio: null, function_call: null } }),
        },
      ],
    );
  });

  it("refuses the function role with a 422", () => {
    expectUnsupported(
      [user("a"), { role: "function", name: "f", content: "r" }],
      "messages[1]",
      'the deprecated "function" role is not supported: send tool results as {"role":"tool"',
    );
  });

  it("refuses a system or developer message without dropSystem, and says why and what to do", () => {
    for (const role of ["system", "developer"]) {
      expectUnsupported(
        [{ role, content: "be brief" }, user("hi")],
        "messages[0]",
        /not conversation turns: the platform sends them with each call.*`context_window`.*`drop_system: true`/,
      );
    }
  });

  it("refuses a system message after another message even with dropSystem", () => {
    expectUnsupported(
      [{ role: "system", content: "a" }, user("hi"), { role: "system", content: "b" }],
      "messages[2]",
      /a system message after the turn's first other message: .*only leading ones are dropped/,
      true,
    );
  });

  it("refuses a turn of system prompts alone", () => {
    const error = refusal([{ role: "system", content: "a" }], true);
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      "messages: the turn holds only system prompts: post at least one other message",
    );
  });

  it("refuses an orphan tool result: its call must come earlier in the same turn, or it leads the turn", () => {
    const says =
      /orphan tool result: no tool call "c" comes before it in this turn; post it in the turn that holds its call \(a result for a call left pending at the end of the previous turn comes first in the next turn, before any other message\)$/;
    expectInvalid([user("a"), tool("c", "r")], "messages[1].tool_call_id", says);
    expectInvalid([tool("b", "r"), user("a"), tool("c", "r")], "messages[2].tool_call_id", says);
  });

  it("takes results leading a turn (the previous turn's pending calls) and a turn ending in calls", () => {
    expect(events([tool("c", "ok"), tool("d", "ok"), calls(call("c", "f", "{}"))])).toEqual([
      { type: "tool_call_response", timestamp: T, id: "c", content: "ok", is_error: false },
      { type: "tool_call_response", timestamp: T, id: "d", content: "ok", is_error: false },
      { type: "tool_call_request", timestamp: T, id: "c", name: "f", arguments: {} },
    ]);
    expectInvalid(
      [tool("c", "ok"), tool("c", "again")],
      "messages[1].tool_call_id",
      'a second result for tool call "c" (the first is messages[0]); a call takes one result',
    );
  });

  it("refuses a duplicate tool call id in the turn, naming both places", () => {
    expectInvalid(
      [
        calls(call("a", "f", "{}"), call("c", "f", "{}")),
        tool("c", "r"),
        calls(call("c", "g", "{}")),
      ],
      "messages[2].tool_calls[0].id",
      'duplicate tool call id "c" (also at messages[0].tool_calls[1].id): tool call ids must be unique within a turn',
    );
    expectInvalid(
      [calls(call("c", "f", "{}"), call("c", "f", "{}"))],
      "messages[0].tool_calls[1].id",
      "(also at messages[0].tool_calls[0].id)",
    );
  });

  it("refuses a second result for one call", () => {
    expectInvalid(
      [calls(call("c", "f", "{}")), tool("c", "r"), tool("c", "again")],
      "messages[2].tool_call_id",
      'a second result for tool call "c" (the first is messages[1]); a call takes one result',
    );
  });

  it("answers with the issue's JSON pointer", () => {
    const error = refusal([calls(call("c", "f", "[]"))]) as InvalidInputError;
    expect(error.issues).toEqual([
      {
        pointer: "/messages/0/tool_calls/0/function/arguments",
        detail: "must be a JSON object encoded as a string (got an array)",
      },
    ]);
  });

  it("handles a long turn in one pass", () => {
    const turn: ChatMessage[] = [user("go")];
    for (let i = 0; i < 20_000; i++)
      turn.push(calls(call(`c${i}`, "f", '{"i":1}')), tool(`c${i}`, "ok"));
    expect(events(turn)).toHaveLength(40_001);
  });
});

/** A stream of `turns`, each posted at its own second. */
function streamOf(...turns: unknown[][]): Entry[] {
  return turns.flatMap(
    (messages, t) => openaiChat.toEvents(messages, { timestamp: at(t), dropSystem: false }).events,
  );
}

describe("openaiChat.fromView", () => {
  it("writes plain JP events: requests, texts, data, grouped tool calls, results; reasoning dropped", () => {
    const stream: Entry[] = [
      turnStart(0),
      request("q"),
      reasoning("thinking"),
      message("one"),
      message("two"),
      reasoning("more"),
      toolCall("c1", "f", { a: [1, "x"] }),
      toolCall("c2", "g", {}),
      toolResult("c1", "r1"),
      toolResult("c2", "oops", true),
      toolCall("c3", "h", { b: null }),
      { type: "chat_response", timestamp: at(0), data: { answer: 42 } },
    ];
    const written = openaiChat.fromView(rawView(stream));
    expect(written).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "one" },
      {
        role: "assistant",
        content: "two",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "f", arguments: '{"a":[1,"x"]}' } },
          { id: "c2", type: "function", function: { name: "g", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "r1" },
      { role: "tool", tool_call_id: "c2", content: "oops" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c3", type: "function", function: { name: "h", arguments: '{"b":null}' } },
        ],
      },
      { role: "assistant", content: '{"answer":42}' },
    ]);
    expect(openaiChatMessageErrors(written)).toEqual([]);
  });

  it("writes an empty JP message only when tool calls join it", () => {
    const stream = [
      turnStart(),
      request("q"),
      message(""),
      toolResult("x", "r"),
      message(""),
      toolCall("c", "f", {}),
      message(""),
    ];
    expect(openaiChat.fromView(rawView(stream))).toEqual([
      { role: "user", content: "q" },
      { role: "tool", tool_call_id: "x", content: "r" },
      { role: "assistant", content: null, tool_calls: [call("c", "f", "{}")] },
    ]);
  });

  it("starts a new assistant message at a turn boundary", () => {
    const stream = [
      turnStart(0),
      request("q"),
      message("a"),
      turnStart(1),
      toolCall("c", "f", {}, 1),
    ];
    expect(openaiChat.fromView(rawView(stream))).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
      },
    ]);
  });

  it("gives a posted turn back exactly, parts, names and extra keys included", () => {
    const turn = [
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "image_url", image_url: { url: "https://x.io/i.png" } },
        ],
        name: "ann",
      },
      {
        role: "assistant",
        content: [{ type: "text", text: "b" }],
        refusal: null,
        annotations: [],
        tool_calls: [call("c1", "f", '{"x":1}')],
      },
      tool("c1", [
        { type: "text", text: "r" },
        { type: "text", text: "s" },
      ]),
      {
        role: "assistant",
        tool_calls: [{ ...call("c2", "f", "{}"), extra_content: { k: 1 } }],
        name: "bot",
      },
      calls(call("c3", "g", "{}")),
      { role: "assistant", content: null, refusal: "no" },
    ];
    const written = openaiChat.fromView(rawView(streamOf(turn)));
    expect(written).toEqual([
      turn[0],
      turn[1],
      turn[2],
      {
        role: "assistant",
        content: null,
        tool_calls: [{ ...call("c2", "f", "{}"), extra_content: { k: 1 } }],
        name: "bot",
      },
      turn[4],
      turn[5],
    ]);
    expect(openaiChatMessageErrors(written)).toEqual([]);
  });

  it("writes a plain string when the stored parts no longer match the event's text", () => {
    const stored = { message: { content: [{ type: "text", text: "old" }], name: "ann" } };
    const stream: Entry[] = [turnStart(), { ...request("new"), ...meta(stored) }];
    expect(openaiChat.fromView(rawView(stream))).toEqual([{ role: "user", content: "new" }]);
  });

  it("writes plain messages when stored fields no longer give the event's text", () => {
    const stream: Entry[] = [
      turnStart(),
      { ...message("new"), ...meta({ message: { content: [{ type: "text", text: "old" }] } }) },
      { ...message("new"), ...meta({ message: { content: null, refusal: "old" } }) },
      { ...toolCall("c", "f", {}), ...meta({ split: true, message: { content: "text" } }) },
      {
        ...toolResult("c", "new"),
        ...meta({ message: { content: [{ type: "text", text: "old" }] } }),
      },
    ];
    expect(openaiChat.fromView(rawView(stream))).toEqual([
      { role: "assistant", content: "new" },
      { role: "assistant", content: "new" },
      { role: "assistant", content: null, tool_calls: [call("c", "f", "{}")] },
      { role: "tool", tool_call_id: "c", content: "new" },
    ]);
  });

  it("ignores another format's metadata and a malformed one of its own", () => {
    const stream: Entry[] = [
      turnStart(),
      {
        ...request("a"),
        metadata: { "anthropic-messages": { content: [{ type: "text", text: "zz" }] } },
      },
      { ...request("b"), ...meta("garbage") },
      { ...request("c"), ...meta({ message: { content: 5 } }) },
      { ...request("d"), ...meta({ message: { role: "system", name: "x" } }) },
      { ...message("e"), ...meta({ message: { tool_calls: [1], refusal: 5 } }) },
      {
        ...toolCall("c", "f", {}),
        ...meta({ call: { id: "other", type: "custom", function: 1, k: 1 } }),
      },
      { ...toolResult("c", "r"), ...meta({ message: { tool_call_id: "z", content: [] } }) },
    ];
    expect(openaiChat.fromView(rawView(stream))).toEqual([
      { role: "user", content: "a" },
      { role: "user", content: "b" },
      { role: "user", content: "c" },
      { role: "user", content: "d", name: "x" },
      {
        role: "assistant",
        content: "e",
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" }, k: 1 }],
      },
      { role: "tool", tool_call_id: "c", content: "r" },
    ]);
  });
});

describe("openaiChat under compaction", () => {
  const turns = [
    [
      user("read a"),
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [call("c1", "fs_read", '{"path":"a"}')],
      },
      tool("c1", [{ type: "text", text: "A" }]),
      { role: "assistant", content: "A it is." },
    ],
    [
      user("read b"),
      {
        role: "assistant",
        tool_calls: [{ ...call("c1", "fs_read", '{"path":"b"}'), extra_content: { s: 1 } }],
        name: "bot",
      },
      tool("c1", "Error: ENOENT"),
      { role: "assistant", content: "No b." },
    ],
    [user("thanks"), { role: "assistant", content: "Welcome." }],
  ];

  it("strips tool calls to `{}` and results to a status line in the compacted turns only", () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 1, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    const written = openaiChat.fromView(projectedView(stream));
    expect(written).toEqual([
      { role: "user", content: "read a" },
      { role: "assistant", content: "Reading.", tool_calls: [call("c1", "fs_read", "{}")] },
      { role: "tool", tool_call_id: "c1", content: "[compacted] fs_read: success" },
      { role: "assistant", content: "A it is." },
      { role: "user", content: "read b" },
      { role: "assistant", content: null, tool_calls: [call("c1", "fs_read", "{}")], name: "bot" },
      { role: "tool", tool_call_id: "c1", content: "[compacted] fs_read: success" },
      { role: "assistant", content: "No b." },
      { role: "user", content: "thanks" },
      { role: "assistant", content: "Welcome." },
    ]);
    expect(openaiChatMessageErrors(written)).toEqual([]);
  });

  it("strips only results, keeping arguments, with a response-only strip", () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: false, response: true } }),
    ];
    expect(openaiChat.fromView(projectedView(stream)).slice(1, 3)).toEqual([
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [call("c1", "fs_read", '{"path":"a"}')],
      },
      { role: "tool", tool_call_id: "c1", content: "[compacted] fs_read: success" },
    ]);
  });

  it("says error for a stripped result posted as an error in JP events", () => {
    const stream = [
      turnStart(),
      request("q"),
      toolCall("c", "sh", { cmd: "x" }),
      toolResult("c", "boom", true),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    expect(openaiChat.fromView(projectedView(stream)).slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [call("c", "sh", "{}")] },
      { role: "tool", tool_call_id: "c", content: "[compacted] sh: error" },
    ]);
  });

  it("omits calls with their results, and leaves no empty assistant message", () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 1, 10, { tool_calls: { policy: "omit" } }),
    ];
    const written = openaiChat.fromView(projectedView(stream));
    expect(written).toEqual([
      { role: "user", content: "read a" },
      { role: "assistant", content: "Reading." },
      { role: "assistant", content: "A it is." },
      { role: "user", content: "read b" },
      { role: "assistant", content: "No b." },
      { role: "user", content: "thanks" },
      { role: "assistant", content: "Welcome." },
    ]);
    expect(openaiChatMessageErrors(written)).toEqual([]);
  });

  it("writes a summary as one user message and one assistant message", () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 1, 10, { summary: { summary: "Read a; b is missing." } }),
    ];
    const written = openaiChat.fromView(projectedView(stream));
    expect(written).toEqual([
      { role: "user", content: "[Summary of previous conversation]" },
      { role: "assistant", content: "Read a; b is missing." },
      { role: "user", content: "thanks" },
      { role: "assistant", content: "Welcome." },
    ]);
    expect(openaiChatMessageErrors(written)).toEqual([]);
  });

  it("keeps a posted turn's stored fields when a compaction strips only its reasoning", () => {
    const [turnStartEvent, ...posted] = streamOf(turns[0] as unknown[]);
    const stream: Entry[] = [
      turnStartEvent as Entry,
      posted[0] as Entry,
      reasoning("why", 0),
      ...posted.slice(1),
      compaction(0, 0, 10, { reasoning: "strip" }),
    ];
    expect(openaiChat.fromView(projectedView(stream))).toEqual([
      { role: "user", content: "read a" },
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [call("c1", "fs_read", '{"path":"a"}')],
      },
      tool("c1", [{ type: "text", text: "A" }]),
      { role: "assistant", content: "A it is." },
    ]);
  });

  it("drops reasoning everywhere, and a reasoning strip changes nothing else", () => {
    const stream: Entry[] = [
      turnStart(0),
      request("q0", 0),
      reasoning("r0", 0),
      toolCall("c", "f", { a: 1 }, 0),
      toolResult("c", "ok", false, 0),
      message("m0", 0),
      turnStart(1),
      request("q1", 1),
      reasoning("r1", 1),
      message("m1", 1),
    ];
    const expected = [
      { role: "user", content: "q0" },
      { role: "assistant", content: null, tool_calls: [call("c", "f", '{"a":1}')] },
      { role: "tool", tool_call_id: "c", content: "ok" },
      { role: "assistant", content: "m0" },
      { role: "user", content: "q1" },
      { role: "assistant", content: "m1" },
    ];
    expect(openaiChat.fromView(rawView(stream))).toEqual(expected);
    const stripped = [...stream, compaction(0, 0, 10, { reasoning: "strip" })];
    const view = projectedView(stripped);
    expect(view.map((turn) => turn.reasoningStripped)).toEqual([true, false]);
    expect(
      view[1]?.events.some((e) => e.event.type === "chat_response" && "reasoning" in e.event),
    ).toBe(true);
    expect(openaiChat.fromView(view)).toEqual(expected);
  });
});

describe("openaiChat.toEvents on huge input", () => {
  it("locates every bad part of a huge content array and lists the first hundred", () => {
    const parts = Array.from({ length: 200_000 }, () => ({ type: "video" }));
    const error = refusal([user(parts)]) as InvalidInputError;
    expect(error.issues).toHaveLength(200_000);
    expect(error.issues[199_999]?.pointer).toBe("/messages/0/content/199999/type");
    expect(error.message).toMatch(/\(and 199900 more\)$/);
  });
});

describe("openaiChat: edge cases found by mutation testing", () => {
  /** The messages `entries` (one turn, without its turn_start) are written back as. */
  const written = (...entries: Entry[]) => openaiChat.fromView(rawView([turnStart(0), ...entries]));
  const stored = (entry: Entry, message: Record<string, unknown>): Entry =>
    ({ ...entry, ...meta({ message }) }) as Entry;

  it("says a text-only content part needs a type", () => {
    expectInvalid(
      [calls(call("c", "f", "{}")), tool("c", [{ text: "r" }])],
      "messages[1].content[0].type",
      'a content part needs a type: "text"',
    );
  });

  it("refuses tool arguments nested deeper than the JSON depth limit", () => {
    const deep = `${'{"a":'.repeat(101)}1${"}".repeat(101)}`;
    expectInvalid(
      [calls(call("c", "f", deep))],
      "messages[0].tool_calls[0].function.arguments",
      "nests deeper than 100 levels: flatten the tool's arguments",
    );
  });

  it("never lets stored fields override a message's role, call id or tool calls", () => {
    expect(written(stored(request("q"), { role: "system", name: "n" }))).toEqual([
      { role: "user", content: "q", name: "n" },
    ]);
    expect(
      written(
        toolCall("c", "f", {}),
        stored(toolResult("c", "r"), { role: "system", tool_call_id: "x", extra: 1 }),
      ),
    ).toEqual([
      { role: "assistant", content: null, tool_calls: [call("c", "f", "{}")] },
      { role: "tool", tool_call_id: "c", content: "r", extra: 1 },
    ]);
    expect(
      written(
        stored(message("m"), {
          role: "user",
          name: "bot",
          tool_calls: [call("x", "g", "{}")],
        }),
      ),
    ).toEqual([{ role: "assistant", content: "m", name: "bot" }]);
  });

  it("drops a stripped result's stored fields", () => {
    const stream = [
      ...openaiChat.toEvents(
        [calls(call("c", "f", "{}")), { ...tool("c", "r"), extra: 1 }],
        options,
      ).events,
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    expect(openaiChat.fromView(rawView(stream))[1]).toEqual({
      role: "tool",
      tool_call_id: "c",
      content: "r",
      extra: 1,
    });
    expect(openaiChat.fromView(projectedView(stream))[1]).toEqual({
      role: "tool",
      tool_call_id: "c",
      content: "[compacted] f: success",
    });
  });
});

describe("openaiChat custom tool calls", () => {
  const custom = { id: "c1", type: "custom", custom: { name: "grammar", input: "a b" }, k: 1 };
  const posted = [user("parse"), { role: "assistant", content: null, tool_calls: [custom] }];

  it("holds the free-form input as arguments.input, the call marked custom", () => {
    const [, request] = events(posted);
    expect(request).toEqual({
      type: "tool_call_request",
      timestamp: T,
      id: "c1",
      name: "grammar",
      arguments: { input: "a b" },
      ...meta({ custom: true, call: { k: 1 } }),
    });
  });

  it("refuses a custom object with more than name and input", () => {
    expectInvalid(
      [{ role: "assistant", tool_calls: [{ ...custom, custom: { ...custom.custom, extra: 1 } }] }],
      "messages[0].tool_calls[0].custom.extra",
      "a custom tool call's custom object takes name and input only",
    );
  });

  it("gives the call back as posted, and a stripped call with its arguments as the input text", () => {
    expect(openaiChat.fromView(rawView(streamOf(posted)))).toEqual(posted);
    const stripped = [
      ...streamOf(posted),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    expect(openaiChat.fromView(projectedView(stripped))).toEqual([
      user("parse"),
      {
        role: "assistant",
        content: null,
        // A stripped call is no longer the posted one: its extra fields stay behind.
        tool_calls: [{ id: "c1", type: "custom", custom: { name: "grammar", input: "{}" } }],
      },
    ]);
  });
});

describe("openaiChat: result ids and stored call keys", () => {
  it("takes a turn whose leading result's id is called again and answered later in the turn", () => {
    expect(
      events([tool("c", "old"), user("again"), calls(call("c", "f", "{}")), tool("c", "new")]),
    ).toEqual([
      { type: "tool_call_response", timestamp: T, id: "c", content: "old", is_error: false },
      { type: "chat_request", timestamp: T, content: "again" },
      { type: "tool_call_request", timestamp: T, id: "c", name: "f", arguments: {} },
      { type: "tool_call_response", timestamp: T, id: "c", content: "new", is_error: false },
    ]);
  });

  it("never lets a stored call's keys replace a custom call's own custom object", () => {
    const stream: Entry[] = [
      turnStart(),
      {
        ...toolCall("c", "grammar", { input: "a b" }),
        ...meta({ custom: true, call: { custom: { name: "other", input: "x" }, k: 1 } }),
      },
    ];
    expect(openaiChat.fromView(rawView(stream))).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "custom", custom: { name: "grammar", input: "a b" }, k: 1 }],
      },
    ]);
  });
});

describe("openaiChat.fromView: hosted tool text", () => {
  /** A hosted call and its result, as another format stores them. */
  const hosted = (id: string): Entry[] => [
    {
      ...toolCall(id, "web_search", { q: "x" }),
      metadata: { "openai-responses": { hosted: { type: "web_search_call", id } } },
    },
    {
      ...toolResult(id, "found"),
      metadata: { "openai-responses": { hosted: true } },
    },
  ];
  const text = (id: string) =>
    `[hosted tool call web_search ${id}] {"q":"x"}\n[hosted tool result ${id}] found`;
  const written = (...entries: Entry[]) => openaiChat.fromView(rawView([turnStart(), ...entries]));

  it("writes a view of hosted events alone as one assistant message", () => {
    expect(written(...hosted("h"))).toEqual([{ role: "assistant", content: text("h") }]);
  });

  it("writes the text after a turn's leading results and after a last user message", () => {
    expect(written(toolResult("x", "r"), ...hosted("h"))).toEqual([
      { role: "tool", tool_call_id: "x", content: "r" },
      { role: "assistant", content: text("h") },
    ]);
    expect(written(request("q"), ...hosted("h"))).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: text("h") },
    ]);
  });

  it("writes the text before the calls that join an empty message", () => {
    expect(
      written(
        request("q"),
        message(""),
        ...hosted("h"),
        toolCall("c", "f", {}),
        toolResult("c", "r"),
      ),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: text("h") },
      { role: "assistant", content: null, tool_calls: [call("c", "f", "{}")] },
      { role: "tool", tool_call_id: "c", content: "r" },
    ]);
  });

  it("writes the text first when a later call joins the turn's opening assistant message", () => {
    expect(
      written(message("a"), ...hosted("h"), toolCall("c", "f", {}), toolResult("c", "r")),
    ).toEqual([
      { role: "assistant", content: text("h") },
      { role: "assistant", content: "a", tool_calls: [call("c", "f", "{}")] },
      { role: "tool", tool_call_id: "c", content: "r" },
    ]);
  });

  it("writes the text at the end after a last assistant message without calls", () => {
    expect(written(request("q"), message("a"), ...hosted("h"))).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
      { role: "assistant", content: text("h") },
    ]);
  });

  it("writes the text before the message of split calls, after the assistant message they follow", () => {
    expect(
      written(
        request("q"),
        message("a"),
        ...hosted("h"),
        { ...toolCall("c", "f", {}), ...meta({ split: true }) },
        toolResult("c", "r"),
      ),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
      { role: "assistant", content: text("h") },
      { role: "assistant", content: null, tool_calls: [call("c", "f", "{}")] },
      { role: "tool", tool_call_id: "c", content: "r" },
    ]);
  });

  it("lets a call after reasoning join the text, which is written once", () => {
    expect(
      written(request("q"), message(""), ...hosted("h"), reasoning("why"), toolCall("c", "f", {})),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: text("h"), tool_calls: [call("c", "f", "{}")] },
    ]);
  });
});
