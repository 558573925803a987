import { describe, expect, it } from "vitest";
import {
  approvalResponse as answer,
  approvalRequest as ask,
} from "../../test/helpers/ai-sdk-parts.ts";
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
import { aiSdk } from "./ai-sdk.ts";
import { projectedView, rawView } from "./view.ts";

const T = at(0);
const META = "ai-sdk";

const convert = (messages: unknown, dropSystem = false) =>
  aiSdk.toEvents(messages, { timestamp: T, dropSystem });

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
const invalid = (detail: string) => ({ status: 400, type: "/problems/invalid-messages", detail });
const unsupported = (detail: string) => ({
  status: 422,
  type: "/problems/unsupported-message",
  detail,
});

const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });
const tool = (...content: unknown[]) => ({ role: "tool", content });
const system = (content: string) => ({ role: "system", content });
const text = (value: string) => ({ type: "text", text: value });
const call = (id: string, input: unknown = {}, toolName = "read") => ({
  type: "tool-call",
  toolCallId: id,
  toolName,
  input,
});
const result = (
  id: string,
  output: unknown = { type: "text", value: "ok" },
  toolName = "read",
) => ({
  type: "tool-result",
  toolCallId: id,
  toolName,
  output,
});
const image = { type: "image", image: "https://example.com/a.png", mediaType: "image/png" };
const options = { anthropic: { cacheControl: { type: "ephemeral" } } };

/** Posts each turn, then reads the raw stream back. */
function roundTrip(...turns: unknown[][]) {
  const stream = turns.flatMap(
    (turn, t) => aiSdk.toEvents(turn, { timestamp: at(t), dropSystem: false }).events,
  );
  return aiSdk.fromView(rawView(stream));
}

describe("aiSdk", () => {
  it("is named after its wire format and reads and writes `messages`", () => {
    expect(aiSdk.name).toBe("ai-sdk");
    expect(aiSdk.field).toBe("messages");
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

    it("keeps a single plain text part without metadata (a string vs a single text part)", () => {
      expect(convert([user([text("hi")])]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "hi",
      });
    });

    it("joins text parts with \\n and keeps the parts, images and files included, in metadata", () => {
      const file = { type: "file", data: "aGk=", mediaType: "text/plain", filename: "a.txt" };
      const parts = [text("a"), image, { ...text("b"), providerOptions: options }, file];
      expect(convert([user(parts)]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "a\nb",
        metadata: { [META]: { content: parts } },
      });
    });

    it("gives an image-only message an empty chat_request with the image in metadata", () => {
      expect(convert([user([image])]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "",
        metadata: { [META]: { content: [image] } },
      });
    });

    it("takes an empty text part beside an image as empty text, the parts kept", () => {
      const parts = [text(""), image];
      expect(convert([user(parts)]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "",
        metadata: { [META]: { content: parts } },
      });
    });

    it("keeps the message's providerOptions", () => {
      expect(convert([{ ...user("hi"), providerOptions: options }]).events[1]).toEqual({
        type: "chat_request",
        timestamp: T,
        content: "hi",
        metadata: { [META]: { message: { providerOptions: options } } },
      });
    });
  });

  describe("toEvents: assistant and tool messages", () => {
    it("maps text, reasoning and tool-call parts in order, and results with their output as text", () => {
      const signature = { anthropic: { signature: "sig" } };
      expect(
        convert([
          user("go"),
          assistant([
            { type: "reasoning", text: "plan", providerOptions: signature },
            text("reading"),
            call("c1", { path: "a" }),
            { ...call("c2", {}, "grep"), providerOptions: options, providerExecuted: false },
          ]),
          tool(
            result("c1", { type: "json", value: { lines: [1, 2] } }),
            result("c2", { type: "error-text", value: "no match" }, "grep"),
          ),
          assistant("done"),
        ]).events,
      ).toEqual([
        { type: "turn_start", timestamp: T },
        { type: "chat_request", timestamp: T, content: "go" },
        {
          type: "chat_response",
          timestamp: T,
          reasoning: "plan",
          metadata: { [META]: { part: { providerOptions: signature } } },
        },
        { type: "chat_response", timestamp: T, message: "reading" },
        {
          type: "tool_call_request",
          timestamp: T,
          id: "c1",
          name: "read",
          arguments: { path: "a" },
        },
        {
          type: "tool_call_request",
          timestamp: T,
          id: "c2",
          name: "grep",
          arguments: {},
          metadata: { [META]: { part: { providerOptions: options, providerExecuted: false } } },
        },
        {
          type: "tool_call_response",
          timestamp: T,
          id: "c1",
          content: '{"lines":[1,2]}',
          is_error: false,
          metadata: { [META]: { part: { output: { type: "json", value: { lines: [1, 2] } } } } },
        },
        { type: "tool_call_response", timestamp: T, id: "c2", content: "no match", is_error: true },
        { type: "chat_response", timestamp: T, message: "done" },
      ]);
    });

    it("reads every output type as text, with is_error for the error ones", () => {
      const outputs = [
        [{ type: "text", value: "t" }, "t", false],
        [{ type: "error-text", value: "e" }, "e", true],
        [{ type: "json", value: [1, "x"] }, '[1,"x"]', false],
        [{ type: "error-json", value: { code: 2 } }, '{"code":2}', true],
        [{ type: "execution-denied", reason: "no" }, "no", true],
        [{ type: "execution-denied" }, "execution denied", true],
        [
          {
            type: "content",
            value: [text("a"), { type: "image-url", url: "https://x/y.png" }, text("b")],
          },
          "a\nb",
          false,
        ],
      ] as const;
      for (const [output, content, isError] of outputs) {
        const [, , , response] = convert([
          user("go"),
          assistant([call("c")]),
          tool(result("c", output)),
        ]).events;
        expect(response).toMatchObject({ type: "tool_call_response", content, is_error: isError });
      }
    });

    it("keeps a result's own tool name when it is not its call's, and the tool message's options", () => {
      const [, , , response] = convert([
        user("go"),
        assistant([call("c")]),
        {
          ...tool({ ...result("c", undefined, "other"), providerOptions: options }),
          providerOptions: options,
        },
      ]).events;
      expect(response).toEqual({
        type: "tool_call_response",
        timestamp: T,
        id: "c",
        content: "ok",
        is_error: false,
        metadata: {
          [META]: {
            message: { providerOptions: options },
            part: { toolName: "other", providerOptions: options },
          },
        },
      });
    });

    it("marks an assistant or tool message that follows one of its role", () => {
      const events = convert([
        user("go"),
        assistant("first"),
        assistant([call("c1"), call("c2")]),
        tool(result("c1")),
        tool(result("c2")),
      ]).events;
      expect(events.map((event) => event.metadata ?? null)).toEqual([
        null,
        null,
        null,
        { [META]: { split: true } },
        null,
        null,
        { [META]: { split: true } },
      ]);
    });

    it("takes the same tool call id again in a later turn (§5)", () => {
      const turn = [user("go"), assistant([call("c")]), tool(result("c"))];
      expect(roundTrip(turn, turn)).toEqual([...turn, ...turn]);
    });
  });

  describe("toEvents: system messages", () => {
    it("refuses a system message with a 422 that says what to do", () => {
      expect(bad([system("be brief"), user("hi")])).toEqual(
        unsupported(
          'messages[0]: system messages are not conversation turns: pass yours with each call (`system`), and give model.context_window net of it if it is large; or post with "drop_system": true to drop leading system messages',
        ),
      );
    });

    it("drops leading system messages with dropSystem and says how many", () => {
      expect(convert([system("a"), system("b"), user("hi")], true)).toEqual({
        events: [
          { type: "turn_start", timestamp: T },
          { type: "chat_request", timestamp: T, content: "hi" },
        ],
        droppedSystem: 2,
      });
    });

    it("refuses a system message after another one even with dropSystem, and a turn of system messages only", () => {
      expect(bad([user("hi"), system("late")], true)).toEqual(
        unsupported(
          "messages[1]: system messages are not conversation turns: pass yours with each call (`system`), and give model.context_window net of it if it is large; drop_system drops leading system messages only",
        ),
      );
      expect(bad([system("a")], true)).toEqual(
        invalid("messages: nothing is left once the leading system messages are dropped"),
      );
    });

    it("keeps the indexes of the posted array in details after dropped system messages", () => {
      expect(bad([system("a"), user([])], true)).toEqual(
        invalid("messages[1].content: content must not be empty"),
      );
    });
  });

  describe("toEvents: refusals", () => {
    it("refuses what is not a turn of messages (400)", () => {
      expect(bad([])).toEqual(invalid("messages: a turn needs at least one message"));
      expect(bad("hi")).toEqual(
        invalid("messages: Invalid input: expected array, received string"),
      );
      expect(bad([null])).toEqual(
        invalid(
          'messages[0]: expected a message object: {"role": "user" | "assistant" | "tool", "content": …}',
        ),
      );
      expect(bad([{ role: "developer", content: "x" }])).toEqual(
        invalid(
          'messages[0].role: role must be "user", "assistant" or "tool" ("system" only leading, with drop_system)',
        ),
      );
    });

    it("refuses null, and a part or a role of the wrong type, with a 400 before anything else", () => {
      expect(bad(null)).toEqual(invalid("messages: Invalid input: expected array, received null"));
      // An array role or type is no key of the unmodelled parts (a 422) even if it names one.
      const file = { type: "file", data: "aGk=", mediaType: "text/plain" };
      expect(bad([{ role: ["assistant"], content: [file] }])).toEqual(
        invalid(
          'messages[0].role: role must be "user", "assistant" or "tool" ("system" only leading, with drop_system)',
        ),
      );
      expect(bad([user("x"), assistant([null])])).toEqual(
        invalid(
          "messages[1].content[0]: an assistant message takes text, reasoning, tool-call, tool-result and tool-approval-request parts",
        ),
      );
      expect(bad([user("x"), assistant([{ ...file, type: ["file"] }])])).toEqual(
        invalid(
          "messages[1].content[0].type: an assistant message takes text, reasoning, tool-call, tool-result and tool-approval-request parts",
        ),
      );
      // providerExecuted is a tool call's: on a text part it is an unknown key, not a provider call.
      expect(bad([user("x"), assistant([{ ...text("t"), providerExecuted: true }])])).toEqual(
        invalid('messages[1].content[0]: Unrecognized key: "providerExecuted"'),
      );
      expect(bad([user("x"), assistant([call("c")]), tool(result("c", { type: "json" }))])).toEqual(
        invalid(
          "messages[2].content[0].output.value: expected a JSON value (nesting at most 100 levels)",
        ),
      );
    });

    it("refuses empty content", () => {
      expect(bad([user("")])).toEqual(invalid("messages[0].content: content must not be empty"));
      expect(bad([user("go"), assistant([])])).toEqual(
        invalid("messages[1].content: content must not be empty"),
      );
      expect(bad([user("go"), tool()])).toEqual(
        invalid("messages[1].content: content must not be empty"),
      );
      expect(bad([user([text("")])])).toEqual(
        invalid("messages[0].content: a user message needs text or an image or file part"),
      );
    });

    it("refuses unknown part types and unknown keys, located", () => {
      expect(bad([user([text("a"), { type: "video", url: "x" }])])).toEqual(
        invalid("messages[0].content[1].type: a user message takes text, image and file parts"),
      );
      expect(bad([user("go"), assistant([{ type: "thought", text: "x" }])])).toEqual(
        invalid(
          "messages[1].content[0].type: an assistant message takes text, reasoning, tool-call, tool-result and tool-approval-request parts",
        ),
      );
      expect(bad([user([{ ...text("a"), extra: 1 }])])).toEqual(
        invalid('messages[0].content[0]: Unrecognized key: "extra"'),
      );
    });

    it("refuses tool input that is not a JSON object", () => {
      for (const input of [[1], "x", null, 3]) {
        expect(bad([user("go"), assistant([call("c", input)])])).toEqual(
          invalid("messages[1].content[0].input: expected a JSON object"),
        );
      }
    });

    it("refuses tool input nested deeper than JSON's bound", () => {
      let input: Record<string, unknown> = {};
      for (let i = 0; i < 100; i++) input = { a: input };
      expect(bad([user("go"), assistant([call("c", input)])])).toEqual(
        invalid(
          "messages[1].content[0].input: nests deeper than 100 levels: flatten the tool's input",
        ),
      );
    });

    it("refuses a duplicate toolCallId in the turn", () => {
      expect(bad([user("go"), assistant([call("c"), call("c")])])).toEqual(
        invalid(
          'messages[1].content[1].toolCallId: duplicate toolCallId "c" (also at messages[1].content[0]): tool call ids must be unique within a turn',
        ),
      );
    });

    it("refuses an orphan result and a second result for a call", () => {
      expect(bad([user("go"), tool(result("c"))])).toEqual(
        invalid(
          'messages[1].content[0].toolCallId: orphan tool result: no tool call "c" comes before it in this turn; post it in the turn that holds its call (a result for a call left pending at the end of the previous turn comes first in the next turn, before any other message)',
        ),
      );
      expect(bad([user("go"), assistant([call("c")]), tool(result("c"), result("c"))])).toEqual(
        invalid(
          'messages[2].content[1].toolCallId: a second result for tool call "c" (the first is messages[2].content[0].toolCallId); a call takes one result',
        ),
      );
    });

    it("refuses unknown output types, values that are not JSON and malformed providerOptions", () => {
      const answered = (output: unknown) => [
        user("go"),
        assistant([call("c")]),
        tool(result("c", output)),
      ];
      expect(bad(answered({ type: "blob", value: 1 }))).toEqual(
        invalid(
          "messages[2].content[0].output.type: Invalid discriminator value. Expected 'text' | 'json' | 'execution-denied' | 'error-text' | 'error-json' | 'content'",
        ),
      );
      expect(bad(answered({ type: "json", value: [Number.NaN] }))).toEqual(
        invalid(
          "messages[2].content[0].output.value: expected a JSON value (nesting at most 100 levels)",
        ),
      );
      expect(bad([user([{ ...text("a"), providerOptions: { a: 1 } }])])).toEqual(
        invalid(
          "messages[0].content[0].providerOptions.a: Invalid input: expected record, received number",
        ),
      );
    });

    it("takes no prototype key for a role or a part type it does not model (a 400, not a 422)", () => {
      expect(bad([{ role: "toString", content: [{ type: "length" }] }])).toEqual(
        invalid(
          'messages[0].role: role must be "user", "assistant" or "tool" ("system" only leading, with drop_system)',
        ),
      );
      for (const type of ["constructor", "toString"]) {
        expect(bad([user("x"), assistant([{ type }])])).toEqual(
          invalid(
            "messages[1].content[0].type: an assistant message takes text, reasoning, tool-call, tool-result and tool-approval-request parts",
          ),
        );
      }
    });

    it("refuses assistant file parts with a 422, and approvals without their call or result with a located 400", () => {
      const tail = "; leave it out of the posted messages, or post the turn as JP events";
      expect(
        bad([
          user("go"),
          assistant([{ type: "tool-approval-request", approvalId: "a", toolCallId: "c" }]),
        ]),
      ).toEqual(
        invalid(
          'messages[1].content[0].toolCallId: no tool call "c" comes before this approval request in the turn: post it after its call',
        ),
      );
      expect(
        bad([
          user("go"),
          tool({ type: "tool-approval-response", approvalId: "a", approved: true }),
        ]),
      ).toEqual(
        invalid(
          "messages[1].content[0]: no tool result follows this tool approval response in the turn: post it with the result of the call it approves or denies (the SDK's next step)",
        ),
      );
      expect(
        bad([user("go"), assistant([{ type: "file", data: "x", mediaType: "image/png" }])]),
      ).toEqual(
        unsupported(
          `messages[1].content[0]: part type "file" is not supported: assistant file parts (generated files) are not modelled${tail}`,
        ),
      );
      // Provider-executed calls and their results are carried: hosted.test.ts.
    });
  });

  describe("fromView", () => {
    it("round-trips a turn exactly, opaque data included, a single text part as a string", () => {
      const media = { type: "image-url", url: "https://example.com/b.png" };
      const turn = [
        { ...user([text("look"), image]), providerOptions: options },
        assistant([
          { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "x" } } },
          text("reading"),
          { ...call("c1", { path: "a" }), providerOptions: options },
        ]),
        tool({
          ...result("c1", { type: "content", value: [text("a"), media] }),
          providerOptions: options,
        }),
        assistant([text("first")]),
        { ...assistant("second"), providerOptions: options },
      ];
      expect(roundTrip(turn)).toEqual([...turn.slice(0, 3), assistant("first"), turn[4]]);
    });

    it("writes JP events without metadata: a result gets its call's name and a text output", () => {
      expect(
        aiSdk.fromView(
          rawView([
            turnStart(0),
            request("q"),
            reasoning("hmm"),
            message("a"),
            toolCall("c", "grep", { q: "x" }),
            toolResult("c", "boom", true),
            { type: "chat_response", timestamp: T, data: { ok: true } },
            toolResult("orphan", "lost"),
          ]),
        ),
      ).toEqual([
        user("q"),
        assistant([{ type: "reasoning", text: "hmm" }, text("a"), call("c", { q: "x" }, "grep")]),
        tool(result("c", { type: "error-text", value: "boom" }, "grep")),
        assistant('{"ok":true}'),
        tool(result("orphan", { type: "text", value: "lost" }, "unknown")),
      ]);
    });

    it("ignores metadata that does not make valid parts (posted by hand as JP events)", () => {
      const withMeta = (entry: Entry, metadata: unknown): Entry =>
        ({ ...entry, metadata: { [META]: metadata } }) as Entry;
      expect(
        aiSdk.fromView(
          rawView([
            turnStart(0),
            withMeta(request("q"), {
              content: [{ type: "video" }],
              message: { providerOptions: 1 },
            }),
            withMeta(message("a"), { part: { providerOptions: "x" } }),
            withMeta(toolCall("c", "grep", {}), { part: { providerExecuted: "yes" } }),
            withMeta(toolResult("c", "ok"), { part: { output: { type: "json" } } }),
          ]),
        ),
      ).toEqual([
        user("q"),
        assistant([text("a"), call("c", {}, "grep")]),
        tool(result("c", undefined, "grep")),
      ]);
    });

    it("leaves an empty request without parts out", () => {
      expect(aiSdk.fromView(rawView([turnStart(0), request(""), message("a")]))).toEqual([
        assistant("a"),
      ]);
    });

    it("writes nothing for a response without message, data or reasoning", () => {
      const bare = { type: "chat_response", timestamp: T } as Entry;
      expect(aiSdk.fromView(rawView([turnStart(0), request("q"), bare]))).toEqual([user("q")]);
    });

    it("writes a request's stored parts only while they spell its text", () => {
      const [start, asked] = convert([user([text("look"), image])]).events as [Entry, Entry];
      const edited = { ...asked, content: "see" } as Entry;
      expect(aiSdk.fromView(rawView([start, edited]))).toEqual([user("see")]);
    });

    it("names a result whose call is not in the view by its stored tool name, else unknown", () => {
      const withPart = (entry: Entry, part: unknown): Entry =>
        ({ ...entry, metadata: { [META]: { part } } }) as Entry;
      expect(
        aiSdk.fromView(
          rawView([
            turnStart(0),
            request("q"),
            withPart(toolResult("x", "ok"), { toolName: 7 }),
            withPart(toolResult("y", "ok"), { providerOptions: options }),
            // The name is kept even when the other stored fields are not valid ones.
            withPart(toolResult("z", "ok"), { toolName: "grep", providerOptions: 1 }),
          ]),
        ),
      ).toEqual([
        user("q"),
        tool(
          result("x", undefined, "unknown"),
          { ...result("y", undefined, "unknown"), providerOptions: options },
          result("z", undefined, "grep"),
        ),
      ]);
    });

    it("does not re-emit a stored output whose error flag is no longer the event's", () => {
      const stream: Entry[] = [
        turnStart(0),
        toolCall("c", "f", {}),
        {
          ...toolResult("c", "x"),
          metadata: { [META]: { part: { output: { type: "error-text", value: "x" } } } },
        },
      ];
      expect(aiSdk.fromView(rawView(stream))).toEqual([
        assistant([call("c", {}, "f")]),
        tool(result("c", { type: "text", value: "x" }, "f")),
      ]);
    });

    it("does not re-emit an output that no longer says what the event says", () => {
      const [start, ask, use, answer] = convert([
        user("go"),
        assistant([call("c")]),
        tool(result("c", { type: "json", value: 1 })),
      ]).events as [Entry, Entry, Entry, Entry];
      const edited = { ...answer, content: "2" } as Entry;
      expect(aiSdk.fromView(rawView([start, ask, use, edited]))[2]).toEqual(
        tool(result("c", { type: "text", value: "2" })),
      );
    });
  });

  describe("fromView of a compacted view", () => {
    const turn0 = [user("start"), assistant("hello")];
    const turn1 = [
      user("read it"),
      assistant([
        { type: "reasoning", text: "plan", providerOptions: { anthropic: { signature: "s1" } } },
        { ...call("t1", { path: "a" }), providerOptions: options },
      ]),
      tool({
        ...result("t1", { type: "error-json", value: { code: 1 } }),
        providerOptions: options,
      }),
      assistant([{ type: "reasoning", text: "only thoughts" }]),
      user("go on"),
      assistant("read"),
    ];
    const turn2 = [user("again"), assistant([call("t2")]), tool(result("t2")), assistant("fine")];
    const stream = [turn0, turn1, turn2].flatMap(
      (turn, t) => aiSdk.toEvents(turn, { timestamp: at(t), dropSystem: false }).events,
    );
    const compacted = (...policies: Parameters<typeof compaction>[3][]) =>
      aiSdk.fromView(
        projectedView([...stream, ...policies.map((p, i) => compaction(1, 1, 100 + i, p))]),
      );

    it("strips a tool result to its status, as error-text for an error, without its opaque fields", () => {
      expect(
        compacted({ tool_calls: { policy: "strip", request: false, response: true } }),
      ).toEqual([
        ...turn0,
        ...turn1.slice(0, 2),
        tool(result("t1", { type: "error-text", value: "[compacted] read: error" })),
        ...turn1.slice(3),
        ...turn2,
      ]);
    });

    it("strips a successful result to a text output", () => {
      const messages = aiSdk.fromView(
        projectedView([
          ...stream,
          compaction(2, 2, 100, {
            tool_calls: { policy: "strip", request: false, response: true },
          }),
        ]),
      );
      expect(messages[10]).toEqual(
        tool(result("t2", { type: "text", value: "[compacted] read: success" })),
      );
    });

    it("strips tool input to {}", () => {
      const messages = compacted({
        tool_calls: { policy: "strip", request: true, response: false },
      });
      expect(messages[3]).toEqual(
        assistant([
          { type: "reasoning", text: "plan", providerOptions: { anthropic: { signature: "s1" } } },
          call("t1", {}),
        ]),
      );
      expect(messages[4]).toEqual(turn1[2]);
    });

    it("omits a call with its result, and stripped reasoning takes the empty messages with it", () => {
      expect(compacted({ tool_calls: { policy: "omit" }, reasoning: "strip" })).toEqual([
        ...turn0,
        user("read it"),
        user("go on"),
        assistant("read"),
        ...turn2,
      ]);
    });

    it("replaces a summarized run with one user and one assistant message", () => {
      expect(compacted({ summary: { summary: "they read a file" } })).toEqual([
        ...turn0,
        user("[Summary of previous conversation]"),
        assistant("they read a file"),
        ...turn2,
      ]);
    });
  });
});

describe("aiSdk leading results and tool approvals", () => {
  it("takes results for the previous turn's calls before any other message, and only there", () => {
    const { events } = convert([tool(result("p1")), tool(result("p2")), user("next")]);
    expect(events.map((e) => e.type)).toEqual([
      "turn_start",
      "tool_call_response",
      "tool_call_response",
      "chat_request",
    ]);
    expect(bad([user("next"), tool(result("p1"))]).detail).toMatch(
      /^messages\[1\]\.content\[0\]\.toolCallId: orphan tool result: no tool call "p1" comes before it in this turn/,
    );
  });

  it("gives approvals back where they were posted: a message of their own, or parts before the result", () => {
    const apart = [
      user("go"),
      assistant([call("c1"), ask("a1", "c1")]),
      tool(answer("a1", true)),
      tool(result("c1")),
    ];
    expect(roundTrip(apart)).toEqual(apart);
    const together = [
      user("go"),
      assistant([call("c1"), ask("a1", "c1")]),
      tool(answer("a1", false), result("c1")),
    ];
    expect(roundTrip(together)).toEqual(together);
  });

  it("carries the request on its call and the responses on the result after them", () => {
    const { events } = convert([
      user("go"),
      assistant([call("c1"), ask("a1", "c1")]),
      tool(answer("a1", true)),
      tool(result("c1")),
    ]);
    expect(events[2]?.metadata).toEqual({ [META]: { approval: ask("a1", "c1") } });
    expect(events[3]?.metadata).toEqual({
      // A tool message after a tool message comes back apart (split).
      [META]: { split: true, approvals: { messages: [tool(answer("a1", true))] } },
    });
  });

  it("takes the answer to a provider-executed call's approval with its result in the next turn", () => {
    const hosted = { ...call("h1", { q: "x" }, "web_search"), providerExecuted: true };
    const found = result("h1", { type: "json", value: ["hit"] }, "web_search");
    const asked = [user("go"), assistant([hosted, ask("a1", "h1")])];
    const answered = [tool(answer("a1", true)), assistant([found, text("done")])];
    expect(convert(answered).events[1]?.metadata).toEqual({
      [META]: { approvals: { messages: [tool(answer("a1", true))] }, hosted: found },
    });
    expect(roundTrip(asked, answered)).toEqual([...asked, ...answered]);
  });

  it.each([
    {
      when: "an approval response is followed by a provider-executed call but no result",
      messages: [
        user("go"),
        assistant([call("c1"), ask("a1", "c1")]),
        tool(answer("a1", true)),
        assistant([{ ...call("h1", {}, "web_search"), providerExecuted: true }]),
      ],
      detail:
        "messages[2].content[0]: no tool result follows this tool approval response in the turn: post it with the result of the call it approves or denies (the SDK's next step)",
    },
    {
      when: "an approval request follows a provider-executed result but no call",
      messages: [user("go"), assistant([result("h1", undefined, "web_search"), ask("a1", "h1")])],
      detail:
        'messages[1].content[1].toolCallId: no tool call "h1" comes before this approval request in the turn: post it after its call',
    },
  ])("refuses a turn where $when", ({ messages, detail }) => {
    expect(bad(messages)).toEqual(invalid(detail));
  });

  it("takes an approval request for a provider-executed call", () => {
    const hosted = { ...call("h1", { q: "x" }, "web_search"), providerExecuted: true };
    const posted = [user("go"), assistant([hosted, ask("a1", "h1")])];
    expect(roundTrip(posted)).toEqual(posted);
  });
});
