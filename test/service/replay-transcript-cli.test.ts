/**
 * `autocompact replay` of a provider transcript against a real HTTP server:
 * each turn is posted in the transcript's format ({turn, format, messages,
 * drop_system?}), the service stores it as that turn, a second replay finds
 * every turn already stored, and a system prompt is refused before anything
 * is posted unless --drop-system, which is sent as drop_system.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NO_MODEL_LINE, offLine, runCli } from "../helpers/cli.ts";
import { ANTHROPIC_LS_TURN, CHAT_README_TURN, THANKS_TURN } from "../helpers/format-samples.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";
import { offAndUnknown } from "../helpers/warnings.ts";

/** Two Anthropic turns: signed thinking and a tool round trip, then a short exchange. */
const ANTHROPIC = [ANTHROPIC_LS_TURN, THANKS_TURN];

/** Three OpenAI Chat turns with a tool call; turn 1 reuses turn 0's call id (allowed across turns). */
const CHAT = [
  CHAT_README_TURN,
  [
    { role: "user", content: "And LICENSE?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"LICENSE"}' },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "MIT" },
    { role: "assistant", content: "It is MIT licensed." },
  ],
  THANKS_TURN,
];

/** Chat turns that each lead with the platform's system prompt. */
const WITH_SYSTEM = [
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ],
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "bye" },
    { role: "assistant", content: "ciao" },
  ],
];

let server: ReturnType<typeof serve>;
let url: string;
let dir: string;
const h = harness();
/** The bodies of the turn posts the server received, in order. */
const posts: { path: string; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-replay-transcript-"));
  await writeFile(join(dir, "anthropic.json"), JSON.stringify(ANTHROPIC));
  await writeFile(join(dir, "chat.json"), JSON.stringify(CHAT));
  await writeFile(join(dir, "system.json"), JSON.stringify(WITH_SYSTEM));
  const recording = async (request: Request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path.endsWith("/turns")) {
      posts.push({ path, body: (await request.clone().json()) as Record<string, unknown> });
    }
    return h.app.fetch(request);
  };
  server = await new Promise((resolve) => {
    const instance = serve({ fetch: recording, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(instance),
    );
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  posts.length = 0;
});

/** Runs the CLI in process against the server as alice. */
const cli = (...args: string[]) => runCli([...args, "--url", url, "--key", ALICE_KEY]);

/** GET a conversation path as alice. */
async function get(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}/v1/conversations/${path}`, {
    headers: { authorization: `Bearer ${ALICE_KEY}` },
  });
  return { status: response.status, body: await response.json() };
}

describe("autocompact replay of a provider transcript", () => {
  it("posts an Anthropic transcript's turns in its format, and a second replay stores nothing new", async () => {
    const file = join(dir, "anthropic.json");
    const first = await cli("replay", file, "-c", "anthropic");
    // The last answer's warnings, once: compaction is off, and no turn names its model.
    expect(first).toMatchObject({ stderr: offLine("anthropic") + NO_MODEL_LINE });
    expect(JSON.parse(first.stdout)).toEqual({
      conversation: "anthropic",
      turns: 2,
      created: 2,
      replayed: 0,
      evaluated_through: null,
    });
    expect(posts).toEqual([
      {
        path: "/v1/conversations/anthropic/turns",
        body: { turn: 0, format: "anthropic-messages", messages: ANTHROPIC[0] },
      },
      {
        path: "/v1/conversations/anthropic/turns",
        body: { turn: 1, format: "anthropic-messages", messages: ANTHROPIC[1] },
      },
    ]);

    expect(await get("anthropic/projection?format=anthropic-messages")).toEqual({
      status: 200,
      body: {
        format: "anthropic-messages",
        messages: ANTHROPIC.flat(),
        turns: [{ kept: 0 }, { kept: 1 }],
        // 15 + 17 (thinking) + 2 + 11 + 11 + 27 + 7 + 15 bytes, over 4.
        estimated_tokens: 26.25,
        evaluated_through: null,
        decided_through: null,
        warnings: offAndUnknown("anthropic"),
        etag: expect.stringMatching(/^"2\./),
      },
    });
    expect(await get("anthropic/events?format=anthropic-messages")).toEqual({
      status: 200,
      body: { format: "anthropic-messages", messages: ANTHROPIC.flat() },
    });

    const again = await cli("replay", file, "-c", "anthropic");
    expect(again).toMatchObject({ stderr: offLine("anthropic") + NO_MODEL_LINE });
    expect(JSON.parse(again.stdout)).toEqual({
      conversation: "anthropic",
      turns: 2,
      created: 0,
      replayed: 2,
      evaluated_through: null,
    });
    expect(posts).toHaveLength(4);
    expect((await get("anthropic/projection?format=anthropic-messages")).body).toMatchObject({
      messages: ANTHROPIC.flat(),
      turns: [{ kept: 0 }, { kept: 1 }],
    });
  });

  it("posts an OpenAI Chat transcript (call ids reused across turns) and reads it back in both formats", async () => {
    const file = join(dir, "chat.json");
    const first = await cli("replay", file, "-c", "chat", "--format", "openai-chat");
    expect(JSON.parse(first.stdout)).toEqual({
      conversation: "chat",
      turns: 3,
      created: 3,
      replayed: 0,
      evaluated_through: null,
    });
    expect(posts.map(({ body }) => body)).toEqual(
      CHAT.map((messages, turn) => ({ turn, format: "openai-chat", messages })),
    );
    expect(await get("chat/projection?format=openai-chat")).toEqual({
      status: 200,
      body: {
        format: "openai-chat",
        messages: CHAT.flat(),
        turns: [{ kept: 0 }, { kept: 1 }, { kept: 2 }],
        // 21 + 9 + 20 + 33 + 25, 12 + 9 + 18 + 3 + 19, 7 + 15 bytes, over 4.
        estimated_tokens: 191 / 4,
        evaluated_through: null,
        decided_through: null,
        warnings: offAndUnknown("chat"),
        etag: expect.stringMatching(/^"3\./),
      },
    });
    const anthropic = (await get("chat/projection?format=anthropic-messages")).body as {
      messages: unknown[];
    };
    expect(anthropic.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "tool_use", id: "call_1", name: "read_file", input: { path: "README.md" } },
      ],
    });

    const again = await cli("replay", file, "-c", "chat");
    expect(JSON.parse(again.stdout)).toMatchObject({ turns: 3, created: 0, replayed: 3 });
  });

  it("refuses a system prompt before posting, and sends --drop-system as drop_system", async () => {
    const file = join(dir, "system.json");
    const refused = await cli("replay", file, "-c", "system");
    expect(refused).toMatchObject({ code: 1, stdout: "" });
    expect(refused.stderr).toMatch(
      /^autocompact: \S+system\.json \(openai-chat transcript\), turn 0: messages\[0\]: system and developer prompts are not conversation turns[^\n]*--drop-system[^\n]*\n$/,
    );
    expect(posts).toEqual([]);
    expect((await get("system")).status).toBe(404);

    const dropped = await cli("replay", file, "-c", "system", "--drop-system");
    expect(dropped).toMatchObject({ stderr: offLine("system") + NO_MODEL_LINE });
    expect(JSON.parse(dropped.stdout)).toEqual({
      conversation: "system",
      turns: 2,
      created: 2,
      replayed: 0,
      evaluated_through: null,
    });
    expect(posts.map(({ body }) => body)).toEqual([
      { turn: 0, format: "openai-chat", messages: WITH_SYSTEM[0], drop_system: true },
      { turn: 1, format: "openai-chat", messages: WITH_SYSTEM[1], drop_system: true },
    ]);
    expect(await get("system/projection?format=openai-chat")).toEqual({
      status: 200,
      body: {
        format: "openai-chat",
        messages: WITH_SYSTEM.flatMap((turn) => turn.slice(1)),
        turns: [{ kept: 0 }, { kept: 1 }],
        estimated_tokens: 14 / 4,
        evaluated_through: null,
        decided_through: null,
        warnings: offAndUnknown("system"),
        etag: expect.stringMatching(/^"2\./),
      },
    });

    const again = await cli("replay", file, "-c", "system", "--drop-system");
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, replayed: 2 });
  });

  it("sends the model with every transcript turn", async () => {
    const file = join(dir, "anthropic.json");
    const result = await cli(
      "replay",
      file,
      "-c",
      "model",
      "--model",
      "claude-sonnet-4-5",
      "--context-window",
      "200000",
    );
    // The model's window is known: only compaction being off is said.
    expect(result).toMatchObject({ stderr: offLine("model") });
    expect(posts.map(({ body }) => body.model)).toEqual([
      { id: "claude-sonnet-4-5", context_window: 200_000 },
      { id: "claude-sonnet-4-5", context_window: 200_000 },
    ]);
    expect(posts.map(({ body }) => body.format)).toEqual([
      "anthropic-messages",
      "anthropic-messages",
    ]);
  });
});
