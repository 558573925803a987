/**
 * Paged reads (issue 25 item 4, docs/architecture.md §8 "Paged reads"):
 * `GET …/events` and `GET …/projection`, in every format, answer at most
 * 5 MiB and a `next_cursor` while turns follow; `limit` and `cursor` page by
 * whole turns, and the pages joined are the unpaged view.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import { splitTurns } from "../../core/turns.ts";
import type { Summarizer } from "../../functions/ports.ts";
import { bigToolTurn } from "../helpers/builders.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { propertyRuns } from "../helpers/property.ts";
import { harness } from "../helpers/service.ts";

/** 5 MiB: what no answer may pass (Lambda answers at most 6 MB). */
const FIVE_MIB = 5_242_880;
const summarizer: Summarizer = {
  summarize: async (request) => ({
    text: `SUMMARY of ${request.events.length} events`,
    model: "stub",
    latency_ms: 1,
  }),
};

type H = ReturnType<typeof harness>;
type Body = Record<string, unknown> & { next_cursor?: string };

async function post(h: H, id: string, turns: readonly Entry[][]) {
  for (const [turn, events] of turns.entries()) {
    const posted = await h.request("POST", `/v1/conversations/${id}/turns`, { turn, events });
    if (!posted.ok) throw new Error(`turn ${turn}: ${posted.status} ${await posted.text()}`);
  }
}

async function get(h: H, path: string): Promise<{ status: number; bytes: number; body: Body }> {
  const answer = await h.request("GET", path);
  const text = await answer.text();
  return { status: answer.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) as Body };
}

/** Every page of `path` (with `query`), following `next_cursor`. */
async function pages(h: H, path: string, query: Record<string, string> = {}) {
  const out: { bytes: number; body: Body }[] = [];
  let cursor: string | undefined;
  do {
    const params = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const page = await get(h, `${path}?${params}`);
    expect(page.status).toBe(200);
    out.push(page);
    cursor = page.body.next_cursor;
  } while (cursor !== undefined && out.length < 1_000);
  return out;
}

describe("a conversation larger than 5 MiB", () => {
  it("answers /events, /projection and a format in pages of at most 5 MiB, with next_cursor", async () => {
    const h = harness();
    // Three turns of 2.5 MB of tool output each: 7.5 MB of events.
    await post(
      h,
      "big",
      [0, 1, 2].map((t) => bigToolTurn(t, 2_500_000)),
    );
    const stored = (await h.store.readTurns({ tenant: "alice", conversation: "big" })).flatMap(
      (t) => t.events,
    );
    for (const [path, query] of [
      ["/v1/conversations/big/events", {}],
      ["/v1/conversations/big/projection", {}],
      ["/v1/conversations/big/projection", { format: "openai-chat" }],
      ["/v1/conversations/big/events", { format: "anthropic-messages" }],
    ] as const) {
      const read = await pages(h, path, query);
      expect(read.length, `${path} ${JSON.stringify(query)}`).toBe(2);
      for (const page of read) expect(page.bytes).toBeLessThanOrEqual(FIVE_MIB);
      expect(typeof read[0]?.body.next_cursor).toBe("string");
      expect(read[1]?.body).not.toHaveProperty("next_cursor");
    }
    const events = await pages(h, "/v1/conversations/big/events");
    expect(events.flatMap((p) => p.body.events as Entry[])).toEqual(stored);
  });

  it("answers a turn larger than the budget alone, in a page of its own", async () => {
    const h = harness({ bodyLimitBytes: 8_000_000 });
    await post(h, "huge", [bigToolTurn(0, 100), bigToolTurn(1, 5_300_000), bigToolTurn(2, 100)]);
    const read = await pages(h, "/v1/conversations/huge/events");
    expect(read.map((p) => (p.body.events as Entry[]).length)).toEqual([5, 5, 5]);
    expect(read[1]?.bytes).toBeGreaterThan(FIVE_MIB);
  });

  it("counts the compactions a page holds after its turns", async () => {
    const h = harness({
      summarizer: {
        summarize: async () => ({ text: "s".repeat(1_000_000), model: "stub", latency_ms: 1 }),
      },
    });
    await post(
      h,
      "bands",
      [0, 1, 2].map((t) => bigToolTurn(t, 1_500_000)),
    );
    // A 1 MB summary band added after turn 2, then turn 3.
    const band = await h.request("POST", "/v1/conversations/bands/compactions", { spec: "s:0..0" });
    expect(band.status).toBe(201);
    const posted = await h.request("POST", "/v1/conversations/bands/turns", {
      turn: 3,
      events: bigToolTurn(3, 1_500_000),
    });
    expect(posted.status).toBe(202);
    const read = await pages(h, "/v1/conversations/bands/events");
    for (const page of read) expect(page.bytes).toBeLessThanOrEqual(FIVE_MIB);
    expect(read.map((p) => (p.body.events as Entry[]).map((e) => e.type).join(","))).toEqual([
      Array(2).fill(TURN_TYPES).join(","),
      [TURN_TYPES, "compaction", TURN_TYPES].join(","),
    ]);
  });
});

/** The entry types of {@link bigToolTurn}. */
const TURN_TYPES = "turn_start,chat_request,tool_call_request,tool_call_response,chat_response";

describe("limit and cursor", () => {
  async function fiveTurns() {
    const h = harness({ summarizer });
    const turns = splitTurns(generateConversation({ seed: 7, turns: 5 }));
    await post(h, "c", turns);
    return { h, turns };
  }

  it("answers a small conversation as before: one page, no next_cursor", async () => {
    const { h, turns } = await fiveTurns();
    const events = await get(h, "/v1/conversations/c/events");
    expect(events.body).toEqual({ events: turns.flat() });
    const projection = await get(h, "/v1/conversations/c/projection");
    expect(Object.keys(projection.body)).toEqual([
      "events",
      "turns",
      "estimated_tokens",
      "evaluated_through",
      "decided_through",
      "etag",
      "warnings",
    ]);
  });

  it("pages by `limit` whole turns, the compactions after the turn they follow", async () => {
    const { h, turns } = await fiveTurns();
    const added = await h.request("POST", "/v1/conversations/c/compactions", { spec: "r:0..1" });
    expect(added.status).toBe(201);
    const read = await pages(h, "/v1/conversations/c/events", { limit: "2" });
    expect(read).toHaveLength(3);
    const page = (i: number) => read[i]?.body.events as Entry[];
    // The compaction was added after turn 4, the last: it ends the last page.
    expect(page(0)).toEqual([...(turns[0] ?? []), ...(turns[1] ?? [])]);
    expect(page(1)).toEqual([...(turns[2] ?? []), ...(turns[3] ?? [])]);
    expect(page(2).slice(0, -1)).toEqual(turns[4]);
    expect(page(2).at(-1)).toMatchObject({ type: "compaction", from_turn: 0, to_turn: 1 });
    const projected = await pages(h, "/v1/conversations/c/projection", { limit: "2" });
    expect(projected.map((p) => p.body.turns)).toEqual([
      [{ kept: 0 }, { kept: 1 }],
      [{ kept: 2 }, { kept: 3 }],
      [{ kept: 4 }],
    ]);
  });

  it("refuses a limit out of range and a cursor it did not give for the view (400)", async () => {
    const { h } = await fiveTurns();
    for (const limit of ["0", "10001", "two", "-1"]) {
      expect((await get(h, `/v1/conversations/c/events?limit=${limit}`)).status).toBe(400);
    }
    expect((await get(h, "/v1/conversations/c/projection?limit=10000")).status).toBe(200);
    const cursor = (await get(h, "/v1/conversations/c/projection?limit=1")).body.next_cursor;
    expect(typeof cursor).toBe("string");
    const crossed = await get(h, `/v1/conversations/c/events?cursor=${cursor}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.type).toBe("/problems/invalid-request");
    expect((await get(h, "/v1/conversations/c/events?cursor=bm90LWEtY3Vyc29y")).status).toBe(400);
    expect((await get(h, "/v1/conversations/c/events?cursor=%21%21")).status).toBe(400);
  });

  it("refuses a cursor once the compactions changed or the conversation was recreated (409 stale-cursor)", async () => {
    const { h, turns } = await fiveTurns();
    const first = await get(h, "/v1/conversations/c/projection?limit=2");
    const cursor = first.body.next_cursor as string;
    expect((await get(h, `/v1/conversations/c/projection?limit=2&cursor=${cursor}`)).status).toBe(
      200,
    );
    await h.request("POST", "/v1/conversations/c/compactions", { spec: "s:0..2" });
    const stale = await get(h, `/v1/conversations/c/projection?limit=2&cursor=${cursor}`);
    expect(stale.status).toBe(409);
    expect(stale.body.type).toBe("/problems/stale-cursor");

    const events = (await get(h, "/v1/conversations/c/events?limit=2")).body.next_cursor as string;
    expect((await h.request("DELETE", "/v1/conversations/c")).status).toBe(204);
    await post(h, "c", turns);
    const recreated = await get(h, `/v1/conversations/c/events?cursor=${events}`);
    expect(recreated.status).toBe(409);
    expect(recreated.body.type).toBe("/problems/stale-cursor");
  });

  it("keeps a cursor across turns appended meanwhile: the last page has them", async () => {
    const h = harness();
    const turns = splitTurns(generateConversation({ seed: 11, turns: 6 }));
    await post(h, "c", turns.slice(0, 4));
    const first = await get(h, "/v1/conversations/c/events?limit=3");
    for (const [turn, events] of turns.entries()) {
      if (turn < 4) continue;
      await h.request("POST", "/v1/conversations/c/turns", { turn, events });
    }
    const rest = await get(h, `/v1/conversations/c/events?cursor=${first.body.next_cursor}`);
    expect(rest.body).toEqual({ events: turns.slice(3).flat() });
  });
});

const SPECS = ["r:0..2", "t:1..-2", "s:1..3", "s:..-3", "r+t=strip-responses:2..4", "s:0..1"];

describe("the pages joined are the unpaged view (property)", () => {
  it("for /events and /projection, in JP and every provider format", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 3, max: 10 }),
        fc.boolean(),
        fc.array(fc.constantFrom(...SPECS), { maxLength: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom("jp", "openai-chat", "openai-responses", "anthropic-messages", "ai-sdk"),
        async (seed, count, implicitFirstTurn, specs, limit, format) => {
          const h = harness({ summarizer });
          const turns = splitTurns(
            // Tool results across turn boundaries: the formats that join turns' messages.
            generateConversation({ seed, turns: count, implicitFirstTurn, crossTurnRate: 0.4 }),
          );
          await post(h, "p", turns);
          for (const spec of specs) {
            const added = await h.request("POST", "/v1/conversations/p/compactions", { spec });
            // A spec whose range the conversation is too short for is refused (422): nothing added.
            expect([201, 422]).toContain(added.status);
          }
          const query: Record<string, string> = format === "jp" ? {} : { format };
          const field =
            format === "jp" ? "events" : format === "openai-responses" ? "input" : "messages";
          for (const view of ["events", "projection"]) {
            const path = `/v1/conversations/p/${view}`;
            const whole = await pages(h, path, query);
            expect(whole).toHaveLength(1);
            const paged = await pages(h, path, { ...query, limit: String(limit) });
            const wholeBody = whole[0]?.body as Body;
            expect(paged.flatMap((p) => p.body[field] as unknown[])).toEqual(wholeBody[field]);
            if (view === "projection") {
              // Each projected turn (a band's summary among them) in exactly one page.
              expect(paged.flatMap((p) => p.body.turns as unknown[])).toEqual(wholeBody.turns);
              for (const page of paged) {
                expect((page.body.turns as unknown[]).length).toBeLessThanOrEqual(limit);
              }
            }
          }
        },
      ),
      propertyRuns(8),
    );
  });
});
