import { describe, expect, it } from "vitest";
import { generateConversation } from "../test/helpers/conversation.ts";
import { isKnown, isProviderVisible, parseEntry, parseStream } from "./events.ts";

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

  it("rejects a compaction whose range is inverted", () => {
    const result = parseEntry({
      type: "compaction",
      timestamp: "2026-01-01T00:00:00Z",
      from_turn: 3,
      to_turn: 1,
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.path).toBe("to_turn");
  });

  it("treats only requests, responses and tool calls as provider-visible", () => {
    const visible = ["chat_request", "chat_response", "tool_call_request", "tool_call_response"];
    for (const type of [
      ...visible,
      "turn_start",
      "inquiry_request",
      "inquiry_response",
      "config_delta",
      "compaction",
      "x",
    ]) {
      expect(isProviderVisible({ type, timestamp: "t" } as never)).toBe(visible.includes(type));
    }
  });
});
