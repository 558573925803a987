/**
 * AutocompactClient against the real app (in-memory store, the test
 * harness): each method's request and answer, and the errors a caller sees.
 * The client's `fetch` option calls the app in process (`app.request`);
 * the dead-letter routes are the local runtime's admin handler.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { AutocompactClient, type EventInput, ServiceError } from "../../client/index.ts";
import { signWebhook } from "../../functions/api/webhooks.ts";
import { hashApiKey } from "../../functions/keys.ts";
import { localAdmin } from "../../functions/local/admin.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

const URL_BASE = "http://autocompact.test";
/** A conversation id with characters that a path must encode. */
const ID = "user:42@team";
const ENCODED = "user%3A42%40team";

const TURN_0: EventInput[] = [
  { type: "turn_start", timestamp: "2026-01-01T00:00:00.000000Z" },
  { type: "chat_request", timestamp: "2026-01-01T00:00:00.000000Z", content: "What is in README?" },
  {
    type: "tool_call_request",
    timestamp: "2026-01-01T00:00:01.000000Z",
    id: "call-1",
    name: "read_file",
    arguments: { path: "README.md" },
  },
  {
    type: "tool_call_response",
    timestamp: "2026-01-01T00:00:02.000000Z",
    id: "call-1",
    content: "# autocompact",
  },
  { type: "chat_response", timestamp: "2026-01-01T00:00:03.000000Z", message: "A title." },
];
const TURN_1: EventInput[] = [
  { type: "turn_start", timestamp: "2026-01-01T00:01:00.000000Z" },
  { type: "chat_request", timestamp: "2026-01-01T00:01:00.000000Z", content: "Thanks" },
  { type: "chat_response", timestamp: "2026-01-01T00:01:01.000000Z", message: "You are welcome." },
];

/** The two turns as stored: the tool result gets its default `is_error`. */
const STORED = [
  TURN_0[0],
  TURN_0[1],
  TURN_0[2],
  { ...TURN_0[3], is_error: false },
  TURN_0[4],
  ...TURN_1,
];

/** The manual compaction of `{"spec":"t:0..0"}`, stored at the harness clock's time. */
const STRIP_TOOLS_OF_TURN_0 = {
  position: 1,
  type: "compaction",
  timestamp: "2026-11-29T12:00:00.000000Z",
  from_turn: 0,
  to_turn: 0,
  source: "manual",
  tool_calls: { policy: "strip", request: true, response: true },
};
/** The manual compaction of a rule keeping the last turn, stored next. */
const STRIP_REASONING_OF_TURN_0 = {
  position: 2,
  type: "compaction",
  timestamp: "2026-11-29T12:00:00.000001Z",
  from_turn: 0,
  to_turn: 0,
  source: "manual",
  reasoning: "strip",
};

const DEFAULTS = {
  enabled: false,
  trigger_ratio: 0.75,
  min_turns: 5,
  rule: { keep_first: 1, keep_last: 3, reasoning: "strip", tool_calls: "strip", summary: null },
};

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

/** A client of a fresh harness's app, recording every request it sends. */
function setup(options: Parameters<typeof harness>[0] = {}, key = ALICE_KEY) {
  const h = harness(options);
  const sent: Sent[] = [];
  const client = new AutocompactClient({
    url: `${URL_BASE}/`,
    key,
    fetch: async (input, init) => {
      sent.push({
        method: init.method ?? "GET",
        url: input,
        headers: init.headers as Record<string, string>,
        body: init.body as string | undefined,
      });
      return h.app.request(input, init);
    },
  });
  return { h, client, sent };
}

/** A client with two turns of {@link ID} stored. */
async function withTwoTurns() {
  const setUp = setup();
  await setUp.client.postTurn(ID, { turn: 0, events: TURN_0 });
  await setUp.client.postTurn(ID, { turn: 1, events: TURN_1 });
  setUp.sent.length = 0;
  return setUp;
}

/** A local port that nothing listens on (one just released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What `run` rejects with, which must be a {@link ServiceError}. */
async function failure(run: () => Promise<unknown>): Promise<ServiceError> {
  const error = await run().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe("AutocompactClient", () => {
  it("postTurn stores a turn (created), then answers an identical one as replayed", async () => {
    const { client, sent } = setup();
    expect(await client.postTurn(ID, { turn: 0, events: TURN_0 })).toEqual({
      status: "created",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
    });
    expect(await client.postTurn(ID, { turn: 0, events: TURN_0 })).toEqual({
      status: "replayed",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
    });
    expect(sent[0]).toEqual({
      method: "POST",
      url: `${URL_BASE}/v1/conversations/${ENCODED}/turns`,
      headers: { authorization: `Bearer ${ALICE_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ turn: 0, events: TURN_0 }),
    });
  });

  it("postTurn sends the headers `sign` computes from the exact body text", async () => {
    const secret = `whsec_${Buffer.from("a signing key of the client test").toString("base64")}`;
    const { client, sent } = setup(
      {
        tenants: [
          { id: "signed", key_hashes: [hashApiKey("ak_signed")], webhook_secrets: [secret] },
        ],
      },
      "ak_signed",
    );
    const now = Date.UTC(2026, 10, 29, 12) / 1000; // the harness clock
    const signed: string[] = [];
    const outcome = await client.postTurn(
      "conv-1",
      { turn: 0, model: { id: "gpt-4o", context_window: 128000 }, events: TURN_0 },
      {
        sign: (text) => {
          signed.push(text);
          return {
            "webhook-id": "msg_1",
            "webhook-timestamp": String(now),
            "webhook-signature": signWebhook(secret, "msg_1", now, text),
          };
        },
      },
    );
    expect(outcome).toEqual({
      status: "created",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
    });
    expect(signed).toEqual([sent[0]?.body]);
    expect(sent[0]?.headers["webhook-id"]).toBe("msg_1");
    const unsigned = await failure(() => client.postTurn("conv-2", { turn: 0, events: TURN_0 }));
    expect(unsigned).toMatchObject({
      status: 401,
      problem: { type: "/problems/invalid-signature" },
    });
  });

  it("conversation answers the summary", async () => {
    const { client, sent } = await withTwoTurns();
    expect(await client.conversation(ID)).toEqual({
      turn_count: 2,
      evaluated_through: null,
      estimated_tokens: 22.5,
      compactions: [],
    });
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
      `GET ${URL_BASE}/v1/conversations/${ENCODED}`,
    ]);
    expect(sent[0]?.headers).toEqual({ authorization: `Bearer ${ALICE_KEY}` });
  });

  it("events answers the raw stream, compactions included", async () => {
    const { client, sent } = await withTwoTurns();
    expect(await client.events(ID)).toEqual({ events: STORED });
    await client.compact(ID, { spec: "t:0..0" });
    const { events } = await client.events(ID, { format: "jp" });
    expect(events.at(-1)).toEqual({ ...STRIP_TOOLS_OF_TURN_0, position: undefined });
    expect(sent.map((s) => s.url)).toEqual([
      `${URL_BASE}/v1/conversations/${ENCODED}/events`,
      `${URL_BASE}/v1/conversations/${ENCODED}/compactions`,
      `${URL_BASE}/v1/conversations/${ENCODED}/events`,
    ]);
  });

  it("projection answers the compacted view and each turn's origin", async () => {
    const { client } = await withTwoTurns();
    expect(await client.projection(ID)).toEqual({
      events: STORED,
      turns: [{ kept: 0 }, { kept: 1 }],
      estimated_tokens: 22.5,
    });
    await client.compact(ID, { spec: "t:0..0" });
    const compacted = await client.projection(ID);
    expect(compacted.events.slice(2, 4)).toEqual([
      { ...TURN_0[2], arguments: {} },
      { ...TURN_0[3], content: "[compacted] read_file: success", is_error: false },
    ]);
    expect(compacted.estimated_tokens).toBe(22.25);
  });

  it("compact adds a manual compaction from a spec or a rule; compactions lists them", async () => {
    const { client, sent } = await withTwoTurns();
    expect(await client.compact(ID, { spec: "t:0..0" })).toEqual(STRIP_TOOLS_OF_TURN_0);
    expect(
      await client.compact(ID, { rule: { reasoning: "strip", keep_first: 0, keep_last: 1 } }),
    ).toEqual(STRIP_REASONING_OF_TURN_0);
    expect(await client.compactions(ID)).toEqual({
      compactions: [STRIP_TOOLS_OF_TURN_0, STRIP_REASONING_OF_TURN_0],
    });
    expect(sent[0]).toMatchObject({
      method: "POST",
      url: `${URL_BASE}/v1/conversations/${ENCODED}/compactions`,
      body: '{"spec":"t:0..0"}',
    });
    expect((await client.conversation(ID)).compactions).toEqual([
      STRIP_TOOLS_OF_TURN_0,
      STRIP_REASONING_OF_TURN_0,
    ]);
  });

  it("reset removes one compaction by position, those of a source, or all of them", async () => {
    const { client, sent } = await withTwoTurns();
    await client.compact(ID, { spec: "t:0..0" });
    await client.compact(ID, { rule: { reasoning: "strip", keep_first: 0, keep_last: 1 } });
    expect(await client.reset(ID, { position: 2 })).toEqual({
      removed: [STRIP_REASONING_OF_TURN_0],
    });
    expect(await client.reset(ID, { source: "auto" })).toEqual({ removed: [] });
    expect(await client.reset(ID, { source: "manual" })).toEqual({
      removed: [STRIP_TOOLS_OF_TURN_0],
    });
    await client.compact(ID, { spec: "t:0..0" });
    expect(await client.reset(ID)).toEqual({ removed: [STRIP_TOOLS_OF_TURN_0] });
    expect(sent.filter((s) => s.method === "DELETE").map((s) => s.url)).toEqual([
      `${URL_BASE}/v1/conversations/${ENCODED}/compactions/2`,
      `${URL_BASE}/v1/conversations/${ENCODED}/compactions?source=auto`,
      `${URL_BASE}/v1/conversations/${ENCODED}/compactions?source=manual`,
      `${URL_BASE}/v1/conversations/${ENCODED}/compactions`,
    ]);
  });

  it("getConfig and putConfig answer the conversation's layer and the effective config", async () => {
    const { client } = await withTwoTurns();
    expect(await client.getConfig(ID)).toEqual({
      conversation: { compaction: { auto: {} } },
      effective: DEFAULTS,
    });
    const tree = { conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.5 } } } };
    const expected = { ...tree, effective: { ...DEFAULTS, enabled: true, trigger_ratio: 0.5 } };
    expect(await client.putConfig(ID, tree)).toEqual(expected);
    expect(await client.getConfig(ID)).toEqual(expected);
  });

  it("verify answers the drift found, and repairs with repair: true", async () => {
    const { client, sent } = await withTwoTurns();
    expect(await client.verify(ID)).toEqual({ drift: [], repaired: false });
    expect(await client.verify(ID, { repair: true })).toEqual({ drift: [], repaired: false });
    expect(sent.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      `POST ${URL_BASE}/v1/conversations/${ENCODED}/verify undefined`,
      `POST ${URL_BASE}/v1/conversations/${ENCODED}/verify?repair=true undefined`,
    ]);
  });

  it("deleteConversation removes it (idempotent); it is then not found", async () => {
    const { client } = await withTwoTurns();
    expect(await client.deleteConversation(ID)).toBeUndefined();
    expect(await client.deleteConversation(ID)).toBeUndefined();
    expect((await failure(() => client.conversation(ID))).status).toBe(404);
  });

  it("health answers the liveness route", async () => {
    const { client, sent } = setup();
    expect(await client.health()).toEqual({ ok: true });
    expect(sent.map((s) => s.url)).toEqual([`${URL_BASE}/healthz`]);
  });

  it("openApi answers the API's document", async () => {
    const { client } = setup();
    expect(await client.openApi()).toMatchObject({
      openapi: "3.1.0",
      paths: { "/v1/conversations/{id}/turns": { post: { operationId: "appendTurn" } } },
    });
  });

  it("deadLetters and redriveDeadLetters ask the local runtime's admin routes", async () => {
    const moved: string[] = [];
    const admin = localAdmin({
      devKey: "dev-key",
      queue: {
        deadLetters: () => [
          {
            id: "m-1",
            body: '{"tenant":"alice","conversation":"conv-1","turn":3}',
            group_id: "g",
            deduplication_id: "d",
            sequence: 0,
            sent_at: Date.UTC(2026, 10, 29, 12),
            receive_count: 5,
            dead_lettered_at: Date.UTC(2026, 10, 29, 12, 1),
          },
        ],
        redrive: async () => {
          moved.push("m-1");
          return 1;
        },
      },
      store: {
        lastFailure: async () => ({
          turn: 3,
          error: "SummaryTimeoutError",
          message: "the summarizer did not answer within 30000 ms",
          at: "2026-11-29T12:00:30.000Z",
        }),
      },
    });
    const local = (key: string) =>
      new AutocompactClient({
        url: "http://127.0.0.1:8787",
        key,
        fetch: async (input, init) => {
          const answer = admin(new Request(input, init));
          if (!answer) throw new Error(`not an admin route: ${input}`);
          return answer;
        },
      });
    expect(await local("dev-key").deadLetters()).toEqual({
      dead_letters: [
        {
          message_id: "m-1",
          receive_count: 5,
          sent_at: "2026-11-29T12:00:00.000Z",
          tenant: "alice",
          conversation: "conv-1",
          turn: 3,
          last_failure: {
            turn: 3,
            error: "SummaryTimeoutError",
            message: "the summarizer did not answer within 30000 ms",
            at: "2026-11-29T12:00:30.000Z",
          },
        },
      ],
    });
    expect(await local("dev-key").redriveDeadLetters()).toEqual({ moved: 1 });
    expect(moved).toEqual(["m-1"]);
    const refused = await failure(() => local("tenant-key").redriveDeadLetters());
    expect(refused.status).toBe(401);
    expect(refused.message).toBe(
      "POST /local/dead-letters/redrive: 401 the local admin routes take the dev key (AUTOCOMPACT_DEV_KEY) as a bearer token",
    );
  });
});

describe("AutocompactClient in a provider format (the request it sends)", () => {
  /** A client whose fetch records the request and answers `answer`. */
  function stub(answer: unknown) {
    const sent: { url: string; body: unknown }[] = [];
    const client = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: async (input, init) => {
        sent.push({
          url: input,
          body: init.body === undefined ? undefined : JSON.parse(String(init.body)),
        });
        return Response.json(answer);
      },
    });
    return { client, sent };
  }

  it("posts the messages as given, with format, drop_system and timestamp", async () => {
    const { client, sent } = stub({
      status: "created",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
      dropped_system: 1,
    });
    const body = {
      turn: 0,
      format: "openai-chat" as const,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
        { role: "assistant", content: "Hi." },
      ],
      drop_system: true,
      timestamp: "2026-11-29T12:00:00Z",
    };
    expect((await client.postTurn(ID, body)).dropped_system).toBe(1);
    expect(sent).toEqual([{ url: `${URL_BASE}/v1/conversations/${ENCODED}/turns`, body }]);
  });

  it("reads the projection and the events with ?format=", async () => {
    const { client, sent } = stub({
      format: "anthropic-messages",
      messages: [{ role: "user", content: "Hello" }],
      turns: [{ kept: 0 }],
      estimated_tokens: 1.25,
    });
    const projection = await client.projection<{ role: string; content: string }>(ID, {
      format: "anthropic-messages",
    });
    expect(projection.messages[0]?.role).toBe("user");
    await client.events(ID, { format: "openai-chat" });
    expect(sent.map((s) => s.url)).toEqual([
      `${URL_BASE}/v1/conversations/${ENCODED}/projection?format=anthropic-messages`,
      `${URL_BASE}/v1/conversations/${ENCODED}/events?format=openai-chat`,
    ]);
  });
});

describe("AutocompactClient errors", () => {
  it("a 404 carries the problem, and its detail in the message", async () => {
    const { client } = setup();
    const error = await failure(() => client.projection("nobody"));
    expect(error.status).toBe(404);
    expect(error.problem).toEqual({
      type: "/problems/not-found",
      title: "Conversation not found",
      status: 404,
      detail: 'no conversation "nobody"',
    });
    expect(error.message).toBe(
      'GET /v1/conversations/nobody/projection: 404 no conversation "nobody"',
    );
  });

  it("a 409 carries expected_turn, the turn to post next", async () => {
    const { client } = await withTwoTurns();
    const error = await failure(() => client.postTurn(ID, { turn: 3, events: TURN_1 }));
    expect(error.status).toBe(409);
    expect(error.problem).toEqual({
      type: "/problems/turn-conflict",
      title: "Turn conflict",
      status: 409,
      detail: "turn 3 would leave a gap: the conversation has 2 turn(s), so the next turn is 2",
      expected_turn: 2,
    });
    expect(error.message).toContain("so the next turn is 2");
  });

  it("a 400 carries each located problem in errors", async () => {
    const { client } = setup();
    const error = await failure(() =>
      client.postTurn("conv-1", {
        turn: 0,
        events: [
          { type: "turn_start", timestamp: "2026-01-01T00:00:00Z" },
          { type: "chat_request", timestamp: "2026-01-01T00:00:00Z" },
        ],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.problem?.errors).toEqual([
      {
        pointer: "/events/1/content",
        detail: "Invalid input: expected string, received undefined",
      },
    ]);
  });

  it("an unknown key is a 401", async () => {
    const { client } = setup({}, "ak_nobody");
    const error = await failure(() => client.conversation("conv-1"));
    expect(error).toMatchObject({
      status: 401,
      message: "GET /v1/conversations/conv-1: 401 unknown API key",
    });
  });

  it("an unreachable service is status 0, asking whether it runs", async () => {
    const port = await closedPort();
    const client = new AutocompactClient({ url: `http://127.0.0.1:${port}`, key: ALICE_KEY });
    const error = await failure(() => client.health());
    expect(error.status).toBe(0);
    expect(error.problem).toBeUndefined();
    expect(error.message).toBe(
      `cannot reach http://127.0.0.1:${port} (ECONNREFUSED): is the service running (npm start)?`,
    );
  });

  it("an answer that is not a problem keeps its status; the gateway's message is the detail", async () => {
    const answering = (response: Response) =>
      new AutocompactClient({ url: URL_BASE, key: ALICE_KEY, fetch: async () => response });
    const html = await failure(() =>
      answering(new Response("<html>Bad Gateway</html>", { status: 502 })).health(),
    );
    expect(html).toMatchObject({ status: 502, message: "GET /healthz: 502 with a non-JSON body" });
    expect(html.problem).toBeUndefined();
    const throttled = await failure(() =>
      answering(Response.json({ message: "Too Many Requests" }, { status: 429 })).health(),
    );
    expect(throttled).toMatchObject({
      status: 429,
      message: "GET /healthz: 429 Too Many Requests",
    });
    expect(throttled.problem).toBeUndefined();
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => new AutocompactClient({ url: "127.0.0.1:8787", key: ALICE_KEY })).toThrow(
      'the service URL must start with http:// or https:// (got "127.0.0.1:8787")',
    );
  });
});
