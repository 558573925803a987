import { describe, expect, it } from "vitest";
import { InvalidInputError } from "./errors.ts";
import type { Entry } from "./events.ts";
import {
  checkTurnShape,
  formatMessages,
  formatTurnUsage,
  TurnUsageSchema,
  turnBodyKind,
  turnConfigLayers,
  turnEvents,
} from "./turn-validation.ts";

const T = "2026-01-01T00:00:00Z";
const start = { type: "turn_start", timestamp: T } as Entry;
const ask = { type: "chat_request", timestamp: T, content: "hi" } as Entry;
const delta = (auto: unknown) =>
  ({
    type: "config_delta",
    timestamp: T,
    delta: { conversation: { compaction: { auto } } },
  }) as Entry;

/** The error `run` throws, as the fields a problem is made of. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    return { message: error.message, type: error.type, issues: error.issues };
  }
  throw new Error("expected a refusal");
}

describe("turnBodyKind", () => {
  it("reads a body without a format, or with format jp, as JP events", () => {
    const body = { turn: 0, events: [] };
    expect(turnBodyKind(body)).toEqual({ kind: "events", body });
    expect(turnBodyKind({ format: "jp", turn: 0, events: [] })).toEqual({
      kind: "events",
      body: { turn: 0, events: [] },
    });
    expect(turnBodyKind(null)).toEqual({ kind: "events", body: null });
    expect(turnBodyKind([1])).toEqual({ kind: "events", body: [1] });
    expect(turnBodyKind({ format: "openai-chat", messages: [] })).toEqual({ kind: "format" });
  });

  it("refuses messages without a format, and events with one", () => {
    expect(refusal(() => turnBodyKind({ turn: 0, messages: [] }))).toEqual({
      message:
        "`messages` needs a `format` (one of openai-chat, openai-responses, anthropic-messages, ai-sdk); JP events are posted as `events`",
      type: "/problems/invalid-request",
      issues: [{ pointer: "/format", detail: "missing" }],
    });
    expect(refusal(() => turnBodyKind({ format: "jp", input: [] })).message).toMatch(
      /^`input` needs a `format`/,
    );
    expect(refusal(() => turnBodyKind({ format: "ai-sdk", events: [] }))).toEqual({
      message:
        'post either JP `events` or `format` with its messages, not both (format is "ai-sdk")',
      type: "/problems/invalid-request",
      issues: [{ pointer: "/events", detail: "not with format" }],
    });
  });
});

describe("formatMessages", () => {
  it("takes the messages from the format's own field", () => {
    expect(formatMessages({ format: "openai-chat", messages: [1] })).toEqual([1]);
    expect(formatMessages({ format: "openai-responses", input: [2] })).toEqual([2]);
  });

  it("refuses the other field, and a missing one", () => {
    expect(
      refusal(() => formatMessages({ format: "openai-chat", messages: [], input: [] })),
    ).toEqual({
      message: "format openai-chat carries its messages in `messages`, not `input`",
      type: "/problems/invalid-request",
      issues: [{ pointer: "/input", detail: "use messages" }],
    });
    expect(
      refusal(() => formatMessages({ format: "openai-responses", messages: [] })).issues,
    ).toEqual([{ pointer: "/messages", detail: "use input" }]);
    expect(refusal(() => formatMessages({ format: "anthropic-messages" }))).toEqual({
      message: "format anthropic-messages needs the turn's messages in `messages`",
      type: "/problems/invalid-request",
      issues: [{ pointer: "/messages", detail: "missing" }],
    });
  });
});

describe("formatTurnUsage", () => {
  it("says which format's response lacks usage, locating the problem under /response", () => {
    expect(
      refusal(() => formatTurnUsage({ format: "openai-responses", response: { id: "resp_1" } })),
    ).toEqual({
      message:
        "response is not a openai-responses response with usage: /response/usage: the response has no usage object (the SDK's `usage`)",
      type: "/problems/invalid-request",
      issues: [
        {
          pointer: "/response/usage",
          detail: "the response has no usage object (the SDK's `usage`)",
        },
      ],
    });
  });

  it("names the first bad count of a response and counts the others", () => {
    const response = { usage: { prompt_tokens: 1.5, completion_tokens: -1 } };
    expect(refusal(() => formatTurnUsage({ format: "openai-chat", response }))).toEqual({
      message:
        "response is not a openai-chat response with usage: /response/usage/prompt_tokens: must be a whole number of tokens (and 1 more)",
      type: "/problems/invalid-request",
      issues: [
        { pointer: "/response/usage/prompt_tokens", detail: "must be a whole number of tokens" },
        { pointer: "/response/usage/completion_tokens", detail: "must be 0 or more" },
      ],
    });
  });
});

describe("turnEvents", () => {
  it("parses the events as entries", () => {
    expect(turnEvents([{ type: "tool_call_request", timestamp: T, id: "c", name: "n" }])).toEqual([
      {
        type: "tool_call_request",
        timestamp: "2026-01-01T00:00:00.000000Z",
        id: "c",
        name: "n",
        arguments: {},
      },
    ]);
  });

  it("locates every problem, the first one in the detail", () => {
    expect(
      refusal(() =>
        turnEvents([
          { type: "turn_start", timestamp: T },
          { type: "chat_request", timestamp: T, content: 5 },
          7,
        ]),
      ),
    ).toEqual({
      message: "events[1].content: Invalid input: expected string, received number (and 1 more)",
      type: "/problems/invalid-request",
      issues: [
        { pointer: "/events/1/content", detail: "Invalid input: expected string, received number" },
        { pointer: "/events/2", detail: "entry must be a JSON object" },
      ],
    });
    expect(refusal(() => turnEvents([7])).message).toBe("events[0]: entry must be a JSON object");
  });
});

describe("checkTurnShape: tool pairs", () => {
  const call = (id: string) =>
    ({ type: "tool_call_request", timestamp: T, id, name: "f", arguments: {} }) as Entry;
  const result = (id: string) =>
    ({ type: "tool_call_response", timestamp: T, id, content: "r", is_error: false }) as Entry;
  const answer = { type: "chat_response", timestamp: T, message: "ok" } as Entry;

  it("refuses a duplicate call id within a turn with a located 400", () => {
    expect(
      refusal(() =>
        checkTurnShape(1, [start, ask, call("a"), result("a"), call("a"), result("a")]),
      ),
    ).toEqual({
      message:
        'events[4].id: duplicate tool call id "a" (also at events[2]): tool call ids must be unique within a turn',
      type: "/problems/invalid-turn",
      issues: [
        {
          pointer: "/events/4/id",
          detail:
            'duplicate tool call id "a" (also at events[2]): tool call ids must be unique within a turn',
        },
      ],
    });
  });

  it("refuses a second result for a call", () => {
    expect(
      refusal(() => checkTurnShape(1, [start, ask, call("a"), result("a"), result("a")])).message,
    ).toBe(
      'events[4].id: a second result for tool call "a" (the first is events[3]); a call takes one result',
    );
  });

  it("takes a turn ending in pending calls, and results for them first in the next turn", () => {
    expect(() => checkTurnShape(0, [ask, call("a"), call("b")])).not.toThrow();
    expect(() => checkTurnShape(0, [ask, call("a"), call("b"), result("a")])).not.toThrow();
    expect(() => checkTurnShape(1, [start, result("a"), result("b"), answer])).not.toThrow();
  });

  it("refuses a result without its call anywhere but first in a later turn", () => {
    expect(refusal(() => checkTurnShape(1, [start, ask, result("a")])).issues).toEqual([
      {
        pointer: "/events/2/id",
        detail:
          'no tool call "a" comes before this result in the turn: a result for an earlier turn\'s pending call comes first in the next turn (after its turn_start)',
      },
    ]);
    expect(refusal(() => checkTurnShape(0, [result("a"), ask])).message).toMatch(
      /^events\[0\]\.id: .*, and turn 0 has no earlier turn$/,
    );
  });

  it("refuses an implicit turn 0 that goes on after its first event, a call left unanswered", () => {
    expect(refusal(() => checkTurnShape(0, [call("a"), answer])).issues).toEqual([
      {
        pointer: "/events/1/type",
        detail:
          'tool call "a" has no result in this turn, yet the turn goes on: a call may stay unanswered only at the end of its turn (the next turn then begins with its result)',
      },
    ]);
    expect(() => checkTurnShape(0, [call("a"), result("a"), answer])).not.toThrow();
  });

  it("refuses a turn that goes on after a call left unanswered", () => {
    expect(refusal(() => checkTurnShape(1, [start, ask, call("a"), answer])).message).toBe(
      'events[3].type: tool call "a" has no result in this turn, yet the turn goes on: a call may stay unanswered only at the end of its turn (the next turn then begins with its result)',
    );
    expect(() => checkTurnShape(1, [start, ask, call("a"), result("a"), answer])).not.toThrow();
    expect(() => checkTurnShape(1, [start, ask, call("a"), call("b"), result("b")])).not.toThrow();
    expect(
      refusal(() => checkTurnShape(1, [start, ask, call("a"), call("b"), result("b"), answer]))
        .issues[0]?.pointer,
    ).toBe("/events/5/type");
  });
});

describe("checkTurnShape", () => {
  it("accepts one turn, implicit only as turn 0", () => {
    expect(() => checkTurnShape(0, [ask])).not.toThrow();
    expect(() => checkTurnShape(3, [delta({}), start, ask])).not.toThrow();
  });

  it("refuses a compaction, a turn without a conversation event, two turns, and a later turn without turn_start", () => {
    const compaction = { type: "compaction", timestamp: T, from_turn: 0, to_turn: 0 } as Entry;
    expect(refusal(() => checkTurnShape(0, [ask, compaction]))).toEqual({
      message:
        "events[1] is a compaction: add compactions with POST /v1/conversations/{id}/compactions, not in a turn",
      type: "/problems/invalid-turn",
      issues: [],
    });
    expect(refusal(() => checkTurnShape(0, [compaction])).message).toMatch(/^events\[0\] is a/);
    expect(
      refusal(() => checkTurnShape(0, [delta({}), { type: "bogus" } as Entry, delta({})])),
    ).toEqual({
      message:
        "a turn needs at least one conversation event (turn_start, chat_request, chat_response, tool_call_request, tool_call_response, inquiry_*); got only: config_delta, bogus",
      type: "/problems/invalid-turn",
      issues: [],
    });
    expect(refusal(() => checkTurnShape(0, [start, ask, start, ask, start]))).toEqual({
      message:
        "events hold 3 turns: post one turn per request (each turn_start after an event starts a new turn)",
      type: "/problems/invalid-turn",
      issues: [],
    });
    expect(refusal(() => checkTurnShape(1, [delta({}), ask]))).toEqual({
      message: "turn 1 must begin with a turn_start event (only turn 0 may start implicitly)",
      type: "/problems/invalid-turn",
      issues: [],
    });
  });
});

describe("turnConfigLayers", () => {
  it("lists the layers the deltas set, in order, leaving out the empty ones", () => {
    const bare = { type: "config_delta", timestamp: T } as Entry;
    expect(
      turnConfigLayers([
        start,
        delta({ enabled: true }),
        bare,
        delta({}),
        { type: "config_delta", timestamp: T, delta: { other: 1 } } as Entry,
        { type: "custom", delta: { conversation: { compaction: { auto: { enabled: false } } } } },
        delta({ min_turns: 2 }),
      ]),
    ).toEqual([{ enabled: true }, { min_turns: 2 }]);
    expect(turnConfigLayers([start, ask])).toEqual([]);
  });

  it("names each bad key of each delta", () => {
    const error = refusal(() =>
      turnConfigLayers([start, delta({ trigger_ratio: 2, min_turns: -1 })]),
    );
    expect(error.type).toBe("/problems/invalid-turn");
    expect(error.message).toMatch(
      /^events\[1\]\.delta: conversation\.compaction\.auto\.trigger_ratio: .+; events\[1\]\.delta: conversation\.compaction\.auto\.min_turns: /,
    );
    expect(error.issues).toHaveLength(2);
    expect(error.issues[0]?.pointer).toBe("/events/1/delta");
    expect(error.issues[0]?.detail).toMatch(/^conversation\.compaction\.auto\.trigger_ratio: /);
  });

  it("lets an error that is not the delta's fault through as it is", () => {
    const hostile = {
      get conversation(): never {
        throw new RangeError("boom");
      },
    };
    const entry = { type: "config_delta", timestamp: T, delta: hostile } as Entry;
    expect(() => turnConfigLayers([start, entry])).toThrow(RangeError);
  });
});

describe("TurnUsageSchema", () => {
  it("takes what a provider reports, each count optional but input_tokens", () => {
    const full = {
      input_tokens: 12_000,
      output_tokens: 350,
      cached_input_tokens: 12_000,
      calls: 3,
    };
    expect(TurnUsageSchema.parse(full)).toEqual(full);
    expect(TurnUsageSchema.parse({ input_tokens: 0 })).toEqual({ input_tokens: 0 });
  });

  it.each([
    [{}, "input_tokens", "must be a whole number of tokens"],
    [{ input_tokens: 1.5 }, "input_tokens", "must be a whole number of tokens"],
    [{ input_tokens: -1 }, "input_tokens", "must be 0 or more"],
    [{ input_tokens: "9" }, "input_tokens", "must be a whole number of tokens"],
    [{ input_tokens: 2 ** 53 }, "input_tokens", "must be a whole number of tokens"],
    [{ input_tokens: 5, output_tokens: -2 }, "output_tokens", "must be 0 or more"],
    [{ input_tokens: 5, calls: 0 }, "calls", "must be 1 or more"],
    [
      { input_tokens: 5, cached_input_tokens: 6 },
      "cached_input_tokens",
      "must be at most input_tokens (input_tokens counts cached tokens too)",
    ],
    [{ input_tokens: 5, total_tokens: 9 }, "", 'Unrecognized key: "total_tokens"'],
  ])("refuses %j at %s", (usage, path, message) => {
    const result = TurnUsageSchema.safeParse(usage);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      [path, message],
    ]);
  });
});
