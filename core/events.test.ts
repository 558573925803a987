import { describe, expect, it } from "vitest";
import { generateConversation } from "../test/helpers/conversation.ts";
import { Entry, isKnown, parseEntry, parseStream } from "./events.ts";

describe("parsing entries", () => {
  it("accepts every generated entry and round-trips it", () => {
    const stream = JSON.parse(JSON.stringify(generateConversation({ seed: 3, turns: 20 })));
    const parsed = parseStream(stream);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(JSON.parse(JSON.stringify(parsed.entries))).toEqual(stream);
  });

  it("normalizes JP timestamps to RFC 3339", () => {
    const result = parseEntry({ type: "turn_start", timestamp: "2026-03-18 13:19:07.360486" });
    expect(result).toEqual({
      ok: true,
      entry: { type: "turn_start", timestamp: "2026-03-18T13:19:07.360486Z" },
    });
  });

  it("keeps unknown entry types and unmodelled fields verbatim", () => {
    const unknown = {
      type: "patch",
      timestamp: "2026-01-01T00:00:00.000000Z",
      anything: [1, { b: 2 }],
    };
    expect(parseEntry(unknown)).toEqual({ ok: true, entry: unknown });
    const request = {
      type: "chat_request",
      timestamp: "2026-01-01T00:00:00.000000Z",
      content: "x",
      author: "Ann",
      extra: 1,
      metadata: { k: "v" },
    };
    expect(parseEntry(request)).toEqual({ ok: true, entry: request });
    const unknownEntry = parseEntry(unknown);
    expect(unknownEntry.ok && isKnown(unknownEntry.entry)).toBe(false);
    expect(parseEntry({ type: "toString", timestamp: "2026-01-01T00:00:00Z" }).ok).toBe(true);
  });

  it("keeps every key verbatim, even __proto__, in arguments, metadata and unknown entries", () => {
    const text =
      '[{"type":"tool_call_request","timestamp":"2026-01-01T00:00:00Z","id":"1","name":"x","arguments":{"__proto__":{"a":1},"b":2},"metadata":{"__proto__":"m"}},' +
      '{"type":"x_future","stamp":"whenever","__proto__":{"z":true},"timestamp":"not a time"}]';
    const parsed = parseStream(JSON.parse(text));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const out = JSON.parse(JSON.stringify(parsed.entries));
    expect(Object.keys(out[0].arguments)).toEqual(["__proto__", "b"]);
    expect(Object.keys(out[0].metadata)).toEqual(["__proto__"]);
    expect(JSON.stringify(parsed.entries[1])).toBe(JSON.stringify(JSON.parse(text)[1]));
  });

  it("defaults compaction source to manual and tool errors to false", () => {
    const parsed = parseStream([
      {
        type: "compaction",
        timestamp: "2026-01-01 00:00:00.0",
        from_turn: 0,
        to_turn: 2,
        reasoning: "strip",
      },
      { type: "tool_call_response", timestamp: "2026-01-01T00:00:00Z", id: "1", content: "x" },
    ]);
    expect(parsed.ok && parsed.entries[0]).toMatchObject({ source: "manual" });
    expect(parsed.ok && parsed.entries[1]).toMatchObject({ is_error: false });
  });

  it("reports each problem with its entry index and field", () => {
    const parsed = parseStream([
      { type: "chat_request", timestamp: "2026-01-01T00:00:00Z" },
      { type: "chat_response", timestamp: "2026-01-01T00:00:00Z", message: "a", reasoning: "b" },
      { type: "compaction", timestamp: "bad", from_turn: 3, to_turn: 1 },
      "nope",
      { timestamp: "2026-01-01T00:00:00Z" },
      { type: "tool_call_request", timestamp: "2026-01-01T00:00:00Z", id: 1, name: "x" },
    ]);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const summary = parsed.issues.map((i) => `${i.index}:${i.path}:${i.message}`);
    expect(summary).toContainEqual(expect.stringMatching(/^0:content:/));
    expect(summary).toContainEqual(
      expect.stringMatching(
        /^1::chat_response needs exactly one of message, reasoning, data \(found message, reasoning\)/,
      ),
    );
    expect(summary).toContainEqual(expect.stringMatching(/^2:timestamp:invalid timestamp "bad"/));
    expect(summary).toContainEqual(expect.stringMatching(/^3::entry must be a JSON object/));
    expect(summary).toContainEqual(expect.stringMatching(/^4:type:/));
    expect(summary).toContainEqual(expect.stringMatching(/^5:id:/));
    expect(parseStream({}).ok).toBe(false);
  });

  it("normalizes the timestamp of every known entry type", () => {
    const jp = "2026-03-18 13:19:07.360486";
    for (const entry of [
      { type: "turn_start" },
      { type: "chat_request", content: "q" },
      { type: "chat_response", message: "a" },
      { type: "tool_call_request", id: "1", name: "grep", arguments: {} },
      { type: "tool_call_response", id: "1", content: "found", is_error: false },
      { type: "inquiry_request", question: "?" },
      { type: "inquiry_response", answer: "!" },
      { type: "config_delta", delta: { a: 1 } },
      { type: "compaction", from_turn: 0, to_turn: 1, source: "manual" },
    ]) {
      expect(parseEntry({ ...entry, timestamp: jp })).toEqual({
        ok: true,
        entry: { ...entry, timestamp: "2026-03-18T13:19:07.360486Z" },
      });
    }
  });

  it("rejects a malformed timestamp with the accepted forms", () => {
    expect(parseStream([{ type: "turn_start", timestamp: "yesterday" }])).toEqual({
      ok: false,
      issues: [
        {
          index: 0,
          path: "timestamp",
          message:
            'invalid timestamp "yesterday": expected RFC 3339 (2026-03-18T13:19:07.360486Z) or JP\'s form (2026-03-18 13:19:07.360486)',
        },
      ],
    });
  });

  it("rejects a stream that is not an array", () => {
    expect(parseStream({ entries: [] })).toEqual({
      ok: false,
      issues: [{ index: -1, path: "", message: "stream must be a JSON array" }],
    });
  });

  it("rejects entries that are not objects or have no string type", () => {
    expect(
      parseStream([null, [], "turn_start", { timestamp: "2026-01-01T00:00:00Z" }, { type: 5 }]),
    ).toEqual({
      ok: false,
      issues: [
        { index: 0, path: "", message: "entry must be a JSON object" },
        { index: 1, path: "", message: "entry must be a JSON object" },
        { index: 2, path: "", message: "entry must be a JSON object" },
        { index: 3, path: "type", message: "entry needs a string `type`" },
        { index: 4, path: "type", message: "entry needs a string `type`" },
      ],
    });
  });

  it("accepts a chat_response with exactly one of message, reasoning, data", () => {
    const timestamp = "2026-01-01T00:00:00.000000Z";
    for (const body of [
      { message: "m" },
      { reasoning: "r" },
      { data: { k: [1] } },
      { data: null },
    ]) {
      const entry = { type: "chat_response", timestamp, ...body };
      expect(parseEntry(entry)).toEqual({ ok: true, entry });
    }
    expect(parseStream([{ type: "chat_response", timestamp }])).toEqual({
      ok: false,
      issues: [
        {
          index: 0,
          path: "",
          message: "chat_response needs exactly one of message, reasoning, data (found none)",
        },
      ],
    });
    expect(
      parseStream([{ type: "chat_response", timestamp, message: "m", reasoning: "r", data: 1 }]),
    ).toEqual({
      ok: false,
      issues: [
        {
          index: 0,
          path: "",
          message:
            "chat_response needs exactly one of message, reasoning, data (found message, reasoning, data)",
        },
      ],
    });
  });

  it("requires tool arguments, metadata and config deltas to be JSON objects", () => {
    const timestamp = "2026-01-01T00:00:00Z";
    const call = { type: "tool_call_request", timestamp, id: "1", name: "grep" };
    expect(
      parseStream([
        { ...call, arguments: null },
        { ...call, arguments: [] },
        { ...call, arguments: "q=x" },
        { type: "turn_start", timestamp, metadata: ["m"] },
        { type: "config_delta", timestamp, delta: 1 },
      ]),
    ).toEqual({
      ok: false,
      issues: [
        { index: 0, path: "arguments", message: "expected a JSON object" },
        { index: 1, path: "arguments", message: "expected a JSON object" },
        { index: 2, path: "arguments", message: "expected a JSON object" },
        { index: 3, path: "metadata", message: "expected a JSON object" },
        { index: 4, path: "delta", message: "expected a JSON object" },
      ],
    });
    expect(parseEntry(call)).toEqual({
      ok: true,
      entry: { ...call, timestamp: "2026-01-01T00:00:00.000000Z", arguments: {} },
    });
  });

  it("accepts a compaction of a single turn and names to_turn when the range is inverted", () => {
    const timestamp = "2026-01-01T00:00:00.000000Z";
    const single = { type: "compaction", timestamp, from_turn: 4, to_turn: 4, source: "auto" };
    expect(parseEntry(single)).toEqual({ ok: true, entry: single });
    expect(parseStream([{ ...single, from_turn: 5 }])).toEqual({
      ok: false,
      issues: [
        { index: 0, path: "to_turn", message: "compaction from_turn must not be after to_turn" },
      ],
    });
  });

  it("reads a compaction's policies, defaulting a stripping tool policy to both sides", () => {
    const timestamp = "2026-01-01T00:00:00.000000Z";
    const compaction = {
      type: "compaction",
      timestamp,
      from_turn: 0,
      to_turn: 3,
      source: "manual",
    };
    const trigger = {
      turn: 9,
      estimated_tokens: 1500.5,
      threshold: 1500,
      context_window: 2000,
      estimated_tokens_after: 200,
    };
    const cases = [
      [
        { tool_calls: { policy: "strip" } },
        { tool_calls: { policy: "strip", request: true, response: true } },
      ],
      [
        { tool_calls: { policy: "strip", request: false } },
        { tool_calls: { policy: "strip", request: false, response: true } },
      ],
      [
        { tool_calls: { policy: "strip", response: false } },
        { tool_calls: { policy: "strip", request: true, response: false } },
      ],
      [{ tool_calls: { policy: "omit" } }, { tool_calls: { policy: "omit" } }],
      [{ summary: { summary: "s", model: "m" } }, { summary: { summary: "s", model: "m" } }],
      [
        { source: "auto", trigger },
        { source: "auto", trigger },
      ],
    ] as const;
    for (const [given, read] of cases) {
      expect(parseEntry({ ...compaction, ...given })).toEqual({
        ok: true,
        entry: { ...compaction, ...read },
      });
    }
  });

  it("names the field of a malformed compaction policy, source or trigger", () => {
    const compaction = {
      type: "compaction",
      timestamp: "2026-01-01T00:00:00Z",
      from_turn: 0,
      to_turn: 0,
    };
    const trigger = {
      turn: -1,
      estimated_tokens: 1,
      threshold: 1,
      context_window: 1,
      estimated_tokens_after: 1,
    };
    expect(
      parseStream([
        { ...compaction, tool_calls: { policy: "drop" } },
        { ...compaction, tool_calls: { policy: "strip", request: "yes" } },
        { ...compaction, source: "robot" },
        { ...compaction, summary: {} },
        { ...compaction, trigger },
      ]),
    ).toEqual({
      ok: false,
      issues: [
        {
          index: 0,
          path: "tool_calls.policy",
          message: "Invalid discriminator value. Expected 'omit' | 'strip'",
        },
        {
          index: 1,
          path: "tool_calls.request",
          message: "Invalid input: expected boolean, received string",
        },
        { index: 2, path: "source", message: 'Invalid option: expected one of "manual"|"auto"' },
        {
          index: 3,
          path: "summary.summary",
          message: "Invalid input: expected string, received undefined",
        },
        { index: 4, path: "trigger.turn", message: "Too small: expected number to be >=0" },
      ],
    });
  });

  it("narrows known entries, including every known type, and not unknown ones", () => {
    const parsed = parseStream([
      { type: "turn_start", timestamp: "2026-01-01T00:00:00Z" },
      { type: "compaction", timestamp: "2026-01-01T00:00:00Z", from_turn: 0, to_turn: 0 },
      { type: "constructor", timestamp: "2026-01-01T00:00:00Z" },
    ]);
    expect(parsed.ok && parsed.entries.map(isKnown)).toEqual([true, true, false]);
  });
});

describe("the Entry schema", () => {
  it("accepts known entries by their schema and unknown types verbatim", () => {
    const unknown = { type: "patch", timestamp: "whenever", diff: [1] };
    expect(Entry.safeParse(unknown)).toEqual({ success: true, data: unknown });
    expect(Entry.safeParse({ type: "turn_start", timestamp: "2026-01-01 00:00:00" }).data).toEqual({
      type: "turn_start",
      timestamp: "2026-01-01T00:00:00.000000Z",
    });
  });

  it("rejects a known type that fails its schema rather than keeping it as unknown", () => {
    expect(
      Entry.safeParse({ type: "chat_request", timestamp: "2026-01-01T00:00:00Z" }).success,
    ).toBe(false);
    expect(Entry.safeParse({ type: "turn_start", timestamp: "bad" }).success).toBe(false);
  });

  it("refuses a tool call's non-finite argument as a custom issue at its path", () => {
    const call = {
      type: "tool_call_request",
      timestamp: "2026-01-01T00:00:00Z",
      id: "c",
      name: "f",
      arguments: { a: [1, Number.POSITIVE_INFINITY] },
    };
    expect(Entry.safeParse(call).error?.issues).toMatchObject([
      {
        code: "custom",
        path: ["arguments", "a", 1],
        message: "is not a finite number: JSON cannot carry it",
      },
    ]);
  });

  it("rejects values that are not entries with a string type", () => {
    for (const value of [null, undefined, "patch", 1, [], {}, { type: 1 }]) {
      expect(Entry.safeParse(value).success).toBe(false);
    }
  });
});
