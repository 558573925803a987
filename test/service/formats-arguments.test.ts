/**
 * Tool arguments exactly, through the HTTP API (issue 27, item 4;
 * docs/architecture.md §15): bodies posted as raw JSON text, as a platform
 * sends them. The OpenAI formats give back the arguments string as posted;
 * in every format a duplicate key or a number a 64-bit float does not give
 * back is a located 400, and nothing is stored.
 */
import { describe, expect, it } from "vitest";
import { harness } from "../helpers/service.ts";

const TURNS = "/v1/conversations/c/turns";
const AT = "2026-01-01T00:00:00Z";

/** A turn of each format whose one tool call has `args`: JSON text (an object) spliced in as written. */
const BODIES: Record<string, (args: string) => string> = {
  "openai-chat": (args) =>
    `{"turn":0,"format":"openai-chat","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${JSON.stringify(args)}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
  "openai-responses": (args) =>
    `{"turn":0,"format":"openai-responses","input":[{"role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"f","arguments":${JSON.stringify(args)}},{"type":"function_call_output","call_id":"c1","output":"ok"}]}`,
  "anthropic-messages": (args) =>
    `{"turn":0,"format":"anthropic-messages","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":${args}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]}]}`,
  "ai-sdk": (args) =>
    `{"turn":0,"format":"ai-sdk","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"f","input":${args}}]},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"f","output":{"type":"text","value":"ok"}}]}]}`,
  jp: (args) =>
    `{"turn":0,"events":[{"type":"turn_start","timestamp":"${AT}"},{"type":"chat_request","timestamp":"${AT}","content":"go"},{"type":"tool_call_request","timestamp":"${AT}","id":"c1","name":"f","arguments":${args}},{"type":"tool_call_response","timestamp":"${AT}","id":"c1","content":"ok"}]}`,
};

/** Where the tool call's arguments sit in each format's body, as a JSON pointer. */
const ARGUMENTS_AT: Record<string, string> = {
  "anthropic-messages": "/messages/1/content/0/input",
  "ai-sdk": "/messages/1/content/0/input",
  jp: "/events/2/arguments",
};

const BIG = '{"n": 12345678901234567890, "f": 1.0}';

async function post(format: string, args: string) {
  const h = harness();
  const answer = await h.request("POST", TURNS, (BODIES[format] as (args: string) => string)(args));
  const stored = await h.request("GET", "/v1/conversations/c/events");
  return { h, answer, storedStatus: stored.status };
}

describe("the OpenAI formats give back the arguments string as posted", () => {
  it.each([
    [
      "openai-chat",
      (body: { messages: [unknown, { tool_calls: [{ function: { arguments: string } }] }] }) =>
        body.messages[1].tool_calls[0].function.arguments,
    ],
    [
      "openai-responses",
      (body: { input: [unknown, { arguments: string }] }) => body.input[1].arguments,
    ],
  ] as const)(
    "%s: the projection and the events hold the very string",
    async (format, argumentsOf) => {
      const { h, answer } = await post(format, BIG);
      expect(answer.status).toBe(202);
      for (const path of ["projection", "events"]) {
        const read = await h.request("GET", `/v1/conversations/c/${path}?format=${format}`);
        expect(argumentsOf((await read.json()) as never)).toBe(BIG);
      }
    },
  );

  it("reads the Chat string back in Responses", async () => {
    const { h } = await post("openai-chat", BIG);
    const read = await h.request("GET", "/v1/conversations/c/projection?format=openai-responses");
    const body = (await read.json()) as { input: [unknown, { arguments: string }] };
    expect(body.input[1].arguments).toBe(BIG);
  });
});

describe("a duplicate key or a number JSON readers would change is a located 400", () => {
  it.each(["openai-chat", "openai-responses"])(
    "%s: inside the arguments string",
    async (format) => {
      for (const [args, says] of [
        ['{"a": 1, "a": 2}', 'at /a: duplicate key "a"'],
        ['{"a": [1e999]}', "at /a/0: 1e999 is beyond a 64-bit float's range"],
      ]) {
        const { answer, storedStatus } = await post(format, args as string);
        expect(answer.status).toBe(400);
        const problem = (await answer.json()) as { detail: string };
        expect(problem.detail).toContain(says);
        expect(storedStatus).toBe(404);
      }
    },
  );

  it.each(["anthropic-messages", "ai-sdk", "jp"])("%s: in the object posted", async (format) => {
    const at = ARGUMENTS_AT[format] as string;
    const cases: [string, string, string][] = [
      [
        '{"a": 1, "a": 2}',
        `${at}/a`,
        'duplicate key "a": keys must be unique within an object (a JSON reader keeps only one of them)',
      ],
      [
        '{"x": {"n": 1e999}}',
        `${at}/x/n`,
        "1e999 is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
      ],
      [
        BIG,
        `${at}/n`,
        "12345678901234567890 has more digits than a 64-bit float holds, so it would read back as another number: send it as a string",
      ],
    ];
    for (const [args, pointer, detail] of cases) {
      const { answer, storedStatus } = await post(format, args);
      expect(answer.status).toBe(400);
      const problem = (await answer.json()) as { type: string; errors: unknown[] };
      expect(problem.type).toBe("/problems/invalid-request");
      expect(problem.errors).toEqual([{ pointer, detail }]);
      expect(storedStatus).toBe(404);
    }
  });

  it("names the body's path in the detail", async () => {
    const { answer } = await post("anthropic-messages", '{"a": 1, "a": 2}');
    expect(((await answer.json()) as { detail: string }).detail).toBe(
      'the request body would not be kept as sent: messages[1].content[0].input.a: duplicate key "a": keys must be unique within an object (a JSON reader keeps only one of them)',
    );
  });
});
