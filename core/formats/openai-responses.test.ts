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
import { openaiResponsesInputErrors } from "../../test/helpers/openai-schema.ts";
import { RESPONSES_ITEMS } from "../../test/helpers/responses-hosted-items.ts";
import { AutocompactError, InvalidInputError, UnprocessableError } from "../errors.ts";
import type { Entry } from "../events.ts";
import { providerFormat } from "./index.ts";
import { openaiResponses } from "./openai-responses.ts";
import { projectedView, rawView } from "./view.ts";

const T = at(0);

/** The events of one turn posted as `input`, without the leading `turn_start`. */
function events(input: unknown, dropSystem = false): Entry[] {
  const { events: all } = openaiResponses.toEvents(input, { timestamp: T, dropSystem });
  expect(all[0]).toEqual({ type: "turn_start", timestamp: T });
  return all.slice(1);
}

/** The error `input` is refused with. */
function refusal(input: unknown, dropSystem = false): AutocompactError {
  try {
    openaiResponses.toEvents(input, { timestamp: T, dropSystem });
  } catch (error) {
    expect(error).toBeInstanceOf(AutocompactError);
    return error as AutocompactError;
  }
  throw new Error("expected the turn to be refused");
}

/** Asserts a 400 whose detail starts with `path` and says `says`. */
function expectInvalid(input: unknown, path: string, says: string | RegExp): void {
  const error = refusal(input);
  expect(error).toBeInstanceOf(InvalidInputError);
  expect(error.status).toBe(400);
  expect(error.type).toBe("/problems/invalid-messages");
  expect(error.message.startsWith(`${path}: `)).toBe(true);
  expect(error.message).toMatch(says);
}

/** Asserts a 422 whose detail starts with `path` and says `says`. */
function expectUnsupported(
  input: unknown,
  path: string,
  says: string | RegExp,
  dropSystem = false,
): void {
  const error = refusal(input, dropSystem);
  expect(error).toBeInstanceOf(UnprocessableError);
  expect(error.status).toBe(422);
  expect(error.type).toBe("/problems/unsupported-message");
  expect(error.message.startsWith(`${path}: `)).toBe(true);
  expect(error.message).toMatch(says);
}

const meta = (item: unknown) => ({ metadata: { "openai-responses": { item } } });
const user = (content: unknown) => ({ role: "user", content });
const fcall = (callId: string, name: string, args: string, extra: object = {}) => ({
  type: "function_call",
  call_id: callId,
  name,
  arguments: args,
  ...extra,
});
const output = (callId: string, out: unknown) => ({
  type: "function_call_output",
  call_id: callId,
  output: out,
});
const rs = {
  type: "reasoning",
  id: "rs_1",
  summary: [{ type: "summary_text", text: "Plan." }],
  encrypted_content: "gAAAA==",
};
const msg = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  status: "completed",
  content: [
    {
      type: "output_text",
      text: "Done.",
      annotations: [
        { type: "url_citation", url: "https://x", title: "X", start_index: 0, end_index: 1 },
      ],
      logprobs: [],
    },
  ],
};

// A web search (a whole hosted item), a computer call and its output.
const [webSearch, computerCall, computerOutput] = [0, 6, 7].map((i) => RESPONSES_ITEMS[i]);
const reference = { type: "item_reference", id: "msg_0" };

function streamOf(...turns: unknown[][]): Entry[] {
  return turns.flatMap(
    (input, t) => openaiResponses.toEvents(input, { timestamp: at(t), dropSystem: false }).events,
  );
}

describe("openaiResponses", () => {
  it("is the openai-responses format, posted and answered in `input`", () => {
    expect(openaiResponses.name).toBe("openai-responses");
    expect(openaiResponses.field).toBe("input");
    expect(providerFormat("openai-responses")).toBe(openaiResponses);
  });

  it("has an item schema that takes every modelled item and refuses others", () => {
    const schema = openaiResponses.messageSchema;
    for (const item of [user("hi"), msg, rs, fcall("c", "f", "{}"), output("c", "x")]) {
      expect(schema.safeParse(item).success).toBe(true);
    }
    expect(schema.safeParse({ type: "web_search_call", id: "ws_1" }).success).toBe(false);
  });
});

describe("openaiResponses.toEvents: mapping", () => {
  it("maps a user message in the EasyInputMessage form, without `type`", () => {
    const { events: all, droppedSystem } = openaiResponses.toEvents([user("hi")], {
      timestamp: T,
      dropSystem: false,
    });
    expect(all).toEqual([
      { type: "turn_start", timestamp: T },
      { type: "chat_request", timestamp: T, content: "hi" },
    ]);
    expect(droppedSystem).toBe(0);
  });

  it("joins a user message's input_text parts with a newline and keeps its parts, image and file", () => {
    const content = [
      { type: "input_text", text: "look" },
      { type: "input_image", image_url: "https://x/cat.png", detail: "auto" },
      { type: "input_file", file_id: "file-1" },
      { type: "input_text", text: "here" },
    ];
    expect(events([{ type: "message", role: "user", content }])).toEqual([
      {
        type: "chat_request",
        timestamp: T,
        content: "look\nhere",
        ...meta({ type: "message", content }),
      },
    ]);
  });

  it("takes a user message of an image alone as empty text with its part", () => {
    const content = [{ type: "input_image", file_id: "file-1", detail: "low" }];
    expect(events([user(content)])).toEqual([
      { type: "chat_request", timestamp: T, content: "", ...meta({ content }) },
    ]);
  });

  it("maps an output message to its text, keeping id, status and annotated parts", () => {
    const { role: _role, ...kept } = msg;
    expect(events([msg])).toEqual([
      { type: "chat_response", timestamp: T, message: "Done.", ...meta(kept) },
    ]);
  });

  it("maps an assistant message in the string form, `type` kept", () => {
    expect(events([{ type: "message", role: "assistant", content: "Hi." }])).toEqual([
      { type: "chat_response", timestamp: T, message: "Hi.", ...meta({ type: "message" }) },
    ]);
  });

  it("maps reasoning summary and content texts, joined, and keeps id and encrypted_content", () => {
    const item = {
      ...rs,
      content: [{ type: "reasoning_text", text: "Step 1." }],
    };
    const { type: _type, ...kept } = item;
    expect(events([item])).toEqual([
      { type: "chat_response", timestamp: T, reasoning: "Plan.\nStep 1.", ...meta(kept) },
    ]);
  });

  it("takes an encrypted reasoning item without text as empty reasoning", () => {
    expect(
      events([{ type: "reasoning", id: "rs_2", summary: [], encrypted_content: "e" }]),
    ).toEqual([
      {
        type: "chat_response",
        timestamp: T,
        reasoning: "",
        ...meta({ id: "rs_2", summary: [], encrypted_content: "e" }),
      },
    ]);
  });

  it("maps a function call to a tool call request, arguments parsed (their text kept), its fc_ id and status kept", () => {
    const call = fcall("call_1", "fs_read", '{"path": "a", "n": [1]}', {
      id: "fc_1",
      status: "completed",
    });
    expect(events([call, output("call_1", "A")])).toEqual([
      {
        ...toolCall("call_1", "fs_read", { path: "a", n: [1] }),
        metadata: {
          "openai-responses": {
            item: { id: "fc_1", status: "completed" },
            arguments: '{"path": "a", "n": [1]}',
          },
        },
      },
      toolResult("call_1", "A"),
    ]);
  });

  it("maps an output of parts to their texts joined, keeping the parts; is_error is always false", () => {
    const parts = [
      { type: "input_text", text: "Error: 1" },
      { type: "input_text", text: "Error: 2" },
    ];
    expect(events([fcall("c", "run", "{}"), output("c", parts)])).toEqual([
      toolCall("c", "run", {}),
      { ...toolResult("c", "Error: 1\nError: 2"), ...meta({ output: parts }) },
    ]);
  });

  it("drops leading system and developer messages with dropSystem and counts them", () => {
    const { events: all, droppedSystem } = openaiResponses.toEvents(
      [
        { role: "system", content: "Be brief." },
        { type: "message", role: "developer", content: [{ type: "input_text", text: "Rules." }] },
        user("hi"),
      ],
      { timestamp: T, dropSystem: true },
    );
    expect(all.slice(1)).toEqual([request("hi")]);
    expect(droppedSystem).toBe(2);
  });

  it("lets each turn reuse the call ids of another", () => {
    const turn = [fcall("c", "f", "{}"), output("c", "x")];
    expect(streamOf(turn, turn)).toHaveLength(6);
  });
});

describe("openaiResponses.toEvents: refusals", () => {
  it("refuses anything but a non-empty array", () => {
    expectInvalid({}, "input", "expected an array of input items");
    expectInvalid([], "input", "a turn needs at least one item");
  });

  it("refuses an item that is not an object", () => {
    expectInvalid(["hi"], "input[0]", "expected an input item object");
  });

  it("refuses empty content", () => {
    expectInvalid([user("")], "input[0].content", "a user message needs text or a content part");
    expectInvalid(
      [{ role: "assistant", content: "" }],
      "input[0].content",
      "an assistant message needs text or a content part",
    );
    expectInvalid([user([])], "input[0].content", "a content array needs at least one part");
  });

  it("refuses an unknown role, an unknown item type and a bad content part, located", () => {
    expectInvalid(
      [{ role: "tool", content: "x" }],
      "input[0].role",
      'a message\'s role must be "user", "assistant", "system" or "developer"',
    );
    expectInvalid(
      [{ type: "mesage", role: "user", content: "x" }],
      "input[0]",
      'unknown item type "mesage": expected one of message, reasoning, function_call, function_call_output',
    );
    expectInvalid(
      [{ type: 3 }],
      "input[0]",
      "an item's type must be a string: one of message, reasoning, function_call, function_call_output",
    );
    expectInvalid(
      [user([{ type: "input_audio", data: "x" }])],
      "input[0].content[0].type",
      "a content part takes type input_text, input_image or input_file",
    );
    expectInvalid(
      [user([{ type: "input_image", image_url: "https://x" }])],
      "input[0].content[0].detail",
      /expected one of "low"\|"high"\|"auto"\|"original"/,
    );
    expectInvalid([user(7)], "input[0].content", "expected a string or an array of content parts");
  });

  // Found by test/service/formats-malformed.test.ts: these were stored (202) and re-emitted
  // verbatim, so the projection was no input OpenAI's published schema takes.
  it("refuses an assistant phase, an annotation and a logprob OpenAI's schema refuses, located", () => {
    const assistant = { role: "assistant", content: "Done." };
    expectInvalid(
      [{ ...assistant, phase: "final" }],
      "input[0].phase",
      'a phase is "commentary" or "final_answer"',
    );
    expectInvalid([{ ...assistant, phase: 1 }], "input[0].phase", /"commentary" or "final_answer"/);
    const withPart = (part: object) => [{ ...msg, content: [{ ...msg.content[0], ...part }] }];
    // Chat Completions' shape: the citation nested under its type.
    const chatCitation = {
      type: "url_citation",
      url_citation: { url: "https://x", title: "X", start_index: 0, end_index: 1 },
    };
    expectInvalid(
      withPart({ annotations: [chatCitation] }),
      "input[0].content[0].annotations[0].url",
      "Invalid input: expected string, received undefined",
    );
    expectInvalid(
      withPart({ annotations: [{ type: "citation", url: "https://x" }] }),
      "input[0].content[0].annotations[0].type",
      "an annotation's type is file_citation, url_citation, container_file_citation or file_path",
    );
    expectInvalid(
      withPart({ annotations: [{ type: "file_citation", file_id: "f", index: 0 }] }),
      "input[0].content[0].annotations[0].filename",
      "Invalid input: expected string, received undefined",
    );
    expectInvalid(
      withPart({ annotations: [{ ...msg.content[0]?.annotations[0], url: "x" }] }),
      "input[0].content[0].annotations[0].url",
      "url must be a URL",
    );
    expectInvalid(
      withPart({ logprobs: [{ token: "D", logprob: -0.1 }] }),
      "input[0].content[0].logprobs[0].bytes",
      "Invalid input: expected array, received undefined",
    );
  });

  it("takes every annotation type and logprobs as OpenAI's schema defines them, and writes them back", () => {
    const part = {
      type: "output_text",
      text: "Done.",
      annotations: [
        { type: "file_citation", file_id: "file-1", filename: "a.pdf", index: 0 },
        { type: "url_citation", url: "https://x", title: "X", start_index: 0, end_index: 1 },
        {
          type: "container_file_citation",
          container_id: "cntr_1",
          file_id: "file-2",
          filename: "b.csv",
          start_index: 0,
          end_index: 4,
        },
        { type: "file_path", file_id: "file-3", index: 1 },
      ],
      logprobs: [
        {
          token: "Done",
          logprob: -0.5,
          bytes: [68, 111, 110, 101],
          top_logprobs: [{ token: "Done", logprob: -0.5, bytes: [68, 111, 110, 101] }],
        },
      ],
    };
    const input = [{ ...msg, phase: "final_answer", content: [part] }];
    const written = openaiResponses.fromView(rawView(streamOf(input)));
    expect(written).toEqual(input);
    expect(openaiResponsesInputErrors(written)).toEqual([]);
    const commentary = [{ role: "assistant", content: "Hm.", phase: "commentary" }];
    expect(openaiResponses.fromView(rawView(streamOf(commentary)))).toEqual(commentary);
    const unphased = [{ role: "assistant", content: "Hm.", phase: null }];
    expect(openaiResponses.fromView(rawView(streamOf(unphased)))).toEqual(unphased);
  });

  it("refuses a reasoning item without its id (OpenAI's schema requires it)", () => {
    expectInvalid([{ type: "reasoning", summary: [] }], "input[0].id", /expected string/);
  });

  it("refuses arguments that are not a JSON object", () => {
    expectInvalid(
      [fcall("c", "f", "[]")],
      "input[0].arguments",
      "must be a JSON object encoded as a string (got an array)",
    );
    expectInvalid([fcall("c", "f", "null")], "input[0].arguments", "(got null)");
    expectInvalid([fcall("c", "f", "{")], "input[0].arguments", /is not valid JSON/);
  });

  it("refuses arguments nested deeper than the JSON depth limit", () => {
    const deep = `${"[".repeat(100)}${"]".repeat(100)}`;
    expectInvalid(
      [fcall("c", "f", `{"a":${deep}}`)],
      "input[0].arguments",
      "nests deeper than 100 levels: flatten the tool's arguments",
    );
  });

  it("refuses a duplicate call_id in the turn, naming both places", () => {
    expectInvalid(
      [fcall("c", "f", "{}"), fcall("c", "g", "{}")],
      "input[1].call_id",
      'duplicate call_id "c" (also at input[0].call_id): tool call ids must be unique within a turn',
    );
  });

  it("refuses an orphan function_call_output: its call must come earlier in the same turn", () => {
    expectInvalid(
      [user("hi"), output("c", "x")],
      "input[1].call_id",
      'orphan function_call_output: no function_call with call_id "c" comes before it in this turn',
    );
    expectInvalid([output("b", "x"), user("hi"), output("c", "x")], "input[2].call_id", /orphan/);
  });

  it("takes outputs leading a turn (the previous turn's pending calls), whose ids the turn may call again", () => {
    const converted = openaiResponses.toEvents([output("c", "x"), fcall("c", "f", "{}")], {
      timestamp: at(0),
      dropSystem: false,
    }).events;
    expect(converted.map((e) => e.type)).toEqual([
      "turn_start",
      "tool_call_response",
      "tool_call_request",
    ]);
  });

  it("refuses a second output for one call", () => {
    expectInvalid(
      [fcall("c", "f", "{}"), output("c", "x"), output("c", "y")],
      "input[2].call_id",
      'a second output for call_id "c" (the first is input[1])',
    );
  });

  it("refuses a call_id longer than OpenAI's 64 characters", () => {
    expectInvalid([fcall("c".repeat(65), "f", "{}")], "input[0].call_id", /at most 64/);
  });

  it("refuses a system or developer message without dropSystem (422), and says what to do", () => {
    expectUnsupported(
      [{ role: "system", content: "S" }, user("hi")],
      "input[0]",
      /drop_system: true/,
    );
    expectUnsupported([{ role: "developer", content: "D" }], "input[0]", /not conversation turns/);
    expectUnsupported(
      [user("hi"), { role: "system", content: "S" }],
      "input[1]",
      /after the turn's first other item.*only leading ones are dropped/,
      true,
    );
  });

  it("refuses a turn of system prompts alone", () => {
    const error = refusal([{ role: "system", content: "S" }], true);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toBe(
      "input: the turn holds only system prompts: post at least one other item",
    );
  });

  it("refuses the item types it does not model with a 422 that names them", () => {
    // The hosted tool items of the SDK are carried (responses-hosted.test.ts); these are not in it.
    for (const type of ["additional_tools", "program", "mcp_future_item"]) {
      expectUnsupported(
        [user("hi"), { type, id: "x_1" }],
        "input[1].type",
        `items of type "${type}" are not supported`,
      );
    }
  });

  it("names the modelled item types in full in the 422", () => {
    expect(refusal([user("hi"), { type: "program", id: "p_1" }]).message).toBe(
      'input[1].type: items of type "program" are not supported: the service models message, reasoning, function_call, function_call_output, item_reference items and the hosted tool items of OpenAI\'s SDK (items newer than the SDK are not turned into JP events)',
    );
  });

  it("refuses messages whose only parts are empty texts", () => {
    expectInvalid(
      [user([{ type: "input_text", text: "" }])],
      "input[0].content",
      "a user message needs text or a content part",
    );
    expectInvalid(
      [{ ...msg, content: [{ type: "output_text", text: "" }] }],
      "input[0].content",
      "an assistant message needs text or a content part",
    );
  });

  it("refuses a system prompt after a reasoning item or a call even with dropSystem: it is not leading", () => {
    const refusedAfter = (first: unknown, role: string) =>
      expectUnsupported(
        [first, { role, content: "s" }],
        "input[1]",
        `a ${role} message after the turn's first other item: `,
        true,
      );
    refusedAfter(rs, "system");
    refusedAfter(fcall("c", "f", "{}"), "developer");
    // An output answering the previous turn's call, and a hosted item, are other items too.
    refusedAfter(output("c", "x"), "system");
    refusedAfter(webSearch, "developer");
    refusedAfter(reference, "system");
  });

  it("ends the leading outputs at a hosted call, not at a hosted output", () => {
    // A computer call is a request: an output after it must answer a call of this turn.
    expectInvalid(
      [computerCall, output("prev", "x")],
      "input[1].call_id",
      'orphan function_call_output: no function_call with call_id "prev" comes before it in this turn',
    );
    // A computer call's output answers the previous turn, as a function_call_output may.
    expect(events([computerOutput, output("prev", "x")]).map((e) => e.type)).toEqual([
      "tool_call_response",
      "tool_call_response",
    ]);
  });

  it("answers with the issue's JSON pointer", () => {
    const error = refusal([fcall("c", "f", "[]")]) as InvalidInputError;
    expect(error.issues).toEqual([
      {
        pointer: "/input/0/arguments",
        detail: "must be a JSON object encoded as a string (got an array)",
      },
    ]);
  });
});

describe("openaiResponses.fromView", () => {
  it("writes plain JP events as id-less items; reasoning without our metadata is left out", () => {
    const stream: Entry[] = [
      turnStart(0),
      request("hi"),
      reasoning("thinking"),
      message("hello"),
      { type: "chat_response", timestamp: T, data: { a: 1 } },
      toolCall("c", "f", { x: 1 }),
      toolResult("c", "out", true),
      request(""),
      message(""),
    ];
    expect(openaiResponses.fromView(rawView(stream))).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "assistant", content: '{"a":1}' },
      { type: "function_call", call_id: "c", name: "f", arguments: '{"x":1}' },
      { type: "function_call_output", call_id: "c", output: "out" },
    ]);
  });

  it("gives a posted turn back exactly, ids, encrypted content, annotations and parts included", () => {
    const turn = [
      { type: "message", role: "user", content: [{ type: "input_text", text: "read a" }] },
      rs,
      fcall("call_1", "fs_read", '{"path":"a"}', { id: "fc_1", status: "completed" }),
      { ...output("call_1", [{ type: "input_text", text: "A" }]), id: "fco_1" },
      msg,
    ];
    const input = openaiResponses.fromView(rawView(streamOf(turn)));
    expect(input).toEqual(turn);
    expect(openaiResponsesInputErrors(input)).toEqual([]);
  });

  it("fills an output message's required status, annotations and logprobs in", () => {
    const posted = {
      id: "msg_2",
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Hi." }],
    };
    const input = openaiResponses.fromView(rawView(streamOf([user("hi"), posted])));
    expect(input[1]).toEqual({
      ...posted,
      status: "completed",
      content: [{ type: "output_text", text: "Hi.", annotations: [], logprobs: [] }],
    });
    expect(openaiResponsesInputErrors(input)).toEqual([]);
  });

  it("writes id-less assistant parts as their text (the API takes output parts on output messages only)", () => {
    const posted = {
      role: "assistant",
      content: [
        { type: "output_text", text: "a" },
        { type: "output_text", text: "b" },
      ],
    };
    expect(openaiResponses.fromView(rawView(streamOf([posted])))).toEqual([
      { role: "assistant", content: "a\nb" },
    ]);
  });

  it("writes an output message posted with string content as one output_text part, status kept", () => {
    const posted = { id: "msg_3", type: "message", role: "assistant", status: "incomplete" };
    expect(openaiResponses.fromView(rawView(streamOf([{ ...posted, content: "Hi." }])))).toEqual([
      {
        ...posted,
        content: [{ type: "output_text", text: "Hi.", annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("gives an output message posted without `type` its type and status", () => {
    const part = { type: "output_text", text: "Hi." };
    const posted = { id: "msg_4", role: "assistant", content: [part] };
    expect(openaiResponses.fromView(rawView(streamOf([posted])))).toEqual([
      {
        type: "message",
        role: "assistant",
        id: "msg_4",
        status: "completed",
        content: [{ ...part, annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("writes an event holding reasoning and a message with the reasoning item's metadata on the reasoning only", () => {
    const item = { id: "rs_1", summary: [{ type: "summary_text", text: "r" }] };
    const stream: Entry[] = [
      turnStart(0),
      { type: "chat_response", timestamp: T, reasoning: "r", message: "m", ...meta(item) },
    ];
    expect(openaiResponses.fromView(rawView(stream))).toEqual([
      { type: "reasoning", ...item },
      { role: "assistant", content: "m" },
    ]);
  });

  it("keeps an id-less assistant message's type and phase but not its status", () => {
    const posted = { role: "assistant", content: "x", type: "message", phase: "commentary" };
    expect(
      openaiResponses.fromView(rawView(streamOf([{ ...posted, status: "completed" }]))),
    ).toEqual([posted]);
  });

  it("writes the plain item when stored keys are not valid for it (JP events posted by hand)", () => {
    const stream: Entry[] = [
      turnStart(0),
      { ...request("u"), ...meta({ status: "bogus" }) },
      { ...request(""), ...meta({ content: [{ type: "input_image", image_url: "https://x" }] }) },
      { ...reasoning("r"), ...meta({ id: "rs_1", summary: "r" }) },
      { ...message("m"), ...meta({ phase: "bogus" }) },
      { ...message("n"), ...meta({ id: "msg_1", status: "bogus" }) },
      { ...toolCall("c", "f", {}), ...meta({ id: "fc_1", status: "bogus" }) },
      { ...toolResult("c", "x"), ...meta({ status: "bogus" }) },
    ];
    expect(openaiResponses.fromView(rawView(stream))).toEqual([
      { role: "user", content: "u" },
      { role: "assistant", content: "m" },
      { role: "assistant", content: "n" },
      { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c", output: "x" },
    ]);
  });

  it("writes a plain item when the stored parts no longer give the event's text", () => {
    const stream = streamOf([user([{ type: "input_text", text: "a" }])]);
    const edited = stream.map((entry) =>
      entry.type === "chat_request" ? { ...entry, content: "b" } : entry,
    );
    expect(openaiResponses.fromView(rawView(edited))).toEqual([{ role: "user", content: "b" }]);
  });

  it("ignores another format's metadata and a malformed one of its own", () => {
    const stream: Entry[] = [
      turnStart(0),
      { ...request("hi"), metadata: { "openai-chat": { message: { name: "x" } } } },
      { ...message("yo"), metadata: { "openai-responses": "nonsense" } },
      { ...reasoning("r"), metadata: { "openai-responses": { item: { id: 3 } } } },
      { ...request("u"), metadata: { "openai-responses": { item: "xy" } } },
      { ...message("m"), metadata: { "openai-responses": { item: ["z"] } } },
    ];
    expect(openaiResponses.fromView(rawView(stream))).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "yo" },
      { role: "user", content: "u" },
      { role: "assistant", content: "m" },
    ]);
  });

  it("never lets a stored role or type override the item's own (JP events posted by hand)", () => {
    const summary = [{ type: "summary_text", text: "r" }];
    const stream: Entry[] = [
      turnStart(0),
      { ...request("u"), ...meta({ role: "assistant", type: "message" }) },
      { ...reasoning("r"), ...meta({ type: "message", id: "rs_1", summary }) },
      { ...message("m"), ...meta({ role: "user", id: "msg_1" }) },
    ];
    expect(openaiResponses.fromView(rawView(stream))).toEqual([
      { role: "user", content: "u", type: "message" },
      { type: "reasoning", id: "rs_1", summary },
      {
        type: "message",
        role: "assistant",
        id: "msg_1",
        status: "completed",
        content: [{ type: "output_text", text: "m", annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("never lets stored keys override an item's call id, name or arguments", () => {
    const stream: Entry[] = [
      turnStart(0),
      {
        ...toolCall("c", "f", { a: 1 }),
        ...meta({ call_id: "evil", name: "g", arguments: "{}", id: "fc_1" }),
      },
      { ...toolResult("c", "x"), ...meta({ call_id: "evil", type: "message", id: "fco_1" }) },
    ];
    expect(openaiResponses.fromView(rawView(stream))).toEqual([
      { type: "function_call", call_id: "c", name: "f", arguments: '{"a":1}', id: "fc_1" },
      { type: "function_call_output", call_id: "c", output: "x", id: "fco_1" },
    ]);
  });
});

describe("openaiResponses under compaction", () => {
  const turns = [
    [
      user("read a"),
      rs,
      fcall("call_1", "fs_read", '{"path":"a"}', { id: "fc_1", status: "completed" }),
      output("call_1", "A"),
      msg,
    ],
    [
      user("read b"),
      { ...rs, id: "rs_2" },
      fcall("call_1", "fs_read", '{"path":"b"}', { id: "fc_2", status: "completed" }),
      output("call_1", "Error: ENOENT"),
      { role: "assistant", content: "No b." },
    ],
  ];

  it('strips arguments to "{}" and outputs to `[compacted] <name>: success`, ids of those items dropped', () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    const input = openaiResponses.fromView(projectedView(stream));
    expect(input.slice(0, 5)).toEqual([
      user("read a"),
      rs,
      { type: "function_call", call_id: "call_1", name: "fs_read", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "[compacted] fs_read: success" },
      msg,
    ]);
    expect(input.slice(5)).toEqual(turns[1]);
    expect(openaiResponsesInputErrors(input)).toEqual([]);
  });

  it("says error for a stripped output posted as an error in JP events", () => {
    const stream: Entry[] = [
      turnStart(0),
      toolCall("c", "cargo_test", {}),
      toolResult("c", "boom", true),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: false, response: true } }),
    ];
    expect(openaiResponses.fromView(projectedView(stream))).toEqual([
      { type: "function_call", call_id: "c", name: "cargo_test", arguments: "{}" },
      { type: "function_call_output", call_id: "c", output: "[compacted] cargo_test: error" },
    ]);
  });

  it("omits calls with their outputs", () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 1, 10, { tool_calls: { policy: "omit" } }),
    ];
    expect(openaiResponses.fromView(projectedView(stream))).toEqual([
      user("read a"),
      rs,
      msg,
      user("read b"),
      { ...rs, id: "rs_2" },
      { role: "assistant", content: "No b." },
    ]);
  });

  it("drops the item ids of a turn whose reasoning is stripped, and only of that turn", () => {
    const stream = [...streamOf(...turns), compaction(0, 0, 10, { reasoning: "strip" })];
    const input = openaiResponses.fromView(projectedView(stream));
    expect(input).toEqual([
      user("read a"),
      fcall("call_1", "fs_read", '{"path":"a"}', { status: "completed" }),
      output("call_1", "A"),
      { type: "message", role: "assistant", content: "Done." },
      ...(turns[1] as unknown[]),
    ]);
    expect(openaiResponsesInputErrors(input)).toEqual([]);
  });

  it("writes a summary as one user message and one assistant message", () => {
    const stream = [
      ...streamOf(...turns),
      compaction(0, 0, 10, { summary: { summary: "Read a." } }),
    ];
    const input = openaiResponses.fromView(projectedView(stream));
    expect(input.slice(0, 2)).toEqual([
      { role: "user", content: "[Summary of previous conversation]" },
      { role: "assistant", content: "Read a." },
    ]);
    expect(input.slice(2)).toEqual(turns[1]);
  });
});

describe("openaiResponses item references", () => {
  it("reads a reference as assistant text naming the item, the item kept verbatim", () => {
    expect(events([user("hi"), reference])).toEqual([
      { type: "chat_request", timestamp: T, content: "hi" },
      {
        type: "chat_response",
        timestamp: T,
        message: "[item reference msg_0]",
        metadata: { "openai-responses": { reference } },
      },
    ]);
  });

  it("gives the reference back as posted", () => {
    expect(openaiResponses.fromView(rawView(streamOf([user("hi"), reference])))).toEqual([
      user("hi"),
      reference,
    ]);
  });

  it("writes the text where the turn loses its item ids or the text is no longer the reference's", () => {
    const stripped = [
      ...streamOf([user("hi"), rs, reference]),
      compaction(0, 0, 10, { reasoning: "strip" }),
    ];
    expect(openaiResponses.fromView(projectedView(stripped))).toEqual([
      user("hi"),
      { role: "assistant", content: "[item reference msg_0]" },
    ]);
    const edited: Entry[] = [
      turnStart(0),
      {
        type: "chat_response",
        timestamp: at(0),
        message: "Edited.",
        metadata: { "openai-responses": { reference } },
      },
    ];
    expect(openaiResponses.fromView(rawView(edited))).toEqual([
      { role: "assistant", content: "Edited." },
    ]);
  });
});
