import { describe, expect, it } from "vitest";
import { splitTurns } from "../../core/turns.ts";
import { hashApiKey } from "../../functions/keys.ts";
import { signWebhook } from "../../functions/webhook-signature.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { ALICE_KEY, BOB_KEY, harness } from "../helpers/service.ts";
import { offAndUnknown } from "../helpers/warnings.ts";

const conversation = generateConversation({ seed: 21, turns: 12 });
const turns = splitTurns(JSON.parse(JSON.stringify(conversation)));
const post = (
  h: ReturnType<typeof harness>,
  turn: number,
  extra: Record<string, unknown> = {},
  key = ALICE_KEY,
) =>
  h.request("POST", "/v1/conversations/conv-1/turns", { turn, events: turns[turn], ...extra }, key);

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/application\/problem\+json/);
  return (await response.json()) as {
    status: number;
    detail: string;
    type: string;
    [k: string]: unknown;
  };
}

describe("POST /turns", () => {
  it("stores a new turn (202), enqueues its evaluation, and accepts an identical replay (200)", async () => {
    const h = harness();
    const created = await post(h, 0);
    expect(created.status).toBe(202);
    expect(await created.json()).toEqual({
      status: "created",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
      evaluated_through: null,
      decided_through: null,
      // Off by default, and the test's turns name no model: both are said.
      warnings: offAndUnknown("conv-1"),
    });
    // posted_at_ms: the service's clock when it stored the turn (the start of the evaluation lag);
    // incarnation: the life of the conversation the turn went into, as its head names it.
    const postedAt = h.clock.now;
    const incarnation = (await h.store.getHead({ tenant: "alice", conversation: "conv-1" }))
      ?.incarnation;
    expect(incarnation).toMatch(/^[\w-]{16}$/);
    const message = { tenant: "alice", conversation: "conv-1", turn: 0, incarnation };
    expect(h.queue.take()).toEqual([{ ...message, posted_at_ms: postedAt }]);
    h.clock.now += 1_000;
    const replay = await post(h, 0);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ status: "replayed", evaluation_enqueued: true });
    // A replay re-enqueues with its own post's time.
    expect(h.queue.take()).toEqual([{ ...message, posted_at_ms: postedAt + 1_000 }]);
    await h.evaluate({ tenant: "alice", conversation: "conv-1", turn: 0 });
    expect(await (await post(h, 0)).json()).toMatchObject({
      status: "replayed",
      evaluation_enqueued: false,
      evaluated_through: 0,
      decided_through: 0,
    });
    expect(h.queue.take()).toHaveLength(0);
  });

  it("answers 409 naming the expected turn for a gap or different content", async () => {
    const h = harness();
    await post(h, 0);
    const gap = await post(h, 2);
    expect(gap.status).toBe(409);
    expect(await problem(gap)).toMatchObject({
      expected_turn: 1,
      detail: expect.stringMatching(/next turn is 1/),
    });
    const changed = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: turns[1],
    });
    expect(changed.status).toBe(409);
    expect((await problem(changed)).detail).toMatch(/already stored with different content/);
  });

  it("answers 400 for malformed JSON, a wrong shape, and bad events, saying what to fix", async () => {
    const h = harness();
    const malformed = await h.request("POST", "/v1/conversations/conv-1/turns", "{not json");
    expect(malformed.status).toBe(400);
    expect((await problem(malformed)).detail).toMatch(/not valid JSON/);
    const empty = await h.request("POST", "/v1/conversations/conv-1/turns", "");
    expect((await problem(empty)).detail).toMatch(/body is empty/);
    const shape = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: -1,
      events: [],
    });
    expect(shape.status).toBe(400);
    expect((await problem(shape)).detail).toMatch(/turn/);
    const unknownKey = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: turns[0],
      extra: 1,
    });
    expect(unknownKey.status).toBe(400);
    const badEvent = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: [
        { type: "turn_start", timestamp: "2026-01-01T00:00:00Z" },
        { type: "chat_request", timestamp: "2026-01-01T00:00:00Z", content: 5 },
      ],
    });
    const body = await problem(badEvent);
    expect(body.status).toBe(400);
    expect(body.detail).toMatch(/^events\[1\]\.content: /);
    expect(body.errors).toEqual([expect.objectContaining({ pointer: "/events/1/content" })]);
  });

  it("answers 400 for a turn that is not one turn, or that carries a compaction", async () => {
    const h = harness();
    const two = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: [...(turns[0] ?? []), ...(turns[1] ?? [])],
    });
    expect((await problem(two)).detail).toMatch(/hold 2 turns/);
    await post(h, 0);
    const noStart = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 1,
      events: turns[1]?.slice(1),
    });
    expect((await problem(noStart)).detail).toMatch(/must begin with a turn_start/);
    const withCompaction = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 1,
      events: [
        ...(turns[1] ?? []),
        {
          type: "compaction",
          timestamp: "2026-01-01T00:00:00Z",
          from_turn: 0,
          to_turn: 0,
          reasoning: "strip",
        },
      ],
    });
    expect((await problem(withCompaction)).detail).toMatch(/is a compaction/);
    const badDelta = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 1,
      events: [
        {
          type: "config_delta",
          timestamp: "2026-01-01T00:00:00Z",
          delta: { conversation: { compaction: { auto: { trigger_ratio: 2 } } } },
        },
        ...(turns[1] ?? []),
      ],
    });
    expect((await problem(badDelta)).detail).toMatch(
      /events\[0\]\.delta: conversation\.compaction\.auto\.trigger_ratio/,
    );
  });

  it("answers 400, not 500, for JSON nested deeper than the limit", async () => {
    const h = harness();
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    const body = `{"turn":0,"events":[{"type":"chat_response","timestamp":"2026-01-01T00:00:00Z","data":${deep}}]}`;
    const response = await h.request("POST", "/v1/conversations/conv-1/turns", body);
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toMatch(/nests deeper than 100 levels/);
  });

  it("answers 400 for a config delta that leaves the rule without any policy", async () => {
    const h = harness();
    const response = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: [
        {
          type: "config_delta",
          timestamp: "2026-01-01T00:00:00Z",
          delta: {
            conversation: { compaction: { auto: { rule: { reasoning: null, tool_calls: null } } } },
          },
        },
        ...(turns[0] ?? []),
      ],
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toMatch(
      /conversation\.compaction\.auto\.rule: sets no policy/,
    );
  });

  it("answers 422, as PUT /config does, for a config delta enabling a summary rule without a summarizer, and stores nothing", async () => {
    const h = harness();
    const enablesSummary = {
      conversation: { compaction: { auto: { enabled: true, rule: { summary: {} } } } },
    };
    const put = await h.request("PUT", "/v1/conversations/conv-2/config", enablesSummary);
    expect(put.status).toBe(422);
    const response = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: [
        { type: "config_delta", timestamp: "2026-01-01T00:00:00Z", delta: enablesSummary },
        ...(turns[0] ?? []),
      ],
    });
    expect(response.status).toBe(422);
    expect(await problem(response)).toMatchObject({
      type: "/problems/summarizer-unavailable",
      detail:
        "the turn's config_delta: conversation.compaction.auto.rule.summary: this service has no summarizer configured, so a summary rule could never run (set SUMMARIZER locally, or the stack's summarizer setting)",
    });
    expect(await h.store.getHead({ tenant: "alice", conversation: "conv-1" })).toBeUndefined();
    expect(h.queue.take()).toEqual([]);
  });

  it("answers 415 for a body not sent as JSON, and names the event types of a turn with no conversation event", async () => {
    const h = harness();
    const body = JSON.stringify({ turn: 0, events: turns[0] });
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const response = await h.request("POST", "/v1/conversations/conv-1/turns", body, ALICE_KEY, {
        "content-type": type,
      });
      expect(response.status).toBe(415);
      expect((await problem(response)).detail).toMatch(/content-type: application\/json/);
    }
    const bogus = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: [{ type: "bogus", x: 1 }],
    });
    expect((await problem(bogus)).detail).toMatch(/got only: bogus/);
  });

  it("answers 413 above the body limit", async () => {
    const h = harness({ bodyLimitBytes: 10_000 });
    const big = await h.request("POST", "/v1/conversations/conv-1/turns", {
      turn: 0,
      events: [
        { type: "chat_request", timestamp: "2026-01-01T00:00:00Z", content: "x".repeat(20_000) },
      ],
    });
    expect(big.status).toBe(413);
    expect((await problem(big)).detail).toMatch(/larger than 10000 bytes/);
  });

  it("requires a valid API key and hides other tenants' conversations (404)", async () => {
    const h = harness();
    await post(h, 0);
    expect((await h.app.request("/v1/conversations/conv-1")).status).toBe(401);
    expect((await h.request("GET", "/v1/conversations/conv-1", undefined, "wrong")).status).toBe(
      401,
    );
    expect((await h.request("GET", "/v1/conversations/conv-1", undefined, BOB_KEY)).status).toBe(
      404,
    );
    expect(
      (await h.request("GET", "/v1/conversations/conv-1/projection", undefined, BOB_KEY)).status,
    ).toBe(404);
    expect(
      (await h.request("POST", "/v1/conversations/conv-1/compactions", { spec: "r" }, BOB_KEY))
        .status,
    ).toBe(404);
    expect((await h.request("GET", "/v1/conversations/conv-1")).status).toBe(200);
  });

  it("rejects bad conversation ids", async () => {
    const h = harness();
    const response = await h.request("GET", `/v1/conversations/${encodeURIComponent("a b")}`);
    expect(response.status).toBe(400);
  });
});

describe("webhook signatures", () => {
  const secret = `whsec_${Buffer.from("super secret signing key").toString("base64")}`;
  const rotated = `whsec_${Buffer.from("the new signing key").toString("base64")}`;
  const tenants = [
    { id: "signed", key_hashes: [hashApiKey("ak_signed")], webhook_secrets: [rotated, secret] },
  ];

  it("accepts a valid signature (any secret, any of several signatures) and rejects the rest", async () => {
    const h = harness({ tenants });
    const body = JSON.stringify({ turn: 0, events: turns[0] });
    const now = Math.floor(h.clock.now / 1000);
    const signed = (signature: string, timestamp = now) =>
      h.request("POST", "/v1/conversations/c/turns", body, "ak_signed", {
        "webhook-id": "msg_1",
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature,
      });
    expect((await h.request("POST", "/v1/conversations/c/turns", body, "ak_signed")).status).toBe(
      401,
    );
    expect((await signed("v1,AAAA")).status).toBe(401);
    expect((await signed(signWebhook(secret, "msg_1", now - 301, body), now - 301)).status).toBe(
      401,
    );
    const good = signWebhook(secret, "msg_1", now, body);
    expect((await signed(`v1,bm9wZQ== ${good}`)).status).toBe(202);
    expect((await signed(good)).status).toBe(200);
    expect(h.queue.take()).toHaveLength(2);
  });
});

describe("reads, compactions and config", () => {
  async function stored(n: number) {
    const h = harness();
    for (let t = 0; t < n; t++) expect((await post(h, t)).status).toBe(202);
    return h;
  }

  it("lists the raw events, the projection and the summary", async () => {
    const h = await stored(12);
    const events = (await (await h.request("GET", "/v1/conversations/conv-1/events")).json()) as {
      events: unknown[];
    };
    expect(events.events).toEqual(turns.flat());
    const summary = await (await h.request("GET", "/v1/conversations/conv-1")).json();
    expect(summary).toMatchObject({ turn_count: 12, evaluated_through: null, compactions: [] });
    const projection = (await (
      await h.request("GET", "/v1/conversations/conv-1/projection")
    ).json()) as { events: unknown[]; turns: unknown[]; estimated_tokens: number };
    expect(projection.turns).toHaveLength(12);
    expect(projection.events).toEqual(turns.flat());
    expect(projection.estimated_tokens).toBe(
      (summary as { estimated_tokens: number }).estimated_tokens,
    );

    // A small literal turn, estimated by hand: UTF-8 bytes of the provider-visible
    // content / 4. turn_start 0; "héllo" 6 (é is 2 bytes); tool call "ls" 2 +
    // {"path":"/"} 12; result "a.txt" 5; "done ✓" 8 (✓ is 3 bytes): 33 bytes, 8.25 tokens.
    const at = "2026-01-01T00:00:00Z";
    const tiny = await h.request("POST", "/v1/conversations/tiny/turns", {
      turn: 0,
      events: [
        { type: "turn_start", timestamp: at },
        { type: "chat_request", timestamp: at, content: "héllo" },
        {
          type: "tool_call_request",
          timestamp: at,
          id: "t1",
          name: "ls",
          arguments: { path: "/" },
        },
        { type: "tool_call_response", timestamp: at, id: "t1", content: "a.txt" },
        { type: "chat_response", timestamp: at, message: "done ✓" },
      ],
    });
    expect(tiny.status).toBe(202);
    const tinySummary = await (await h.request("GET", "/v1/conversations/tiny")).json();
    const tinyProjection = await (
      await h.request("GET", "/v1/conversations/tiny/projection")
    ).json();
    expect(tinySummary).toMatchObject({ estimated_tokens: 8.25 });
    expect(tinyProjection).toMatchObject({ estimated_tokens: 8.25 });
  });

  it("adds manual compactions from a spec or a rule, and resets them", async () => {
    const h = await stored(12);
    const bySpec = await h.request("POST", "/v1/conversations/conv-1/compactions", {
      spec: "r+t:..-3",
    });
    expect(bySpec.status).toBe(201);
    expect(await bySpec.json()).toMatchObject({
      position: 1,
      source: "manual",
      from_turn: 0,
      to_turn: 8,
      reasoning: "strip",
    });
    const byRule = await h.request("POST", "/v1/conversations/conv-1/compactions", {
      rule: { tool_calls: "omit", keep_first: 9, keep_last: 1 },
    });
    expect(await byRule.json()).toMatchObject({
      position: 2,
      from_turn: 9,
      to_turn: 10,
      tool_calls: { policy: "omit" },
    });
    const listed = (await (
      await h.request("GET", "/v1/conversations/conv-1/compactions")
    ).json()) as { compactions: unknown[] };
    expect(listed.compactions).toHaveLength(2);
    const before = (await (await h.request("GET", "/v1/conversations/conv-1")).json()) as {
      estimated_tokens: number;
    };
    const projection = (await (
      await h.request("GET", "/v1/conversations/conv-1/projection")
    ).json()) as { estimated_tokens: number };
    expect(before.estimated_tokens).toBe(projection.estimated_tokens);
    const removed = await (
      await h.request("DELETE", "/v1/conversations/conv-1/compactions/1")
    ).json();
    expect(removed).toMatchObject({ removed: [{ position: 1, from_turn: 0 }] });
    const outOfRange = await h.request("DELETE", "/v1/conversations/conv-1/compactions/5");
    expect(outOfRange.status).toBe(422);
    expect((await problem(outOfRange)).detail).toMatch(/positions are 1 to 1/);
    expect((await h.request("DELETE", "/v1/conversations/conv-1/compactions/zero")).status).toBe(
      400,
    );
    expect(
      await (await h.request("DELETE", "/v1/conversations/conv-1/compactions?source=auto")).json(),
    ).toEqual({ removed: [] });
    expect(
      (await h.request("DELETE", "/v1/conversations/conv-1/compactions?source=robot")).status,
    ).toBe(400);
    expect(
      await (await h.request("DELETE", "/v1/conversations/conv-1/compactions")).json(),
    ).toMatchObject({ removed: [{ position: 1 }] });
  });

  it("explains bad compaction requests", async () => {
    const h = await stored(3);
    expect(
      (
        await problem(
          await h.request("POST", "/v1/conversations/conv-1/compactions", { spec: "q" }),
        )
      ).detail,
    ).toMatch(/unknown policy 'q'/);
    const empty = await h.request("POST", "/v1/conversations/conv-1/compactions", {
      spec: "r:5..",
    });
    expect(empty.status).toBe(422);
    expect(
      (await h.request("POST", "/v1/conversations/conv-1/compactions", { rule: { keep_first: 0 } }))
        .status,
    ).toBe(400);
    expect(
      (await h.request("POST", "/v1/conversations/conv-1/compactions", { spec: "s:.." })).status,
    ).toBe(422);
    expect((await h.request("POST", "/v1/conversations/conv-1/compactions", {})).status).toBe(400);
    const badMode = await h.request("POST", "/v1/conversations/conv-1/compactions", {
      rule: { tool_calls: "nuke" },
    });
    expect((await problem(badMode)).detail).toMatch(/^rule\.tool_calls: /);
    const both = await h.request("POST", "/v1/conversations/conv-1/compactions", {
      spec: "r",
      rule: {},
    });
    expect((await problem(both)).detail).toMatch(/exactly one of "spec" or "rule"/);
    const notString = await h.request("POST", "/v1/conversations/conv-1/compactions", { spec: 5 });
    expect((await problem(notString)).detail).toMatch(/spec must be a non-empty string/);
  });

  it("reads and writes the per-conversation config, naming bad keys", async () => {
    const h = harness();
    const put = await h.request("PUT", "/v1/conversations/fresh/config", {
      conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.5 } } },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({
      conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.5 } } },
      effective: { enabled: true, trigger_ratio: 0.5, min_turns: 5 },
    });
    const bad = await h.request("PUT", "/v1/conversations/fresh/config", {
      conversation: { compaction: { auto: { trigger_ratio: 3 } } },
    });
    expect(bad.status).toBe(400);
    expect((await problem(bad)).detail).toMatch(/conversation\.compaction\.auto\.trigger_ratio/);
    const noPolicy = await h.request("PUT", "/v1/conversations/fresh/config", {
      conversation: { compaction: { auto: { rule: { reasoning: null, tool_calls: null } } } },
    });
    expect(noPolicy.status).toBe(400);
    for (const [body, message] of [
      [{ enabled: true }, /^enabled: unknown key \(only "conversation" belongs here/],
      [{ conversation: { foo: 1, compaction: { auto: {} } } }, /^conversation\.foo: unknown key/],
      [{ conversation: { compaction: {} } }, /conversation\.compaction\.auto: missing/],
    ] as const) {
      const wrong = await h.request("PUT", "/v1/conversations/fresh/config", body);
      expect(wrong.status).toBe(400);
      expect((await problem(wrong)).detail).toMatch(message);
    }
    const summary = await h.request("PUT", "/v1/conversations/fresh/config", {
      conversation: { compaction: { auto: { rule: { summary: {} } } } },
    });
    expect(summary.status).toBe(422);
    expect((await problem(summary)).detail).toMatch(/no summarizer configured/);
    expect((await problem(noPolicy)).detail).toMatch(/rule: sets no policy/);
    const typo = await h.request("PUT", "/v1/conversations/fresh/config", {
      conversation: { compaction: { auto: { enable: true } } },
    });
    expect((await problem(typo)).detail).toMatch(/auto\.enable: unknown key/);
    expect(await (await h.request("GET", "/v1/conversations/fresh/config")).json()).toMatchObject({
      effective: { enabled: true },
    });
  });

  it("serves health and an OpenAPI document covering every route", async () => {
    const h = harness();
    expect(await (await h.app.request("/healthz")).json()).toEqual({ ok: true });
    const doc = (await (await h.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = [
      "GET /healthz",
      "GET /v1/openapi.json",
      "POST /v1/conversations/{id}/turns",
      "GET /v1/conversations/{id}",
      "DELETE /v1/conversations/{id}",
      "GET /v1/conversations/{id}/events",
      "GET /v1/conversations/{id}/projection",
      "GET /v1/conversations/{id}/compactions",
      "POST /v1/conversations/{id}/compactions",
      "DELETE /v1/conversations/{id}/compactions",
      "DELETE /v1/conversations/{id}/compactions/{position}",
      "GET /v1/conversations/{id}/config",
      "PUT /v1/conversations/{id}/config",
      "POST /v1/conversations/{id}/verify",
      "GET /v1/conversations",
      "GET /v1/conversations/{id}/timeline",
      "PUT /v1/notifications",
      "GET /v1/notifications",
      "DELETE /v1/notifications",
      "GET /v1/tenant/config",
      "PUT /v1/tenant/config",
      "GET /v1/tenant/models",
      "PUT /v1/tenant/models",
    ].sort();
    const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => methods.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    // The console's and the API reference's pages are served but are not API operations.
    const pages = ["GET /console", "GET /console/*", "GET /docs", "GET /docs/*"];
    const served = h.app.routes
      .filter((route) => route.method !== "ALL")
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    expect(documented.sort()).toEqual(routes);
    expect([...new Set(served)].sort()).toEqual([...routes, ...pages].sort());
    const unknown = await h.app.request("/nowhere");
    expect(unknown.status).toBe(404);
  });
});
