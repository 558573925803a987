import { describe, expect, it } from "vitest";
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
import { InvalidInputError, UnprocessableError } from "../errors.ts";
import type { Entry } from "../events.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import { projectedView, rawView } from "./view.ts";

const T = at(0);
const META = "anthropic-messages";

const convert = (messages: unknown, dropSystem = false) =>
  anthropicMessages.toEvents(messages, { timestamp: T, dropSystem });

/** The error `toEvents` throws for `messages`. */
function refusal(messages: unknown, dropSystem = false): InvalidInputError | UnprocessableError {
  try {
    convert(messages, dropSystem);
  } catch (error) {
    if (error instanceof InvalidInputError || error instanceof UnprocessableError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

const bad = (messages: unknown, dropSystem = false) => {
  const error = refusal(messages, dropSystem);
  return { status: error.status, type: error.type, detail: error.message };
};
const invalid = (detail: string) => ({
  status: 400,
  type: "/problems/invalid-messages",
  detail,
});
const unsupported = (detail: string) => ({
  status: 422,
  type: "/problems/unsupported-message",
  detail,
});

const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });
const use = (id: string, input: unknown = {}) => ({ type: "tool_use", id, name: "read", input });
const result = (id: string, content = "ok") => ({ type: "tool_result", tool_use_id: id, content });
const image = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };
const cache = { type: "ephemeral" };

/** Posts each turn, then reads the raw stream back. */
function roundTrip(...turns: unknown[][]) {
  const stream = turns.flatMap(
    (turn, t) => anthropicMessages.toEvents(turn, { timestamp: at(t), dropSystem: false }).events,
  );
  return anthropicMessages.fromView(rawView(stream));
}

describe("anthropicMessages", () => {
  it("is named after its wire format and reads and writes `messages`", () => {
    expect(anthropicMessages.name).toBe("anthropic-messages");
    expect(anthropicMessages.field).toBe("messages");
  });

  describe("toEvents: user messages", () => {
    it("turns string content into one chat_request after turn_start, all with the timestamp", () => {
      expect(convert([user("hello")])).toEqual({
        events: [
          { type: "turn_start", timestamp: T },
          { type: "chat_request", timestamp: T, content: "hello" },
        ],
        droppedSystem: 0,
      });
    });

    it("keeps a single plain text block without metadata (a string vs a single text part)", () => {
      expect(convert([user([{ type: "text", text: "hi" }])]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "hi",
      });
    });

    it("joins the text blocks of a message with \\n into one chat_request and keeps the blocks", () => {
      const blocks = [
        { type: "text", text: "a" },
        image,
        { type: "text", text: "b", cache_control: cache },
      ];
      expect(convert([user(blocks)]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "a\nb",
        metadata: { [META]: { content: blocks } },
      });
    });

    it("keeps a lone text block's cache_control in metadata", () => {
      const blocks = [{ type: "text", text: "a", cache_control: cache }];
      expect(convert([user(blocks)]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "a",
        metadata: { [META]: { content: blocks } },
      });
    });

    it("gives an image-only message an empty chat_request with the image in metadata", () => {
      const document = {
        type: "document",
        source: { type: "text", media_type: "text/plain", data: "doc" },
        title: "T",
      };
      expect(convert([user([image, document])]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "",
        metadata: { [META]: { content: [image, document] } },
      });
    });

    it("turns tool results into tool_call_responses, then the rest of the message into a chat_request", () => {
      const parts = [{ type: "text", text: "x" }, image, { type: "text", text: "y" }];
      const { events } = convert([
        user("go"),
        assistant([use("a"), use("b"), use("c")]),
        user([
          { ...result("b", "B"), is_error: true },
          { type: "tool_result", tool_use_id: "a", content: parts, cache_control: cache },
          { type: "tool_result", tool_use_id: "c" },
          { type: "text", text: "more" },
        ]),
      ]);
      expect(events.slice(5)).toEqual([
        { type: "tool_call_response", timestamp: T, id: "b", content: "B", is_error: true },
        {
          type: "tool_call_response",
          timestamp: T,
          id: "a",
          content: "x\ny",
          is_error: false,
          metadata: {
            [META]: { block: { type: "tool_result", cache_control: cache, content: parts } },
          },
        },
        { type: "tool_call_response", timestamp: T, id: "c", content: "", is_error: false },
        { type: "chat_request", timestamp: T, content: "more" },
      ]);
    });

    it("keeps the tool result parts when they are a single text part", () => {
      const parts = [{ type: "text", text: "x" }];
      const { events } = convert([
        user("go"),
        assistant([use("a")]),
        user([{ type: "tool_result", tool_use_id: "a", content: parts }]),
      ]);
      expect(events.at(-1)).toEqual({
        type: "tool_call_response",
        timestamp: T,
        id: "a",
        content: "x",
        is_error: false,
        metadata: { [META]: { block: { type: "tool_result", content: parts } } },
      });
    });
  });

  describe("toEvents: assistant messages", () => {
    it("turns each block into its event, in order, opaque fields in metadata", () => {
      const citation = {
        type: "char_location",
        cited_text: "c",
        document_index: 0,
        document_title: null,
        start_char_index: 0,
        end_char_index: 1,
      };
      const { events } = convert([
        user("q"),
        assistant([
          { type: "thinking", thinking: "let me see", signature: "sig1" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "plain" },
          { type: "text", text: "cited", citations: [citation] },
          { type: "tool_use", id: "t1", name: "read", input: { path: "a" }, cache_control: cache },
          { type: "tool_use", id: "t2", name: "list", input: {}, caller: { type: "direct" } },
        ]),
        user([result("t1"), result("t2")]),
        assistant("done"),
      ]);
      expect(events.slice(2)).toEqual([
        {
          type: "chat_response",
          timestamp: T,
          reasoning: "let me see",
          metadata: { [META]: { block: { type: "thinking", signature: "sig1" } } },
        },
        {
          type: "chat_response",
          timestamp: T,
          reasoning: "",
          metadata: { [META]: { block: { type: "redacted_thinking", data: "opaque" } } },
        },
        { type: "chat_response", timestamp: T, message: "plain" },
        {
          type: "chat_response",
          timestamp: T,
          message: "cited",
          metadata: { [META]: { block: { type: "text", citations: [citation] } } },
        },
        {
          type: "tool_call_request",
          timestamp: T,
          id: "t1",
          name: "read",
          arguments: { path: "a" },
          metadata: { [META]: { block: { type: "tool_use", cache_control: cache } } },
        },
        {
          type: "tool_call_request",
          timestamp: T,
          id: "t2",
          name: "list",
          arguments: {},
          metadata: { [META]: { block: { type: "tool_use", caller: { type: "direct" } } } },
        },
        { type: "tool_call_response", timestamp: T, id: "t1", content: "ok", is_error: false },
        { type: "tool_call_response", timestamp: T, id: "t2", content: "ok", is_error: false },
        { type: "chat_response", timestamp: T, message: "done" },
      ]);
    });

    it("keeps the very input object posted (no copy)", () => {
      const input = { deep: { list: [1, 2] } };
      const { events } = convert([user("q"), assistant([use("t", input)]), user([result("t")])]);
      expect((events[2] as { arguments: unknown }).arguments).toBe(input);
    });

    it("accepts thinking with an empty text (omitted display) as long as it is signed", () => {
      const { events } = convert([
        user("q"),
        assistant([{ type: "thinking", thinking: "", signature: "s" }]),
      ]);
      expect(events[2]).toEqual({
        type: "chat_response",
        timestamp: T,
        reasoning: "",
        metadata: { [META]: { block: { type: "thinking", signature: "s" } } },
      });
    });

    it("allows a call id of another turn (ids are unique within a turn only)", () => {
      const turn = [user("q"), assistant([use("same")]), user([result("same")])];
      expect(convert(turn).events).toHaveLength(4);
      expect(convert(turn).events).toHaveLength(4);
    });

    it("accepts adjacent same-role messages as the API does (it merges them)", () => {
      const { events } = convert([
        user("q"),
        assistant([{ type: "text", text: "first" }]),
        assistant([use("t")]),
        user([result("t")]),
        user("and then"),
        assistant("end"),
      ]);
      expect(events.map((event) => event.type)).toEqual([
        "turn_start",
        "chat_request",
        "chat_response",
        "tool_call_request",
        "tool_call_response",
        "chat_request",
        "chat_response",
      ]);
    });
  });

  describe("toEvents: system messages", () => {
    const system = { role: "system", content: "be brief" };

    it("refuses a system message with a 422 that says system prompts are not turns", () => {
      expect(bad([system, user("q")])).toEqual(
        unsupported(
          "messages[0]: system prompts are not conversation turns: send yours with each call " +
            "(the Messages API's `system` parameter), and give model.context_window net of it if it is large; " +
            'or post with "drop_system": true to drop leading system messages',
        ),
      );
    });

    it("drops leading system messages with dropSystem and counts them", () => {
      expect(convert([system, system, user("q")], true)).toEqual({
        events: [
          { type: "turn_start", timestamp: T },
          { type: "chat_request", timestamp: T, content: "q" },
        ],
        droppedSystem: 2,
      });
    });

    it("refuses a system message after the first turn message even with dropSystem", () => {
      expect(bad([user("q"), system], true)).toEqual(
        unsupported(
          "messages[1]: system prompts are not conversation turns: send yours with each call " +
            "(the Messages API's `system` parameter), and give model.context_window net of it if it is large; " +
            "drop_system drops leading system messages only",
        ),
      );
    });

    it("refuses a turn of system messages only", () => {
      expect(bad([system], true)).toEqual(
        invalid("messages: nothing is left once the leading system messages are dropped"),
      );
    });

    it("locates issues at the index the platform wrote, dropped messages counted", () => {
      expect(bad([system, user("")], true)).toEqual(
        invalid("messages[1].content: content must not be empty (the API refuses it)"),
      );
    });
  });

  describe("toEvents: refusals", () => {
    it("refuses an empty array", () => {
      expect(bad([])).toEqual(invalid("messages: a turn needs at least one message"));
    });

    it("refuses a body that is not an array", () => {
      expect(bad({ role: "user", content: "q" })).toEqual(
        invalid("messages: Invalid input: expected array, received object"),
      );
    });

    it("refuses a role other than user and assistant", () => {
      expect(bad([{ role: "tool", content: "q" }])).toEqual(
        invalid('messages[0].role: role must be "user" or "assistant"'),
      );
    });

    it("refuses empty content, as a string or an array", () => {
      const detail = "messages[0].content: content must not be empty (the API refuses it)";
      expect(bad([user("")])).toEqual(invalid(detail));
      expect(bad([user([])])).toEqual(invalid(detail));
      expect(bad([user("q"), assistant("")])).toEqual(
        invalid("messages[1].content: content must not be empty (the API refuses it)"),
      );
    });

    it("refuses content that is neither a string nor an array", () => {
      expect(bad([user(3)])).toEqual(
        invalid("messages[0].content: content must be a string or an array of content blocks"),
      );
    });

    it("refuses an empty text block", () => {
      expect(
        bad([
          user([
            { type: "text", text: "a" },
            { type: "text", text: "" },
          ]),
        ]),
      ).toEqual(
        invalid("messages[0].content[1].text: a text block must not be empty (the API refuses it)"),
      );
    });

    it("refuses a block of the wrong role, naming its type", () => {
      expect(
        bad([
          user([
            { type: "text", text: "a" },
            { type: "thinking", thinking: "t", signature: "s" },
          ]),
        ]),
      ).toEqual(
        invalid(
          "messages[0].content[1].type: a user message takes text, image, document, search_result, container_upload and tool_result blocks",
        ),
      );
      expect(bad([user("q"), assistant([image])])).toEqual(
        invalid(
          "messages[1].content[0].type: an assistant message takes text, thinking, redacted_thinking, tool_use, server_tool_use and server tool result blocks",
        ),
      );
    });

    it("refuses a key the API does not define (it would be lost)", () => {
      expect(bad([user([{ type: "text", text: "a", extra: 1 }])])).toEqual(
        invalid('messages[0].content[0]: Unrecognized key: "extra"'),
      );
    });

    it("refuses a thinking block without its signature", () => {
      expect(bad([user("q"), assistant([{ type: "thinking", thinking: "t" }])])).toEqual(
        invalid(
          "messages[1].content[0].signature: a thinking block needs its signature: the API requires thinking blocks back unchanged",
        ),
      );
    });

    it("refuses tool input that is not an object", () => {
      expect(bad([user("q"), assistant([use("t", [1])]), user([result("t")])])).toEqual(
        invalid("messages[1].content[0].input: expected a JSON object"),
      );
    });

    it("lists every shape issue at once, each located", () => {
      const error = refusal([user(""), { role: "x", content: "q" }]) as InvalidInputError;
      expect(error.issues).toEqual([
        {
          pointer: "/messages/0/content",
          detail: "messages[0].content: content must not be empty (the API refuses it)",
        },
        {
          pointer: "/messages/1/role",
          detail: 'messages[1].role: role must be "user" or "assistant"',
        },
      ]);
    });

    it("refuses a duplicate tool_use id within the turn, naming both", () => {
      expect(
        bad([user("q"), assistant([use("t")]), user([result("t")]), assistant([use("t")])]),
      ).toEqual(
        invalid(
          'messages[3].content[0]: tool_use id "t" is already used by messages[1].content[0]: tool call ids must be unique within a turn',
        ),
      );
    });

    it("refuses an orphan tool result: post it in the turn that holds its call, or first in the next", () => {
      expect(bad([user("q"), assistant("a"), user([result("t")])])).toEqual(
        invalid(
          'messages[2].content[0]: tool_result for "t" has no tool_use earlier in this turn: post it in the turn that holds its call (a result for a call left pending at the end of the previous turn comes first in the next turn, before any other message)',
        ),
      );
      expect(bad([user([result("t"), result("t")])])).toEqual(
        invalid(
          'messages[0].content[1]: tool_use "t" is already answered by messages[0].content[0]',
        ),
      );
    });

    it("takes a turn ending in tool_use, and the next turn's leading tool_result", () => {
      const ending = convert([user("q"), assistant([use("t")])]).events;
      expect(ending.map((e) => e.type)).toEqual([
        "turn_start",
        "chat_request",
        "tool_call_request",
      ]);
      const next = convert([
        user([result("t"), { type: "text", text: "go on" }]),
        assistant("done"),
      ]).events;
      expect(next.map((e) => e.type)).toEqual([
        "turn_start",
        "tool_call_response",
        "chat_request",
        "chat_response",
      ]);
    });

    it("leaves a call pending when the turn ends with results for the other calls only", () => {
      const turn1 = [user("q"), assistant([use("a"), use("b")]), user([result("a")])];
      expect(convert(turn1).events.map((e) => e.type)).toEqual([
        "turn_start",
        "chat_request",
        "tool_call_request",
        "tool_call_request",
        "tool_call_response",
      ]);
      const turn2 = [user([result("b", "B"), { type: "text", text: "go on" }]), assistant("done")];
      expect(roundTrip(turn1, turn2)).toEqual([
        user("q"),
        assistant([use("a"), use("b")]),
        user([result("a"), result("b", "B"), { type: "text", text: "go on" }]),
        assistant("done"),
      ]);
    });

    it("refuses a second result for the same call", () => {
      expect(bad([user("q"), assistant([use("t")]), user([result("t"), result("t")])])).toEqual(
        invalid(
          'messages[2].content[1]: tool_use "t" is already answered by messages[2].content[0]',
        ),
      );
    });

    it("refuses a tool result after other content of its user message (adjacent ones count as one)", () => {
      const detail =
        "tool_result blocks must come first in their user message, before any other content " +
        "(the API's rule; adjacent user messages count as one)";
      expect(
        bad([user("q"), assistant([use("t")]), user([{ type: "text", text: "x" }, result("t")])]),
      ).toEqual(invalid(`messages[2].content[1]: ${detail}`));
      expect(bad([user("q"), assistant([use("t")]), user("x"), user([result("t")])])).toEqual(
        invalid(`messages[3].content[0]: ${detail}`),
      );
    });

    it("refuses a call left without a result in the next user message, or at the end of the turn", () => {
      const detail = (id: string) =>
        `tool_use "${id}" has no tool_result in the user message right after it: ` +
        "post its result there, or end the turn with the call (the next turn then begins with its result)";
      expect(
        bad([user("q"), assistant([use("t"), use("u")]), user([result("t")]), assistant("a")]),
      ).toEqual(invalid(`messages[1].content[1]: ${detail("u")}`));
      expect(bad([user("q"), assistant([use("t")]), user("no result")])).toEqual(
        invalid(`messages[1].content[0]: ${detail("t")}`),
      );
    });

    it("refuses block types it does not model with a 422 naming the block and what to do", () => {
      const detail = (type: string) =>
        `block type "${type}" is not supported: the service models text, image, document, search_result, container_upload, tool_use, ` +
        "tool_result, thinking, redacted_thinking, server_tool_use and server tool result blocks; " +
        "leave it out of the posted messages (tool references, browser states and block types newer than the SDK are not modelled), " +
        "or post the turn as JP events";
      expect(bad([user([{ type: "tool_reference", tool_name: "f" }])])).toEqual(
        unsupported(`messages[0].content[0]: ${detail("tool_reference")}`),
      );
    });

    it("refuses tool result parts it does not model with a 422", () => {
      expect(
        bad([
          user("q"),
          assistant([use("t")]),
          user([
            {
              type: "tool_result",
              tool_use_id: "t",
              content: [{ type: "tool_reference", tool_name: "x" }],
            },
          ]),
        ]),
      ).toEqual(
        unsupported(
          'messages[2].content[0].content[0]: block type "tool_reference" is not supported: ' +
            "a tool result's content may hold text, image, document and search_result parts; leave it out of the posted messages " +
            "(tool references, browser states and block types newer than the SDK are not modelled), " +
            "or post the turn as JP events",
        ),
      );
    });
  });

  describe("messageSchema", () => {
    it("documents one message: accepts a valid one, refuses others", () => {
      const schema = anthropicMessages.messageSchema;
      expect(schema.safeParse({ role: "user", content: [image] }).success).toBe(true);
      expect(schema.safeParse({ role: "assistant", content: "a" }).success).toBe(true);
      expect(schema.safeParse({ role: "user", content: "" }).success).toBe(false);
      expect(schema.safeParse({ role: "system", content: "s" }).success).toBe(false);
      expect(
        schema.safeParse({ role: "user", content: [{ type: "thinking", thinking: "" }] }).success,
      ).toBe(false);
    });
  });

  describe("fromView", () => {
    it("gives back a posted conversation exactly", () => {
      const turn1 = [
        user([
          { type: "text", text: "a", cache_control: cache },
          image,
          { type: "text", text: "b" },
        ]),
        assistant([
          { type: "thinking", thinking: "hmm", signature: "sig" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "let me look" },
          { ...use("t1", { path: "x" }), cache_control: cache },
          use("t2"),
        ]),
        user([
          {
            type: "tool_result",
            tool_use_id: "t2",
            content: [{ type: "text", text: "p" }, image],
            is_error: true,
          },
          { ...result("t1"), cache_control: cache },
        ]),
        assistant("done"),
      ];
      const turn2 = [user("next"), assistant([{ type: "text", text: "ok" }])];
      expect(roundTrip(turn1, turn2)).toEqual([...turn1, user("next"), assistant("ok")]);
    });

    it("merges adjacent same-role messages, tool results first, across turns too", () => {
      const turn1 = [user("q"), assistant([use("t")]), user([result("t")])];
      const turn2 = [user([{ type: "text", text: "x" }, image]), assistant("a"), assistant("b")];
      expect(roundTrip(turn1, turn2)).toEqual([
        user("q"),
        assistant([use("t")]),
        user([result("t"), { type: "text", text: "x" }, image]),
        assistant([
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ]),
      ]);
    });

    it("writes events posted as JP: data as JSON text; unsigned reasoning and empty texts left out", () => {
      const stream: Entry[] = [
        turnStart(),
        request("q"),
        reasoning("unsigned thoughts"),
        message(""),
        { type: "chat_response", timestamp: T, data: { answer: 42 } },
        request(""),
        toolCall("c", "read", { a: 1 }),
        toolResult("c", ""),
      ];
      expect(anthropicMessages.fromView(rawView(stream))).toEqual([
        user("q"),
        assistant([
          { type: "text", text: '{"answer":42}' },
          { type: "tool_use", id: "c", name: "read", input: { a: 1 } },
        ]),
        user([{ type: "tool_result", tool_use_id: "c" }]),
      ]);
    });

    it("never trusts metadata that no longer matches, or is not valid", () => {
      const stream: Entry[] = [
        turnStart(),
        {
          ...request("edited"),
          metadata: { [META]: { content: [{ type: "text", text: "orig" }, image] } },
        },
        {
          ...message("m"),
          metadata: { [META]: { block: { type: "text", cache_control: "bogus" } } },
        },
        { ...reasoning("r"), metadata: { [META]: { block: { type: "thinking", signature: 7 } } } },
        {
          ...reasoning("r"),
          metadata: { [META]: { block: { type: "redacted_thinking", data: "d" } } },
        },
        { ...toolCall("c", "read", {}), metadata: { [META]: "nonsense" } },
        {
          ...toolResult("c", "changed"),
          metadata: {
            [META]: {
              block: {
                type: "tool_result",
                is_error: true,
                content: [{ type: "text", text: "orig" }],
              },
            },
          },
        },
      ];
      expect(anthropicMessages.fromView(rawView(stream))).toEqual([
        user("edited"),
        assistant([
          { type: "text", text: "m" },
          { type: "tool_use", id: "c", name: "read", input: {} },
        ]),
        user([{ type: "tool_result", tool_use_id: "c", content: "changed" }]),
      ]);
    });

    it("turns a result without its call into text, and answers a call left without a result", () => {
      const stream: Entry[] = [
        turnStart(),
        request("q"),
        toolResult("ghost", "boo", true),
        toolCall("c", "read", {}),
        request("interrupting"),
        message("end"),
      ];
      expect(anthropicMessages.fromView(rawView(stream))).toEqual([
        // Results come first in their message: the orphan's text keeps that place.
        user([
          { type: "text", text: "[tool result ghost (error)] boo" },
          { type: "text", text: "q" },
        ]),
        assistant([{ type: "tool_use", id: "c", name: "read", input: {} }]),
        user([
          {
            type: "tool_result",
            tool_use_id: "c",
            content: "[no result recorded]",
            is_error: true,
          },
          { type: "text", text: "interrupting" },
        ]),
        assistant("end"),
      ]);
    });

    it("opens with a user message when the view would start with the assistant", () => {
      const stream: Entry[] = [turnStart(), request(""), message("hi")];
      expect(anthropicMessages.fromView(rawView(stream))).toEqual([
        user("[conversation continues]"),
        assistant("hi"),
      ]);
    });

    it("answers nothing for a view without provider events", () => {
      expect(anthropicMessages.fromView(rawView([turnStart()]))).toEqual([]);
    });

    it("leaves a call in the final assistant message open (the platform is running it)", () => {
      const stream: Entry[] = [turnStart(), request("q"), toolCall("c", "read", {})];
      expect(anthropicMessages.fromView(rawView(stream))).toEqual([
        user("q"),
        assistant([{ type: "tool_use", id: "c", name: "read", input: {} }]),
      ]);
    });
  });

  describe("fromView of a compacted view", () => {
    const turn0 = [user("start"), assistant("hello")];
    const turn1 = [
      user("read it"),
      assistant([
        { type: "thinking", thinking: "plan", signature: "s1" },
        { ...use("t1", { path: "a" }), cache_control: cache },
      ]),
      user([{ ...result("t1", "contents"), is_error: true, cache_control: cache }]),
      assistant([{ type: "thinking", thinking: "only thoughts", signature: "s2" }]),
      user("go on"),
      assistant("read"),
    ];
    const turn2 = [
      user("again"),
      assistant([{ type: "thinking", thinking: "tail", signature: "s3" }, use("t2")]),
      user([result("t2")]),
      assistant("fine"),
    ];
    const stream = [turn0, turn1, turn2].flatMap(
      (turn, t) => anthropicMessages.toEvents(turn, { timestamp: at(t), dropSystem: false }).events,
    );
    const compacted = (...policies: Parameters<typeof compaction>[3][]) =>
      anthropicMessages.fromView(
        projectedView([...stream, ...policies.map((p, i) => compaction(1, 1, 100 + i, p))]),
      );
    const tail = [
      user("again"),
      assistant([{ type: "thinking", thinking: "tail", signature: "s3" }, use("t2")]),
      user([result("t2")]),
      assistant("fine"),
    ];

    it("strips a tool result to its status, keeping is_error, without its opaque fields", () => {
      expect(
        compacted({ tool_calls: { policy: "strip", request: false, response: true } }),
      ).toEqual([
        ...turn0,
        user("read it"),
        assistant([
          { type: "thinking", thinking: "plan", signature: "s1" },
          { ...use("t1", { path: "a" }), cache_control: cache },
        ]),
        user([
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: "[compacted] read: error",
            is_error: true,
          },
        ]),
        assistant([{ type: "thinking", thinking: "only thoughts", signature: "s2" }]),
        user("go on"),
        assistant("read"),
        ...tail,
      ]);
    });

    it("strips tool input to {}", () => {
      const messages = compacted({
        tool_calls: { policy: "strip", request: true, response: false },
      });
      expect(messages[3]).toEqual(
        assistant([{ type: "thinking", thinking: "plan", signature: "s1" }, use("t1", {})]),
      );
      expect(messages[4]).toEqual(turn1[2]);
    });

    it("omits a call with its result, and stripped reasoning takes the empty messages with it", () => {
      expect(compacted({ tool_calls: { policy: "omit" }, reasoning: "strip" })).toEqual([
        ...turn0,
        user([
          { type: "text", text: "read it" },
          { type: "text", text: "go on" },
        ]),
        assistant("read"),
        ...tail,
      ]);
    });

    it("removes thinking blocks in the compacted turns only: the kept tail keeps its signatures", () => {
      expect(compacted({ reasoning: "strip" })).toEqual([
        ...turn0,
        user("read it"),
        assistant([{ ...use("t1", { path: "a" }), cache_control: cache }]),
        // The thinking-only message vanished: the user messages around it merge.
        user([
          { ...result("t1", "contents"), is_error: true, cache_control: cache },
          { type: "text", text: "go on" },
        ]),
        assistant("read"),
        ...tail,
      ]);
    });

    it("replaces a summarized run with one user and one assistant message", () => {
      expect(compacted({ summary: { summary: "they read a file" } })).toEqual([
        ...turn0,
        user("[Summary of previous conversation]"),
        assistant("they read a file"),
        ...tail,
      ]);
    });
  });
});

describe("anthropicMessages: edge cases found by mutation testing", () => {
  /** The messages one turn of `entries` (without its turn_start) is written back as. */
  const written = (...entries: Entry[]) =>
    anthropicMessages.fromView(rawView([turnStart(0), ...entries]));
  const withBlock = (entry: Entry, block: Record<string, unknown>): Entry =>
    ({ ...entry, metadata: { [META]: { block } } }) as Entry;

  it("answers 400, not a crash or a 422, for null messages, blocks and parts", () => {
    expect(bad([null])).toEqual(
      invalid(
        'messages[0]: expected a message object: {"role": "user" | "assistant", "content": …}',
      ),
    );
    expect(bad([user([null])])).toEqual(
      invalid(
        "messages[0].content[0]: a user message takes text, image, document, search_result, container_upload and tool_result blocks",
      ),
    );
    expect(bad([assistant([use("c")]), user([{ ...result("c"), content: [null] }])])).toEqual(
      invalid("messages[1].content[0].content: Invalid input"),
    );
  });

  it("answers 400 for a block or part whose type is no string", () => {
    expect(bad([user([{ type: 5 }])])).toEqual(
      invalid(
        "messages[0].content[0].type: a user message takes text, image, document, search_result, container_upload and tool_result blocks",
      ),
    );
    expect(
      bad([assistant([use("c")]), user([{ ...result("c"), content: [{ type: 5 }] }])]),
    ).toEqual(invalid("messages[1].content[0].content: Invalid input"));
  });

  it("checks the parts of tool results only", () => {
    expect(bad([user([{ type: "text", text: "hi", content: [{ type: "weird" }] }])])).toEqual(
      invalid('messages[0].content[0]: Unrecognized key: "content"'),
    );
  });

  it("answers 400 for an array-like object, whatever it holds", () => {
    const expected = invalid("messages: Invalid input: expected array, received object");
    expect(bad({ length: 1, 0: { role: "system", content: "x" } })).toEqual(expected);
    expect(bad({ length: 1, 0: user([{ type: "server_tool_use" }]) })).toEqual(expected);
  });

  it("refuses a call left unanswered by the user run right after it, even if a later run answers others", () => {
    expect(
      bad([assistant([use("c1")]), user("hi"), assistant([use("c2")]), user([result("c2")])]),
    ).toEqual(
      invalid(
        'messages[0].content[0]: tool_use "c1" has no tool_result in the user message right after it: post its result there, or end the turn with the call (the next turn then begins with its result)',
      ),
    );
  });

  it("uses stored blocks only of the event's own type", () => {
    expect(written(request("q"), withBlock(reasoning(""), { type: "text", data: "zzz" }))).toEqual([
      { role: "user", content: "q" },
    ]);
    expect(
      written(request("q"), withBlock(message("m"), { type: "thinking", cache_control: cache })),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "m" },
    ]);
    expect(
      written(
        request("q"),
        withBlock(toolCall("c", "read", {}), { type: "text", cache_control: cache }),
        toolResult("c", "r"),
      ),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "tool_use", id: "c", name: "read", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c", content: "r" }] },
    ]);
  });

  it("writes nothing for a response without message, data or reasoning", () => {
    expect(written(request("q"), { type: "chat_response", timestamp: T } as Entry)).toEqual([
      { role: "user", content: "q" },
    ]);
  });

  it("drops a stored result content that no longer spells an empty result", () => {
    expect(
      written(
        request("q"),
        toolCall("c", "read", {}),
        withBlock(toolResult("c", ""), { type: "tool_result", tool_use_id: "c", content: "stale" }),
      ),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "tool_use", id: "c", name: "read", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c" }] },
    ]);
  });

  it("writes orphan results as text, marking errors only", () => {
    expect(written(request("q"), toolResult("c", "r"), toolResult("d", "e", true))).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "[tool result c] r" },
          { type: "text", text: "[tool result d (error)] e" },
          { type: "text", text: "q" },
        ],
      },
    ]);
  });

  it("opens a view that starts with an assistant message with a user message", () => {
    expect(written(message("m"))).toEqual([
      { role: "user", content: "[conversation continues]" },
      { role: "assistant", content: "m" },
    ]);
  });
});

describe("anthropicMessages: openings and search results", () => {
  it("opens a view that starts with an assistant message with a user message saying so", () => {
    const stream: Entry[] = [turnStart(0), message("Hello.")];
    expect(anthropicMessages.fromView(rawView(stream))).toEqual([
      { role: "user", content: "[conversation continues]" },
      { role: "assistant", content: "Hello." },
    ]);
  });

  it("reads a search result as its text", () => {
    const found = {
      type: "search_result",
      source: "https://example.com/w",
      title: "W",
      content: [{ type: "text", text: "found" }],
    };
    const { events } = convert([user([{ type: "text", text: "see" }, found])]);
    expect(events[1]).toMatchObject({ type: "chat_request", content: "see\nfound" });
  });
});
