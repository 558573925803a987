/**
 * Turns posted and read in provider formats through the HTTP API (issue 11,
 * docs/architecture.md §15): the body's rules, the timestamps the service assigns,
 * replays that ignore them, and the reads in each format. Expectations are
 * literals.
 */
import { describe, expect, it } from "vitest";
import type { ConversationStore } from "../../functions/ports.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { ANTHROPIC_LS_TURN, CHAT_README_TURN, THANKS_TURN } from "../helpers/format-samples.ts";
import { overriding } from "../helpers/overriding.ts";
import { harness } from "../helpers/service.ts";
import { offAndUnknown } from "../helpers/warnings.ts";

const TURNS = "/v1/conversations/c/turns";
const START = Date.UTC(2026, 10, 29, 12);

/** Two turns of an OpenAI Chat agent: a tool call and its result, then a follow-up. */
const CHAT_TURNS = [CHAT_README_TURN, THANKS_TURN];

/** One turn of an Anthropic agent with signed thinking and a tool round trip. */
const ANTHROPIC_TURN = ANTHROPIC_LS_TURN;

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as { type: string; detail: string; status: number };
}

/** A store that counts head reads and appends, to show the one-round-trip path reads nothing first. */
function countingHeadReads() {
  const inner = new MemoryConversationStore();
  const counts = { getHead: 0, appendTurn: 0 };
  const store: ConversationStore = overriding(inner, {
    getHead: (ref) => {
      counts.getHead++;
      return inner.getHead(ref);
    },
    appendTurn: (...args) => {
      counts.appendTurn++;
      return inner.appendTurn(...args);
    },
  });
  return { store, counts };
}

describe("POST …/turns in a provider format", () => {
  it("stores OpenAI Chat turns and answers them back unchanged, in one round trip each", async () => {
    const { store, counts } = countingHeadReads();
    const h = harness({ store });
    for (const [turn, messages] of CHAT_TURNS.entries()) {
      const answer = await h.request("POST", TURNS, { turn, format: "openai-chat", messages });
      expect(answer.status).toBe(202);
      expect(await answer.json()).toEqual({
        status: "created",
        turn,
        turn_count: turn + 1,
        evaluation_enqueued: true,
        evaluated_through: null,
        decided_through: null,
        warnings: offAndUnknown("c"),
      });
    }
    // One write each, and one head read for evaluated_through (made beside the write).
    expect(counts).toEqual({ getHead: 2, appendTurn: 2 });
    const read = await h.request("GET", "/v1/conversations/c/projection?format=openai-chat");
    expect(read.status).toBe(200);
    const body = (await read.json()) as Record<string, unknown>;
    expect(body.format).toBe("openai-chat");
    expect(body.turns).toEqual([{ kept: 0 }, { kept: 1 }]);
    expect(body.messages).toEqual(CHAT_TURNS.flat());
    // UTF-8 bytes over 4: the question 21, the call's name and arguments 9 + 20,
    // its result 33, the answers 25 and 15, "Thanks!" 7.
    expect(body.estimated_tokens).toBe(130 / 4);
  });

  it("stores the JP events a format post maps to: turn_start first, in message order", async () => {
    const h = harness();
    await h.request("POST", TURNS, { turn: 0, format: "openai-chat", messages: CHAT_TURNS[0] });
    const { events } = (await (await h.request("GET", "/v1/conversations/c/events")).json()) as {
      events: Record<string, unknown>[];
    };
    const stamp = "2026-11-29T12:00:00.000000Z";
    expect(events.map(({ metadata: _metadata, ...event }) => event)).toEqual([
      { type: "turn_start", timestamp: stamp },
      { type: "chat_request", timestamp: stamp, content: "What is in README.md?" },
      {
        type: "tool_call_request",
        timestamp: stamp,
        id: "call_1",
        name: "read_file",
        arguments: { path: "README.md" },
      },
      {
        type: "tool_call_response",
        timestamp: stamp,
        id: "call_1",
        content: "# autocompact\nKeeps agents small.",
        is_error: false,
      },
      { type: "chat_response", timestamp: stamp, message: "It describes autocompact." },
    ]);
  });

  it("keeps Anthropic thinking signatures and answers the turn back as it was posted", async () => {
    const h = harness();
    const post = { turn: 0, format: "anthropic-messages", messages: ANTHROPIC_TURN };
    expect((await h.request("POST", TURNS, post)).status).toBe(202);
    const body = (await (
      await h.request("GET", "/v1/conversations/c/projection?format=anthropic-messages")
    ).json()) as Record<string, unknown>;
    expect(body.messages).toEqual(ANTHROPIC_TURN);
  });

  it("never stamps a turn earlier than the conversation's last event, and honours a posted timestamp", async () => {
    const h = harness();
    const [first, second] = CHAT_TURNS;
    await h.request("POST", TURNS, { turn: 0, format: "openai-chat", messages: first });
    // The next API instance's clock is 5 s behind.
    h.clock.now = START - 5_000;
    expect(
      (await h.request("POST", TURNS, { turn: 1, format: "openai-chat", messages: second })).status,
    ).toBe(202);
    await h.request("POST", TURNS, {
      turn: 2,
      format: "openai-chat",
      messages: [{ role: "user", content: "Bye." }],
      timestamp: "2026-11-29T11:00:00+00:00",
    });
    const { events } = (await (await h.request("GET", "/v1/conversations/c/events")).json()) as {
      events: { type: string; timestamp: string }[];
    };
    const starts = events.filter((event) => event.type === "turn_start");
    expect(starts.map((event) => event.timestamp)).toEqual([
      "2026-11-29T12:00:00.000000Z",
      "2026-11-29T12:00:00.000000Z",
      "2026-11-29T11:00:00.000000Z",
    ]);
  });

  it("answers an identical re-post as a replay whatever the clock says, and a changed one as a conflict", async () => {
    const h = harness();
    const post = { turn: 0, format: "openai-chat", messages: CHAT_TURNS[0] };
    expect((await h.request("POST", TURNS, post)).status).toBe(202);
    h.clock.now = START + 60_000;
    const replay = await h.request("POST", TURNS, post);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ status: "replayed", turn: 0, turn_count: 1 });
    const changed = await h.request("POST", TURNS, {
      ...post,
      messages: [{ role: "user", content: "Something else" }],
    });
    expect(changed.status).toBe(409);
    expect((await problem(changed)).detail).toContain("turn 0 is already stored");
  });

  it("refuses a system prompt unless drop_system, then says how many it dropped", async () => {
    const h = harness();
    const messages = [{ role: "system", content: "You are terse." }, ...(CHAT_TURNS[1] ?? [])];
    const refused = await h.request("POST", TURNS, { turn: 0, format: "openai-chat", messages });
    expect(refused.status).toBe(422);
    const body = await problem(refused);
    expect(body.type).toBe("/problems/unsupported-message");
    expect(body.detail).toMatch(/^messages\[0\]: /);
    expect(body.detail).toContain("drop_system");
    expect((await h.request("GET", "/v1/conversations/c")).status).toBe(404);

    const dropped = await h.request("POST", TURNS, {
      turn: 0,
      format: "openai-chat",
      messages,
      drop_system: true,
    });
    expect(dropped.status).toBe(202);
    expect(await dropped.json()).toMatchObject({ status: "created", dropped_system: 1 });
    const read = (await (
      await h.request("GET", "/v1/conversations/c/projection?format=openai-chat")
    ).json()) as Record<string, unknown>;
    expect(read.messages).toEqual(CHAT_TURNS[1]);
  });

  it("refuses tool arguments nested deeper than 100 levels, which could not be stored", async () => {
    const h = harness();
    const deep = `${"[".repeat(100)}${"]".repeat(100)}`;
    const answer = await h.request("POST", TURNS, {
      turn: 0,
      format: "openai-chat",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c", type: "function", function: { name: "f", arguments: `{"a":${deep}}` } },
          ],
        },
        { role: "tool", tool_call_id: "c", content: "ok" },
      ],
    });
    expect(answer.status).toBe(400);
    expect((await problem(answer)).detail).toBe(
      "messages[1].tool_calls[0].function.arguments: nests deeper than 100 levels: flatten the tool's arguments",
    );
    expect((await h.request("GET", "/v1/conversations/c")).status).toBe(404);
  });

  it.each([
    [
      { url: "not a uri", detail: "low" },
      "messages[0].content[1].image_url.url: url must be a URL (https: or data:)",
    ],
    [
      { url: "https://example.com/cat.png", detail: "medium" },
      'messages[0].content[1].image_url.detail: Invalid option: expected one of "auto"|"low"|"high"',
    ],
  ])(
    "refuses an image part OpenAI would refuse (%o), so the projection stays a valid request",
    async (image_url, detail) => {
      const h = harness();
      const answer = await h.request("POST", TURNS, {
        turn: 0,
        format: "openai-chat",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url },
            ],
          },
        ],
      });
      expect(answer.status).toBe(400);
      expect((await problem(answer)).detail).toBe(detail);
    },
  );

  it.each([
    [
      "an unknown format",
      { turn: 0, format: "gemini", messages: [] },
      "unknown format: use one of jp, openai-chat, openai-responses, anthropic-messages, ai-sdk",
    ],
    [
      "events and a format together",
      { turn: 0, format: "openai-chat", events: [], messages: [] },
      "post either JP `events` or `format` with its messages, not both",
    ],
    [
      "messages without a format",
      { turn: 0, messages: [{ role: "user", content: "hi" }] },
      "`messages` needs a `format`",
    ],
    [
      "the other format's messages field",
      { turn: 0, format: "openai-chat", input: [] },
      "format openai-chat carries its messages in `messages`, not `input`",
    ],
    [
      "no messages",
      { turn: 0, format: "anthropic-messages" },
      "format anthropic-messages needs the turn's messages in `messages`",
    ],
    [
      "a bad timestamp",
      { turn: 0, format: "openai-chat", messages: [], timestamp: "yesterday" },
      'invalid timestamp "yesterday"',
    ],
  ])("refuses %s with a 400 that says what to change", async (_, body, detail) => {
    const h = harness();
    const answer = await h.request("POST", TURNS, body);
    expect(answer.status).toBe(400);
    expect((await problem(answer)).detail).toContain(detail);
    expect((await h.request("GET", "/v1/conversations/c")).status).toBe(404);
  });
});

describe("GET …/events and …/projection with ?format=", () => {
  it("answers the raw stream without compactions, and the projection compacted", async () => {
    const h = harness();
    for (const [turn, messages] of CHAT_TURNS.entries()) {
      await h.request("POST", TURNS, { turn, format: "openai-chat", messages });
    }
    const added = await h.request("POST", "/v1/conversations/c/compactions", { spec: "t:0..0" });
    expect(added.status).toBe(201);

    const raw = (await (
      await h.request("GET", "/v1/conversations/c/events?format=openai-chat")
    ).json()) as Record<string, unknown>;
    expect(raw).toEqual({ format: "openai-chat", messages: CHAT_TURNS.flat() });

    const projected = (await (
      await h.request("GET", "/v1/conversations/c/projection?format=openai-chat")
    ).json()) as { messages: Record<string, unknown>[] };
    expect(projected.messages.slice(1, 3)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_file", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "[compacted] read_file: success" },
    ]);
  });

  it("reads a conversation posted as JP events in a provider format", async () => {
    const h = harness();
    const at = "2026-01-01T00:00:00Z";
    await h.request("POST", TURNS, {
      turn: 0,
      events: [
        { type: "turn_start", timestamp: at },
        { type: "chat_request", timestamp: at, content: "hi" },
        { type: "chat_response", timestamp: at, reasoning: "greet back" },
        { type: "chat_response", timestamp: at, message: "hello" },
      ],
    });
    const read = (await (
      await h.request("GET", "/v1/conversations/c/projection?format=openai-chat")
    ).json()) as Record<string, unknown>;
    // Chat has no reasoning input: it is left out.
    expect(read.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
  });

  it("refuses an unknown format with the list of known ones", async () => {
    const h = harness();
    await h.request("POST", TURNS, { turn: 0, format: "openai-chat", messages: CHAT_TURNS[1] });
    for (const path of ["events", "projection"]) {
      const answer = await h.request("GET", `/v1/conversations/c/${path}?format=xml`);
      expect(answer.status).toBe(400);
      expect((await problem(answer)).detail).toContain(
        "unknown format: use one of jp, openai-chat, openai-responses, anthropic-messages, ai-sdk",
      );
    }
  });
});
