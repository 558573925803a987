/**
 * Conditional and incremental reads of the projection (issue 28,
 * docs/architecture.md §8 "Conditional and incremental reads"): an `ETag`,
 * 304 on `If-None-Match`, and `since=<etag>` answering one splice.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import type { Summarizer } from "../../functions/ports.ts";
import { messageTurn, request, toolCall, toolResult, turnStart } from "../helpers/builders.ts";
import { harness } from "../helpers/service.ts";

const PATH = "/v1/conversations/c/projection";
const summarizer: Summarizer = {
  summarize: async (asked) => ({ text: `S${asked.events.length}`, model: "stub", latency_ms: 1 }),
};

type H = ReturnType<typeof harness>;
type Body = Record<string, unknown> & {
  etag: string;
  events?: Entry[];
  messages?: unknown[];
  turns: unknown[];
  delta?: {
    since: string;
    items: { from: number; to: number };
    turns: { from: number; to: number };
  };
};

async function post(h: H, turn: number, events: Entry[] = messageTurn(turn)) {
  const posted = await h.request("POST", "/v1/conversations/c/turns", { turn, events });
  expect(posted.ok).toBe(true);
}

async function get(h: H, path: string, headers: Record<string, string> = {}) {
  const answer = await h.app.request(path, {
    headers: { authorization: "Bearer ak_alice_0123456789", ...headers },
  });
  const text = await answer.text();
  return {
    status: answer.status,
    etag: answer.headers.get("etag"),
    body: (text === "" ? undefined : JSON.parse(text)) as Body,
  };
}

describe("GET /projection: ETag and If-None-Match", () => {
  it("answers a strong, quoted ETag naming the turn count and band set; the body says it too", async () => {
    const h = harness({ summarizer });
    for (const t of [0, 1, 2]) await post(h, t);
    const read = await get(h, PATH);
    expect(read.status).toBe(200);
    expect(read.etag).toMatch(/^"3\.0\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"$/);
    expect(read.body.etag).toBe(read.etag);
    expect(read.body).not.toHaveProperty("delta");
    expect(
      (await h.request("POST", "/v1/conversations/c/compactions", { spec: "s:0..1" })).status,
    ).toBe(201);
    expect((await get(h, PATH)).etag).toMatch(/^"3\.1\./);
  });

  it("If-None-Match with the view's etag is a 304 with no body; after a turn it is the view again", async () => {
    const h = harness();
    for (const t of [0, 1]) await post(h, t);
    const { etag } = await get(h, PATH);
    const same = await get(h, PATH, { "if-none-match": etag as string });
    expect(same).toEqual({ status: 304, etag, body: undefined });
    expect((await get(h, PATH, { "if-none-match": `"x", ${etag}` })).status).toBe(304);
    await post(h, 2);
    const changed = await get(h, PATH, { "if-none-match": etag as string });
    expect(changed.status).toBe(200);
    expect(changed.body.turns).toEqual([{ kept: 0 }, { kept: 1 }, { kept: 2 }]);
  });

  it("the etag differs by format: each format's view is its own version", async () => {
    const h = harness();
    await post(h, 0);
    const jp = await get(h, PATH);
    const chat = await get(h, `${PATH}?format=openai-chat`);
    expect(chat.etag).not.toBe(jp.etag);
    expect(
      (await get(h, `${PATH}?format=openai-chat`, { "if-none-match": jp.etag as string })).status,
    ).toBe(200);
  });
});

describe("GET /projection?since=<etag>", () => {
  it("after a no-fire turn: only the appended turn's events and origin", async () => {
    const h = harness();
    for (const t of [0, 1]) await post(h, t);
    const before = await get(h, PATH);
    await post(h, 2);
    const delta = await get(h, `${PATH}?since=${encodeURIComponent(before.etag as string)}`);
    expect(delta.status).toBe(200);
    expect(delta.body.delta).toEqual({
      since: before.etag,
      items: { from: 6, to: 6 },
      turns: { from: 2, to: 2 },
    });
    expect(delta.body.events).toEqual(messageTurn(2));
    expect(delta.body.turns).toEqual([{ kept: 2 }]);
    expect(delta.body.etag).toBe(delta.etag);
    expect(delta.etag).toMatch(/^"3\.0\./);
  });

  it("nothing changed: an empty splice at the end (quotes may be left out)", async () => {
    const h = harness();
    await post(h, 0);
    const { etag } = await get(h, PATH);
    const bare = (etag as string).replaceAll('"', "");
    const delta = await get(h, `${PATH}?since=${bare}`);
    expect(delta.body.delta).toEqual({
      since: etag,
      items: { from: 3, to: 3 },
      turns: { from: 1, to: 1 },
    });
    expect(delta.body.events).toEqual([]);
    expect(delta.etag).toBe(etag);
  });

  it("after a firing: the range the band replaced and its projected turn, the turns after it kept", async () => {
    const h = harness({ summarizer });
    for (const t of [0, 1, 2, 3]) await post(h, t);
    const before = await get(h, PATH);
    expect(
      (await h.request("POST", "/v1/conversations/c/compactions", { spec: "s:0..1" })).status,
    ).toBe(201);
    const delta = await get(h, `${PATH}?since=${encodeURIComponent(before.etag as string)}`);
    // Turns 0 and 1 (six events) become one summary turn, which opens with turn 0's turn_start: kept.
    expect(delta.body.delta).toMatchObject({
      items: { from: 1, to: 6 },
      turns: { from: 0, to: 2 },
    });
    expect(delta.body.turns).toEqual([{ summary: { from: 0, to: 1 } }]);
    const full = await get(h, PATH);
    const old = before.body.events as Entry[];
    const applied = [old[0], ...(delta.body.events as Entry[]), ...old.slice(6)];
    expect(applied).toEqual(full.body.events);
  });

  it("in a provider format: the splice is in the format's messages", async () => {
    const h = harness();
    const call = (t: number): Entry[] => [
      turnStart(t),
      request(`q${t}`, t),
      toolCall(`c${t}`, "read", {}, t),
      toolResult(`c${t}`, `out${t}`, false, t),
    ];
    for (const t of [0, 1]) await post(h, t, call(t));
    const url = `${PATH}?format=anthropic-messages`;
    const before = await get(h, url);
    await post(h, 2, call(2));
    const delta = await get(h, `${url}&since=${encodeURIComponent(before.etag as string)}`);
    const d = delta.body.delta as NonNullable<Body["delta"]>;
    const old = before.body.messages as unknown[];
    const applied = [
      ...old.slice(0, d.items.from),
      ...(delta.body.messages as unknown[]),
      ...old.slice(d.items.to),
    ];
    expect(applied).toEqual((await get(h, url)).body.messages);
    // Anthropic joins a turn's trailing tool result with the next request: the last message is replaced.
    expect(d.items.to).toBe(old.length);
    expect(d.items.from).toBe(old.length - 1);
  });

  it("a view the store no longer rebuilds (its band removed) is answered whole, with no delta", async () => {
    const h = harness({ summarizer });
    for (const t of [0, 1, 2]) await post(h, t);
    expect(
      (await h.request("POST", "/v1/conversations/c/compactions", { spec: "s:0..1" })).status,
    ).toBe(201);
    const before = await get(h, PATH);
    expect((await h.request("DELETE", "/v1/conversations/c/compactions/1")).status).toBe(200);
    const answer = await get(h, `${PATH}?since=${encodeURIComponent(before.etag as string)}`);
    expect(answer.status).toBe(200);
    expect(answer.body).not.toHaveProperty("delta");
    expect(answer.body.turns).toEqual([{ kept: 0 }, { kept: 1 }, { kept: 2 }]);
  });

  it("refuses a since that is no etag, and since with cursor", async () => {
    const h = harness();
    await post(h, 0);
    const bad = await get(h, `${PATH}?since=nope`);
    expect(bad.status).toBe(400);
    expect((bad.body as unknown as { detail: string }).detail).toMatch(/since must be the etag/);
    const { etag } = await get(h, PATH);
    const both = await get(h, `${PATH}?since=${encodeURIComponent(etag as string)}&cursor=abc`);
    expect(both.status).toBe(400);
  });
});
