/**
 * AutocompactClient against the real app (in-memory store, the test
 * harness): each method's request and answer, and the errors a caller sees.
 * The client's `fetch` option calls the app in process (`app.request`);
 * the dead-letter routes are the local runtime's admin handler.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  AutocompactClient,
  type EventInput,
  isEvaluationPending,
  isRateLimited,
  RequestTimeoutError,
  ServiceError,
} from "../../client/index.ts";
import { hashApiKey } from "../../functions/keys.ts";
import { localAdmin } from "../../functions/local/admin.ts";
import { AWS_URL_POLICY } from "../../functions/notifications/url-safety.ts";
import { MemoryNotificationEndpoints } from "../../functions/store/tenants-memory.ts";
import { signWebhook } from "../../functions/webhook-signature.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";
import { offAndUnknown, offWarning } from "../helpers/warnings.ts";

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
  estimator: "auto",
  reserve_tokens: 0,
  min_gain_tokens: 0,
  min_band_turns: 1,
  when: "turn",
  idle_seconds: 300,
  hard_ratio: 0.95,
};

/** The warnings of {@link ID} here: automatic compaction off (the default), and no model named. */
const OFF = offWarning(ENCODED);
const WARNINGS = offAndUnknown(ENCODED);

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
      evaluated_through: null,
      decided_through: null,
      warnings: WARNINGS,
    });
    expect(await client.postTurn(ID, { turn: 0, events: TURN_0 })).toEqual({
      status: "replayed",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
      evaluated_through: null,
      decided_through: null,
      warnings: WARNINGS,
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
      evaluated_through: null,
      decided_through: null,
      // The model's window is known (the catalog's and the post's): only compaction is off.
      warnings: [{ ...OFF, detail: OFF.detail.replace(ENCODED, "conv-1") }],
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
      decided_through: null,
      estimated_tokens: 22.5,
      estimator: { kind: "chars", tokens_per_char: 0.25, overhead_tokens: 0, turns_with_usage: 0 },
      compactions: [],
      warnings: WARNINGS,
    });
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
      `GET ${URL_BASE}/v1/conversations/${ENCODED}`,
    ]);
    expect(sent[0]?.headers).toEqual({ authorization: `Bearer ${ALICE_KEY}` });
  });

  it("onWarning hears each warning of a post, a summary and a projection, with the conversation", async () => {
    const h = harness();
    const heard: string[] = [];
    const client = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: async (input, init) => h.app.request(input, init),
      onWarning: (warning, conversation) => heard.push(`${conversation} ${warning.code}`),
    });
    await client.postTurn(ID, { turn: 0, events: TURN_0 });
    expect(heard).toEqual([`${ID} auto_disabled`, `${ID} context_window_unknown`]);
    heard.length = 0;
    const window = { context_window: 128_000 };
    const answer = await client.postTurn("conv-2", { turn: 0, model: window, events: TURN_0 });
    expect(answer.warnings).toEqual([{ ...OFF, detail: OFF.detail.replace(ENCODED, "conv-2") }]);
    await client.conversation("conv-2");
    await client.projection("conv-2", { format: "openai-chat" });
    expect(heard).toEqual(["conv-2 auto_disabled", "conv-2 auto_disabled", "conv-2 auto_disabled"]);
    // Enabled, the window known and the view small: nothing to hear.
    heard.length = 0;
    await client.putConfig("conv-2", { conversation: { compaction: { auto: { enabled: true } } } });
    expect((await client.conversation("conv-2")).warnings).toEqual([]);
    await client.listConversations();
    expect(heard).toEqual([]);
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
      evaluated_through: null,
      decided_through: null,
      warnings: WARNINGS,
      etag: expect.stringMatching(/^"2\.0\./),
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

  it("previewCompaction answers the compaction compact would add, and writes nothing", async () => {
    const { client, sent } = await withTwoTurns();
    expect(await client.previewCompaction(ID, { spec: "t:0..0" })).toEqual({
      compaction: STRIP_TOOLS_OF_TURN_0,
      estimated_tokens_before: 22.5,
      estimated_tokens_after: 22.25,
    });
    expect(sent).toEqual([
      {
        method: "POST",
        url: `${URL_BASE}/v1/conversations/${ENCODED}/compactions?dry_run=true`,
        headers: { authorization: `Bearer ${ALICE_KEY}`, "content-type": "application/json" },
        body: '{"spec":"t:0..0"}',
      },
    ]);
    expect(await client.compactions(ID)).toEqual({ compactions: [] });
    expect(await client.compact(ID, { spec: "t:0..0" })).toEqual(STRIP_TOOLS_OF_TURN_0);
  });

  it("listConversations answers the tenant's conversations a page at a time, most recently active first", async () => {
    const { h, client, sent } = await withTwoTurns();
    h.clock.now += 1000;
    await client.postTurn("conv-2", { turn: 0, events: TURN_1 });
    sent.length = 0;
    const first = await client.listConversations({ limit: 1 });
    expect(first.conversations.map((c) => c.id)).toEqual(["conv-2"]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await client.listConversations({ limit: 1, cursor: first.next_cursor ?? "" });
    expect(second).toEqual({
      conversations: [
        {
          id: ID,
          turn_count: 2,
          estimated_tokens: 22.5,
          context_window: null,
          utilization: null,
          bands: { auto: 0, manual: 0 },
          last_fired_at: null,
          warnings: WARNINGS,
        },
      ],
      next_cursor: null,
    });
    expect((await client.listConversations()).conversations.map((c) => c.id)).toEqual([
      "conv-2",
      ID,
    ]);
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
      `GET ${URL_BASE}/v1/conversations?limit=1`,
      `GET ${URL_BASE}/v1/conversations?limit=1&cursor=${encodeURIComponent(first.next_cursor ?? "")}`,
      `GET ${URL_BASE}/v1/conversations`,
    ]);
  });

  it("timeline answers each stored turn's sizes and what the evaluation after it did", async () => {
    const { h, client, sent } = await withTwoTurns();
    for (const message of h.queue.take()) await h.evaluate(message);
    expect(await client.timeline(ID)).toEqual({
      turns: [
        // Its evaluation ran after turn 1 was stored: skipped as stale, so nothing is known.
        {
          turn: 0,
          raw_tokens: 17,
          projected_tokens: null,
          threshold: null,
          fired: null,
          skip_reason: null,
        },
        {
          turn: 1,
          raw_tokens: 22.5,
          projected_tokens: 22.5,
          threshold: null,
          fired: null,
          skip_reason: "disabled",
        },
      ],
    });
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
      `GET ${URL_BASE}/v1/conversations/${ENCODED}/timeline`,
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

  it("putNotifications, getNotifications and deleteNotifications manage the tenant's endpoint", async () => {
    const { client, sent } = setup({
      notifications: {
        endpoints: new MemoryNotificationEndpoints(),
        policy: AWS_URL_POLICY,
        resolve: async () => [{ address: "93.184.215.14", family: 4 }],
      },
    });
    const request = {
      url: "https://hooks.example.com/autocompact",
      events: ["compaction.fired" as const],
    };
    const registered = await client.putNotifications(request);
    expect(registered).toEqual({ ...request, secret: expect.stringMatching(/^whsec_/) });
    expect(await client.getNotifications()).toEqual(request);
    expect(await client.deleteNotifications()).toBeUndefined();
    expect(await client.deleteNotifications()).toBeUndefined();
    expect((await failure(() => client.getNotifications())).status).toBe(404);
    expect(sent.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      `PUT ${URL_BASE}/v1/notifications ${JSON.stringify(request)}`,
      `GET ${URL_BASE}/v1/notifications undefined`,
      `DELETE ${URL_BASE}/v1/notifications undefined`,
      `DELETE ${URL_BASE}/v1/notifications undefined`,
      `GET ${URL_BASE}/v1/notifications undefined`,
    ]);
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

describe("AutocompactClient reading as evaluated after a turn (afterTurn, wait)", () => {
  /** Fires from two turns on once the view passes 20 tokens: turn 1 of {@link TURN_0}/{@link TURN_1} does. */
  const FIRING = {
    conversation: {
      compaction: {
        auto: {
          enabled: true,
          trigger_ratio: 0.5,
          min_turns: 1,
          rule: { keep_first: 0, keep_last: 1, tool_calls: "strip" as const },
        },
      },
    },
  };
  const MODEL = { context_window: 40 };
  const TURN_2: EventInput[] = TURN_1.map((event) => ({
    ...event,
    timestamp: event.timestamp?.replace("T00:01:", "T00:02:"),
  }));
  const SUMMARY = `/v1/conversations/${ENCODED}`;
  const PROJECTION = `${SUMMARY}/projection`;

  /**
   * A client of a fresh harness, the service and the client pausing on one
   * virtual clock (the harness's): each pause moves it by its length and is
   * recorded, then `during` runs (an evaluation landing meanwhile, say).
   * `sent` has each request's method, path and query, and when it was sent
   * (seconds from the start).
   */
  function virtualTime() {
    const start = Date.UTC(2026, 10, 29, 12);
    const pauses: string[] = [];
    const sent: string[] = [];
    let during: ((pause: number) => Promise<void>) | undefined;
    const pause = (who: string) => async (ms: number) => {
      pauses.push(`${who} ${ms}`);
      h.clock.now += ms;
      await during?.(pauses.length);
    };
    const h = harness({ sleep: pause("service") });
    const client = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: async (input, init) => {
        const at = (h.clock.now - start) / 1000;
        sent.push(`${init.method ?? "GET"} ${input.slice(URL_BASE.length)} @${at}`);
        return h.app.request(input, init);
      },
      sleep: pause("client"),
      now: () => h.clock.now,
    });
    /** Runs `run` during each pause from now on, with the count of pauses so far. */
    const onPause = (run: (pause: number) => Promise<void>) => {
      during = run;
    };
    /** Evaluates every queued turn. */
    const deliver = async () => {
      for (const message of h.queue.take()) await h.evaluate(message);
    };
    /** Turns 0 (evaluated) and 1 (not yet) of {@link ID}, auto compaction on; `sent` emptied. */
    const twoTurns = async () => {
      await client.putConfig(ID, FIRING);
      await client.postTurn(ID, { turn: 0, model: MODEL, events: TURN_0 });
      await deliver();
      await client.postTurn(ID, { turn: 1, model: MODEL, events: TURN_1 });
      sent.length = 0;
    };
    return { h, client, sent, pauses, onPause, deliver, twoTurns };
  }

  it("a read waits on the service until the turn's evaluation lands, then answers the view", async () => {
    const { client, sent, pauses, onPause, deliver, twoTurns } = virtualTime();
    await twoTurns();
    onPause(async (pause) => {
      if (pause === 3) await deliver();
    });
    const view = await client.projection(ID, { afterTurn: 1 });
    // Turn 1's evaluation fired (22.5 tokens over 20): turn 0's tool call is stripped.
    expect(view).toMatchObject({ evaluated_through: 1, decided_through: 1 });
    expect(view.events.slice(2, 4)).toEqual([
      { ...TURN_0[2], arguments: {} },
      { ...TURN_0[3], content: "[compacted] read_file: success", is_error: false },
    ]);
    // One request, waiting up to 25 s; the service read the head again after each pause.
    expect(sent).toEqual([`GET ${PROJECTION}?after_turn=1&wait=25 @0`]);
    expect(pauses).toEqual(["service 50", "service 100", "service 200"]);
    // Once decided, a read answers at once.
    sent.length = 0;
    expect(await client.conversation(ID, { afterTurn: 1 })).toMatchObject({
      turn_count: 2,
      decided_through: 1,
      compactions: [{ source: "auto", from_turn: 0, to_turn: 0 }],
    });
    expect(sent).toEqual([`GET ${SUMMARY}?after_turn=1&wait=25 @0.35`]);
  });

  it("a read whose wait runs out throws the 503 evaluation-pending, which the guard tells apart", async () => {
    const { client, sent, pauses, twoTurns } = virtualTime();
    await twoTurns();
    const error = await failure(() => client.conversation(ID, { afterTurn: 1, deadlineMs: 2_000 }));
    expect(error.status).toBe(503);
    expect(error.problem).toEqual({
      type: "/problems/evaluation-pending",
      title: "The evaluation of that turn has not finished",
      status: 503,
      detail:
        "no evaluation has decided on turn 1 yet (decided through 0, after 2 s): retry, or wait longer (wait=S, at most 25)",
      after_turn: 1,
      evaluated_through: 0,
      decided_through: 0,
    });
    expect(isEvaluationPending(error)).toBe(true);
    if (!isEvaluationPending(error)) throw error;
    // Typed: the problem's fields need no cast.
    const { after_turn, evaluated_through, decided_through } = error.problem;
    expect([after_turn, evaluated_through, decided_through]).toEqual([1, 0, 0]);
    // The deadline was spent waiting on the service: no retry.
    expect(sent).toEqual([`GET ${SUMMARY}?after_turn=1&wait=2 @0`]);
    expect(pauses.filter((p) => p.startsWith("client"))).toEqual([]);

    const notFound = await failure(() => client.projection("nobody"));
    for (const other of [
      notFound,
      new ServiceError("busy", 503, {
        type: "/problems/contention",
        title: "Busy",
        status: 503,
        detail: "busy",
      }),
      new ServiceError("down", 503),
      new Error("evaluation-pending"),
      undefined,
    ]) {
      expect(isEvaluationPending(other)).toBe(false);
    }
  });

  it("retries after Retry-After until the deadline, then throws the last error", async () => {
    const { client, sent, pauses, twoTurns } = virtualTime();
    await twoTurns();
    const error = await failure(() => client.projection(ID, { afterTurn: 1 }));
    // 30 s in all: 25 s on the service, 1 s (Retry-After), the 4 s left on the service.
    expect(sent).toEqual([
      `GET ${PROJECTION}?after_turn=1&wait=25 @0`,
      `GET ${PROJECTION}?after_turn=1&wait=4 @26`,
    ]);
    expect(pauses.filter((p) => p.startsWith("client"))).toEqual(["client 1000"]);
    const waited = pauses.filter((p) => p.startsWith("service"));
    expect(waited.reduce((sum, p) => sum + Number(p.split(" ")[1]), 0)).toBe(29_000);
    expect(isEvaluationPending(error)).toBe(true);
    expect(error.problem?.detail).toContain("(decided through 0, after 4 s)");
  });

  it("a retry answers once the evaluation lands between requests; wait caps each request", async () => {
    const { client, sent, pauses, onPause, deliver, twoTurns } = virtualTime();
    await twoTurns();
    onPause(async () => {
      if (pauses.at(-1)?.startsWith("client")) await deliver();
    });
    const view = await client.projection<{ role: string; content: unknown }>(ID, {
      format: "openai-chat",
      afterTurn: 1,
      wait: 2.25,
      deadlineMs: 10_000,
    });
    expect(view).toMatchObject({ format: "openai-chat", evaluated_through: 1, decided_through: 1 });
    expect(view.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "[compacted] read_file: success",
    ]);
    expect(sent).toEqual([
      `GET ${PROJECTION}?format=openai-chat&after_turn=1&wait=2.2 @0`,
      `GET ${PROJECTION}?format=openai-chat&after_turn=1&wait=2.2 @3.2`,
    ]);
  });

  it("refuses wait without afterTurn before sending; a turn not stored is a 400, not retried", async () => {
    const { client, sent, twoTurns } = virtualTime();
    await twoTurns();
    await expect(client.conversation(ID, { wait: 5 })).rejects.toThrow(
      new TypeError("wait and deadlineMs need afterTurn: the turn whose evaluation to wait for"),
    );
    await expect(client.projection(ID, { deadlineMs: 5_000 })).rejects.toThrow(TypeError);
    expect(sent).toEqual([]);
    const error = await failure(() => client.projection(ID, { afterTurn: 2 }));
    expect(error.status).toBe(400);
    expect(error.problem?.detail).toBe(
      "after_turn 2 is not stored yet: the conversation has 2 turn(s), so after_turn can be at most 1",
    );
    expect(sent).toEqual([`GET ${PROJECTION}?after_turn=2&wait=25 @0`]);
  });

  it("postTurn with wait answers once the turn is evaluated, with the band it fired", async () => {
    const { client, sent, onPause, deliver } = virtualTime();
    await client.putConfig(ID, FIRING);
    await client.postTurn(ID, { turn: 0, model: MODEL, events: TURN_0 });
    await deliver();
    onPause(deliver);
    sent.length = 0;
    expect(
      await client.postTurn(ID, { turn: 1, model: MODEL, events: TURN_1 }, { wait: 5 }),
    ).toEqual({
      status: "created",
      turn: 1,
      turn_count: 2,
      evaluation_enqueued: true,
      evaluated_through: 1,
      decided_through: 1,
      decision: {
        turn: 1,
        outcome: "fired",
        band: { key: "AUTO#000001", from_turn: 0, to_turn: 0 },
      },
      // The kept turn alone is over the threshold of 20: the band cannot bring the view under it.
      warnings: [
        {
          code: "still_over_threshold",
          detail:
            "the last automatic band left the view at 23 tokens (estimate 23 plus reserve 0), over the threshold of 20 (trigger_ratio 0.5 of the window): the rule keeps too much; lower `rule.keep_last`, strip or summarize more",
        },
      ],
    });
    expect(sent).toEqual([`POST ${SUMMARY}/turns?wait=5 @0`]);
  });

  it("postTurn with wait answers the newer turn's decision when its own evaluation was stale", async () => {
    const { h, client, onPause, deliver } = virtualTime();
    await client.putConfig(ID, FIRING);
    await client.postTurn(ID, { turn: 0, model: MODEL, events: TURN_0 });
    await deliver();
    const evaluated: unknown[] = [];
    // While turn 1's post waits, turn 2 arrives; then turn 1's evaluation runs (stale), and turn 2's.
    onPause(async (pause) => {
      if (pause !== 1) return;
      await client.postTurn(ID, { turn: 2, model: MODEL, events: TURN_2 });
      for (const message of h.queue.take()) evaluated.push(await h.evaluate(message));
    });
    const outcome = await client.postTurn(
      ID,
      { turn: 1, model: MODEL, events: TURN_1 },
      { wait: 5 },
    );
    expect(evaluated).toMatchObject([
      { outcome: "skipped", reason: "stale" },
      { outcome: "fired", band: { compaction: { trigger: { turn: 2 } } } },
    ]);
    expect(outcome).toEqual({
      status: "created",
      turn: 1,
      turn_count: 2,
      evaluation_enqueued: true,
      evaluated_through: 2,
      decided_through: 2,
      decision: {
        turn: 2,
        outcome: "fired",
        band: { key: "AUTO#000002", from_turn: 0, to_turn: 1 },
      },
      warnings: [
        {
          code: "still_over_threshold",
          detail:
            "the last automatic band left the view at 28 tokens (estimate 28 plus reserve 0), over the threshold of 20 (trigger_ratio 0.5 of the window): the rule keeps too much; lower `rule.keep_last`, strip or summarize more",
        },
      ],
    });
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

  it("a service that never answers is a RequestTimeoutError after the client's timeout", async () => {
    // Takes the request, never answers: the client's timeout alone ends the wait.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const client = new AutocompactClient({
        url: `http://127.0.0.1:${port}`,
        key: ALICE_KEY,
        timeoutMs: 50,
      });
      const error = await failure(() => client.compact("c1", { spec: "t:0..1" }));
      expect(error).toBeInstanceOf(RequestTimeoutError);
      expect(error).toMatchObject({ status: 0, timeoutMs: 50 });
      expect(error.message).toBe(
        `POST /v1/conversations/c1/compactions: no answer from http://127.0.0.1:${port} within 0.05 s (the client's timeout)`,
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a request's wait is added to its timeout; the caller's signal aborts with its own reason", async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const hanging = (_input: string, init: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        seen.push(init.signal ?? undefined);
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const timing = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: hanging,
      timeoutMs: 20,
    });
    const waited = await failure(() =>
      timing.postTurn("c1", { turn: 0, events: TURN_0 }, { wait: 0.03 }),
    );
    expect(waited).toMatchObject({ name: "RequestTimeoutError", timeoutMs: 50 });

    const controller = new AbortController();
    const aborting = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: hanging,
      signal: controller.signal,
    });
    const pending = aborting.health().catch((error: unknown) => error);
    controller.abort(new Error("the caller gave up"));
    expect(await pending).toEqual(new Error("the caller gave up"));
    expect(seen.every((signal) => signal instanceof AbortSignal)).toBe(true);
  });

  it("compact with idempotencyKey sends Idempotency-Key: a retry answers the first band", async () => {
    const { client } = await withTwoTurns();
    const first = await client.compact(ID, { spec: "t:0..0" }, { idempotencyKey: "once-1" });
    const again = await client.compact(ID, { spec: "t:0..0" }, { idempotencyKey: "once-1" });
    expect(again).toEqual(first);
    expect((await client.compactions(ID)).compactions).toHaveLength(1);
    const reused = await failure(() =>
      client.compact(ID, { spec: "t:1..1" }, { idempotencyKey: "once-1" }),
    );
    expect(reused).toMatchObject({
      status: 409,
      problem: { type: "/problems/idempotency-key-reused" },
    });
  });

  it("refuses a timeout that is not a positive number of milliseconds", () => {
    expect(() => new AutocompactClient({ url: URL_BASE, key: ALICE_KEY, timeoutMs: 0 })).toThrow(
      "timeoutMs must be from 1 to 2147483647 (got 0)",
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

describe("429s of the tenant's limits", () => {
  const problem = (type: string, extra: Record<string, unknown>) =>
    new Response(JSON.stringify({ type, title: "t", status: 429, detail: "d", ...extra }), {
      status: 429,
      headers: { "content-type": "application/problem+json", "retry-after": "2" },
    });

  it("a read with afterTurn asks again after Retry-After when refused as rate-limited; others throw", async () => {
    const sent: string[] = [];
    const pauses: number[] = [];
    let now = 0;
    const answers = [
      problem("/problems/rate-limited", { limit: "waiting_reads", retry_after: 2 }),
      new Response(JSON.stringify({ turn_count: 2, decided_through: 1 }), { status: 200 }),
      problem("/problems/rate-limited", { limit: "requests_per_second", retry_after: 2 }),
      problem("/problems/summary-budget", {
        summary_tokens_per_day: 10,
        summary_tokens_used: 10,
        resets_at: "2026-12-03T00:00:00.000Z",
      }),
    ];
    const client = new AutocompactClient({
      url: URL_BASE,
      key: ALICE_KEY,
      fetch: async (input) => {
        sent.push(input.slice(URL_BASE.length));
        return answers.shift() as Response;
      },
      sleep: async (ms) => {
        pauses.push(ms);
        now += ms;
      },
      now: () => now,
    });
    expect(await client.conversation("c", { afterTurn: 1 })).toEqual({
      turn_count: 2,
      decided_through: 1,
    });
    expect(sent).toEqual([
      "/v1/conversations/c?after_turn=1&wait=25",
      "/v1/conversations/c?after_turn=1&wait=25",
    ]);
    expect(pauses).toEqual([2_000]);
    // Without afterTurn nothing is retried.
    const limited = await failure(() => client.conversation("c"));
    expect(isRateLimited(limited)).toBe(true);
    expect(limited.problem).toMatchObject({ limit: "requests_per_second" });
    const budget = await failure(() => client.previewCompaction("c", { spec: "s:0..0" }));
    expect(isRateLimited(budget)).toBe(true);
    expect(budget.problem).toMatchObject({ resets_at: "2026-12-03T00:00:00.000Z" });
    expect(pauses).toEqual([2_000]);
  });
});
