/** DELETE /v1/conversations/{id} through the app (issue 10 item 8); under concurrency: test/reliability/delete.test.ts. */
import { describe, expect, it } from "vitest";
import { splitTurns } from "../../core/turns.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { BOB_KEY, harness } from "../helpers/service.ts";

const turns = splitTurns(JSON.parse(JSON.stringify(generateConversation({ seed: 21, turns: 8 }))));
const post = (h: ReturnType<typeof harness>, turn: number) =>
  h.request("POST", "/v1/conversations/conv-1/turns", { turn, events: turns[turn] });

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/application\/problem\+json/);
  return (await response.json()) as Record<string, unknown>;
}

describe("DELETE /v1/conversations/{id}", () => {
  const ID = "/v1/conversations/conv-1";
  const REF = { tenant: "alice", conversation: "conv-1" };

  it("removes the stream, compactions, config and sizes: every read is a 404, a new turn 0 starts afresh", async () => {
    const h = harness();
    for (let t = 0; t < 6; t++) expect((await post(h, t)).status).toBe(202);
    expect((await h.request("POST", `${ID}/compactions`, { spec: "r:..-2" })).status).toBe(201);
    expect(
      (
        await h.request("PUT", `${ID}/config`, {
          conversation: { compaction: { auto: { min_turns: 2 } } },
        })
      ).status,
    ).toBe(200);
    const deleted = await h.request("DELETE", ID);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    for (const path of [ID, `${ID}/events`, `${ID}/projection`, `${ID}/compactions`]) {
      const read = await h.request("GET", path);
      expect(read.status).toBe(404);
      expect((await problem(read)).detail).toBe('no conversation "conv-1"');
    }
    expect((await h.request("POST", `${ID}/compactions`, { spec: "r" })).status).toBe(404);
    expect((await h.request("DELETE", `${ID}/compactions`)).status).toBe(404);
    expect(await (await h.request("GET", `${ID}/config`)).json()).toMatchObject({
      conversation: { compaction: { auto: {} } },
      effective: { min_turns: 5 },
    });
    expect(await h.store.getHead(REF)).toBeUndefined();
    expect(await h.store.listTurnSizes(REF)).toEqual([]);

    const gap = await post(h, 6);
    expect(gap.status).toBe(409);
    expect(await problem(gap)).toMatchObject({ expected_turn: 0 });
    expect((await post(h, 0)).status).toBe(202);
    expect(await (await h.request("GET", ID)).json()).toMatchObject({
      turn_count: 1,
      evaluated_through: null,
      compactions: [],
    });
    const events = (await (await h.request("GET", `${ID}/events`)).json()) as { events: unknown[] };
    expect(events.events).toEqual(turns[0]);
  });

  it("is idempotent: 204 for a second delete and for a conversation that never existed", async () => {
    const h = harness();
    await post(h, 0);
    expect((await h.request("DELETE", ID)).status).toBe(204);
    expect((await h.request("DELETE", ID)).status).toBe(204);
    expect((await h.request("DELETE", "/v1/conversations/never-was")).status).toBe(204);
    expect((await h.request("GET", "/v1/conversations/never-was")).status).toBe(404);
  });

  it("deletes only the caller's own conversation, and needs a key and a valid id", async () => {
    const h = harness();
    await post(h, 0);
    await post(h, 1);
    expect((await h.request("DELETE", ID, undefined, BOB_KEY)).status).toBe(204);
    expect(await (await h.request("GET", ID)).json()).toMatchObject({ turn_count: 2 });
    const anonymous = await h.app.request(ID, { method: "DELETE" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="autocompact"');
    const bad = await h.request("DELETE", `/v1/conversations/${encodeURIComponent("a b")}`);
    expect(bad.status).toBe(400);
  });

  it("while a delete is unfinished: turns and config get 503 with Retry-After, reads 404, and the next delete finishes it", async () => {
    const h = harness();
    for (let t = 0; t < 3; t++) await post(h, t);
    h.queue.take();
    // A delete that stopped after its tombstone (the Lambda timed out there).
    expect(await h.store.beginDelete(REF)).toBe(true);
    for (const response of [
      await post(h, 3),
      await post(h, 0),
      await h.request("PUT", `${ID}/config`, {
        conversation: { compaction: { auto: { enabled: true } } },
      }),
    ]) {
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
      expect(await problem(response)).toMatchObject({
        type: "/problems/contention",
        detail:
          'conversation "conv-1" is being deleted: retry the request once the delete has finished',
      });
    }
    expect(h.queue.take()).toEqual([]);
    expect((await h.request("GET", ID)).status).toBe(404);
    expect((await h.request("GET", `${ID}/events`)).status).toBe(404);
    expect((await h.request("POST", `${ID}/compactions`, { spec: "r" })).status).toBe(404);
    expect((await h.request("DELETE", ID)).status).toBe(204);
    expect(await h.store.getHead(REF)).toBeUndefined();
    expect((await post(h, 0)).status).toBe(202);
  });
});
