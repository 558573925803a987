import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  compaction,
  configDelta,
  message,
  messageTurns,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../../test/helpers/builders.ts";
import { AutocompactError, InvalidInputError, UnprocessableError } from "../errors.ts";
import type { Entry } from "../events.ts";
import { project } from "../projection.ts";
import type { ProviderFormat, ToEventsOptions } from "./format.ts";
import { invalidMessage, unsupportedMessage } from "./issues.ts";
import { openaiChat } from "./openai-chat.ts";
import { projectionBody, streamToTranscript, transcriptToStream } from "./transcripts.ts";

/**
 * A format that writes each posted string as a turn start and one request,
 * records the options it is called with, and writes a view as one line per
 * event (`*` marks a rewritten one).
 */
function stubFormat(field: "messages" | "input" = "input") {
  const calls: ToEventsOptions[] = [];
  const format: ProviderFormat<string> = {
    name: "stub",
    field,
    messageSchema: z.string(),
    toEvents(messages, options) {
      calls.push(options);
      if (messages === "invalid") throw invalidMessage([field, 0], "bad message");
      if (messages === "unsupported") throw unsupportedMessage([field, 1], "not taken");
      if (messages === "crash") throw new TypeError("a bug");
      const events: Entry[] = [
        { type: "turn_start", timestamp: options.timestamp },
        { type: "chat_request", timestamp: options.timestamp, content: String(messages) },
      ];
      return { events, droppedSystem: 0 };
    },
    fromView(view) {
      return view.flatMap((turn) =>
        turn.events.map((viewEvent) => {
          const event = viewEvent.event;
          const text =
            event.type === "chat_request"
              ? event.content
              : event.type === "chat_response"
                ? (event.message ?? "")
                : event.type === "tool_call_response"
                  ? event.content
                  : JSON.stringify(event.arguments);
          return `${event.type}:${text}${viewEvent.rewritten ? "*" : ""}`;
        }),
      );
    },
    responseUsage: openaiChat.responseUsage,
  };
  return { format, calls };
}

/** The error `run` throws. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("transcriptToStream", () => {
  it("stamps turn n at n seconds after the Unix epoch, in turn order", () => {
    const { format, calls } = stubFormat();
    expect(transcriptToStream(format, ["a", "b", "c"])).toEqual([
      { type: "turn_start", timestamp: "1970-01-01T00:00:00.000000Z" },
      { type: "chat_request", timestamp: "1970-01-01T00:00:00.000000Z", content: "a" },
      { type: "turn_start", timestamp: "1970-01-01T00:00:01.000000Z" },
      { type: "chat_request", timestamp: "1970-01-01T00:00:01.000000Z", content: "b" },
      { type: "turn_start", timestamp: "1970-01-01T00:00:02.000000Z" },
      { type: "chat_request", timestamp: "1970-01-01T00:00:02.000000Z", content: "c" },
    ]);
    expect(calls.map((options) => options.timestamp)).toEqual([
      "1970-01-01T00:00:00.000000Z",
      "1970-01-01T00:00:01.000000Z",
      "1970-01-01T00:00:02.000000Z",
    ]);
  });

  it("counts whole seconds past a minute", () => {
    const { format } = stubFormat();
    const stream = transcriptToStream(
      format,
      Array.from({ length: 62 }, (_, i) => `t${i}`),
    );
    expect(stream.at(-1)).toEqual({
      type: "chat_request",
      timestamp: "1970-01-01T00:01:01.000000Z",
      content: "t61",
    });
  });

  it("is empty for an empty transcript", () => {
    const { format, calls } = stubFormat();
    expect(transcriptToStream(format, [])).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("keeps system messages unless told to drop them", () => {
    const { format, calls } = stubFormat();
    transcriptToStream(format, ["a"]);
    transcriptToStream(format, ["a"], {});
    transcriptToStream(format, ["a"], { dropSystem: false });
    transcriptToStream(format, ["a"], { dropSystem: true });
    expect(calls.map((options) => options.dropSystem)).toEqual([false, false, false, true]);
  });

  it("prefixes a format's error with its turn, as a 400 caused by it", () => {
    const { format } = stubFormat();
    const invalid = thrown(() => transcriptToStream(format, ["a", "b", "invalid"]));
    expect(invalid).toBeInstanceOf(InvalidInputError);
    expect((invalid as InvalidInputError).message).toBe("turn 2: input[0]: bad message");
    expect((invalid as InvalidInputError).status).toBe(400);
    expect((invalid as InvalidInputError).cause).toBeInstanceOf(InvalidInputError);
    expect(((invalid as InvalidInputError).cause as Error).message).toBe("input[0]: bad message");

    const unsupported = thrown(() => transcriptToStream(format, ["unsupported"]));
    expect(unsupported).toBeInstanceOf(InvalidInputError);
    expect((unsupported as InvalidInputError).message).toBe("turn 0: input[1]: not taken");
    expect((unsupported as InvalidInputError).status).toBe(400);
    expect((unsupported as InvalidInputError).cause).toBeInstanceOf(UnprocessableError);
  });

  it("stops at the first refused turn", () => {
    const { format, calls } = stubFormat();
    expect(() => transcriptToStream(format, ["a", "invalid", "invalid"])).toThrow(
      /^turn 1: input\[0\]: bad message$/,
    );
    expect(calls).toHaveLength(2);
  });

  it("lets an error that is no AutocompactError through as it is", () => {
    const { format } = stubFormat();
    const error = thrown(() => transcriptToStream(format, ["a", "crash"]));
    expect(error).toBeInstanceOf(TypeError);
    expect(error).not.toBeInstanceOf(AutocompactError);
    expect((error as Error).message).toBe("a bug");
  });

  it("converts an OpenAI Chat transcript, dropping leading system prompts when asked", () => {
    const transcript = [
      [
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
      ],
      [{ role: "assistant", content: "hello" }],
    ];
    expect(transcriptToStream(openaiChat, transcript, { dropSystem: true })).toEqual([
      { type: "turn_start", timestamp: "1970-01-01T00:00:00.000000Z" },
      { type: "chat_request", timestamp: "1970-01-01T00:00:00.000000Z", content: "hi" },
      { type: "turn_start", timestamp: "1970-01-01T00:00:01.000000Z" },
      { type: "chat_response", timestamp: "1970-01-01T00:00:01.000000Z", message: "hello" },
    ]);
    const refused = thrown(() => transcriptToStream(openaiChat, transcript));
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as Error).message).toMatch(/^turn 0: messages\[0\]: system and developer/);
    expect((refused as Error).cause).toBeInstanceOf(UnprocessableError);
  });
});

describe("streamToTranscript", () => {
  it("writes each turn's messages on their own, compactions ignored", () => {
    const { format } = stubFormat();
    const raw = [...messageTurns(2), compaction(0, 1, 10, { summary: { summary: "s" } })];
    expect(streamToTranscript(format, raw)).toEqual([
      ["chat_request:q0", "chat_response:m0"],
      ["chat_request:q1", "chat_response:m1"],
    ]);
  });

  it("writes a turn without provider events as an empty array", () => {
    const { format } = stubFormat();
    const raw: Entry[] = [
      turnStart(0),
      configDelta({ model: "m" }),
      turnStart(1),
      request("q1", 1),
    ];
    expect(streamToTranscript(format, raw)).toEqual([[], ["chat_request:q1"]]);
    expect(streamToTranscript(format, [])).toEqual([]);
  });

  it("calls the format once per turn, so nothing crosses a turn boundary", () => {
    const raw: Entry[] = [
      turnStart(0),
      request("q0"),
      message("m0"),
      turnStart(1),
      toolCall("c", "t", { a: 1 }, 1),
      toolResult("c", "r", false, 1),
    ];
    expect(streamToTranscript(openaiChat, raw)).toEqual([
      [
        { role: "user", content: "q0" },
        { role: "assistant", content: "m0" },
      ],
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c", type: "function", function: { name: "t", arguments: '{"a":1}' } },
          ],
        },
        { role: "tool", tool_call_id: "c", content: "r" },
      ],
    ]);
  });

  it("gives back the transcript a stream was converted from", () => {
    const transcript = [
      [{ role: "user", content: "hi" }],
      [{ role: "assistant", content: "hello" }],
    ];
    expect(streamToTranscript(openaiChat, transcriptToStream(openaiChat, transcript))).toEqual(
      transcript,
    );
  });
});

describe("projectionBody", () => {
  it("writes the projected view, each turn's origin and the projection's estimate", () => {
    const raw = [...messageTurns(2), compaction(0, 0, 10, { summary: { summary: "gist" } })];
    // "[Summary of previous conversation]" (34) + "gist" + "q1" + "m1": 42 characters.
    expect(projectionBody(stubFormat("input").format, raw)).toEqual({
      format: "stub",
      input: [
        "chat_request:[Summary of previous conversation]*",
        "chat_response:gist*",
        "chat_request:q1",
        "chat_response:m1",
      ],
      turns: [{ summary: { from: 0, to: 0 } }, { kept: 1 }],
      estimated_tokens: 10.5,
    });
  });

  it("puts the messages in the format's own field", () => {
    const body = projectionBody(stubFormat("messages").format, messageTurns(1));
    expect(body).toEqual({
      format: "stub",
      messages: ["chat_request:q0", "chat_response:m0"],
      turns: [{ kept: 0 }],
      estimated_tokens: 1,
    });
  });

  it("takes the projection when the caller has it", () => {
    const raw = [...messageTurns(2), compaction(0, 0, 10, { summary: { summary: "gist" } })];
    const { format } = stubFormat();
    expect(projectionBody(format, raw, project(raw))).toEqual(projectionBody(format, raw));
    // Everything comes from the given projection.
    expect(projectionBody(format, raw, { entries: [], turns: [] })).toEqual({
      format: "stub",
      input: [],
      turns: [],
      estimated_tokens: 0,
    });
  });

  it("writes an OpenAI Chat request of the projected view", () => {
    const raw = [
      turnStart(0),
      request("q0"),
      toolCall("c", "read", { path: "a" }),
      toolResult("c", "contents"),
      compaction(0, 0, 10, { tool_calls: { policy: "strip", request: true, response: true } }),
    ];
    expect(projectionBody(openaiChat, raw)).toEqual({
      format: "openai-chat",
      messages: [
        { role: "user", content: "q0" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "read", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c", content: "[compacted] read: success" },
      ],
      turns: [{ kept: 0 }],
      // "q0" + "read" + "{}" + "[compacted] read: success" (25): 33 characters.
      estimated_tokens: 8.25,
    });
  });
});
