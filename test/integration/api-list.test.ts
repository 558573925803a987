/**
 * GET /v1/conversations (issue 15): the tenant's conversations, most
 * recently active first, a page at a time, each with the numbers GET
 * /conversations/{id} and its compactions give.
 */
import { randomUUID } from "node:crypto";
import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import { EMPTY_TURN_SIZE } from "../../core/sizes.ts";
import { splitTurns } from "../../core/turns.ts";
import { localClientConfig } from "../../functions/local/dynamodb-local.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { createTable, createTableInput } from "../../functions/store/dynamodb-table.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { compaction, message, request, turnStart } from "../helpers/builders.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { localEndpoint } from "../helpers/dynamodb.ts";
import { BOB_KEY, harness } from "../helpers/service.ts";
import { NO_MODEL_WARNING, offAndUnknown, offWarning } from "../helpers/warnings.ts";

type Harness = ReturnType<typeof harness>;
interface Listed {
  id: string;
  turn_count: number;
  estimated_tokens: number;
  context_window: number | null;
  utilization: number | null;
  bands: { auto: number; manual: number };
  last_fired_at: string | null;
  warnings: { code: string; detail: string }[];
}
interface Page {
  conversations: Listed[];
  next_cursor: string | null;
}

/** A harness whose store orders activity by a counter (no two writes share a time). */
function ticking(): Harness {
  let tick = 0;
  return harness({ store: new MemoryConversationStore({ now: () => ++tick }) });
}

async function json<T>(response: Response | Promise<Response>, status = 200): Promise<T> {
  const answer = await response;
  const body = await answer.json();
  expect(answer.status, JSON.stringify(body)).toBe(status);
  return body as T;
}

const smallTurn = (t: number): Entry[] => [
  turnStart(t),
  request(`question ${t}`, t),
  message(`answer ${t}`, t),
];

async function post(h: Harness, id: string, turn: number, events: Entry[], window?: number) {
  await json(
    h.request("POST", `/v1/conversations/${id}/turns`, {
      turn,
      ...(window ? { model: { id: "some-model", context_window: window } } : {}),
      events,
    }),
    202,
  );
  for (const m of h.queue.take()) await h.evaluate(m);
}

const list = (h: Harness, query = "", key?: string) =>
  json<Page>(h.request("GET", `/v1/conversations${query}`, undefined, key));

describe("GET /v1/conversations", () => {
  it("lists the tenant's conversations most recently active first, with their numbers", async () => {
    const h = ticking();
    await post(h, "quiet", 0, smallTurn(0), 1_000);
    const auto = {
      enabled: true,
      trigger_ratio: 0.55,
      min_turns: 4,
      rule: { keep_first: 1, keep_last: 2 },
    };
    await json(
      h.request("PUT", "/v1/conversations/busy/config", {
        conversation: { compaction: { auto } },
      }),
    );
    const turns = splitTurns(generateConversation({ seed: 314, turns: 30 }));
    for (const [turn, events] of turns.entries()) await post(h, "busy", turn, events, 9_000);
    await json(h.request("POST", "/v1/conversations/busy/compactions", { spec: "r:..-2" }), 201);
    await json(
      h.request("PUT", "/v1/conversations/configured/config", {
        conversation: { compaction: { auto: { enabled: true } } },
      }),
    );

    const page = await list(h);
    expect(page.next_cursor).toBeNull();
    expect(page.conversations.map((c) => c.id)).toEqual(["configured", "busy", "quiet"]);

    const busy = await json<{
      turn_count: number;
      estimated_tokens: number;
      compactions: { source: string; timestamp: string }[];
      warnings: Listed["warnings"];
    }>(h.request("GET", "/v1/conversations/busy"));
    const autos = busy.compactions.filter((c) => c.source === "auto");
    expect(autos.length).toBeGreaterThan(0);
    // Its last band left it over the threshold: the list says what the summary says.
    expect(busy.warnings.map((w) => w.code)).toEqual(["still_over_threshold"]);
    expect(page.conversations[1]).toEqual({
      id: "busy",
      turn_count: 30,
      estimated_tokens: busy.estimated_tokens,
      context_window: 9_000,
      utilization: busy.estimated_tokens / 9_000,
      bands: { auto: autos.length, manual: 1 },
      last_fired_at: autos
        .map((c) => c.timestamp)
        .sort()
        .at(-1),
      warnings: busy.warnings,
    });
    expect(page.conversations[0]).toEqual({
      id: "configured",
      turn_count: 0,
      estimated_tokens: 0,
      context_window: null,
      utilization: null,
      bands: { auto: 0, manual: 0 },
      last_fired_at: null,
      warnings: [NO_MODEL_WARNING],
    });
    // "question 0" + "answer 0": 18 bytes, 4.5 tokens of a 1,000-token window.
    expect(page.conversations[2]).toEqual({
      id: "quiet",
      turn_count: 1,
      estimated_tokens: 4.5,
      context_window: 1_000,
      utilization: 0.0045,
      bands: { auto: 0, manual: 0 },
      last_fired_at: null,
      warnings: [offWarning("quiet")],
    });

    // A turn is activity: quiet moves to the front; a reset keeps last_fired_at.
    await post(h, "quiet", 1, smallTurn(1), 1_000);
    await json(h.request("DELETE", "/v1/conversations/busy/compactions?source=auto"));
    const again = await list(h);
    expect(again.conversations.map((c) => c.id)).toEqual(["busy", "quiet", "configured"]);
    expect(again.conversations[0]).toMatchObject({
      bands: { auto: 0, manual: 1 },
      last_fired_at: page.conversations[1]?.last_fired_at,
    });
    // A deleted conversation is gone from the list.
    expect((await h.request("DELETE", "/v1/conversations/quiet")).status).toBe(204);
    expect((await list(h)).conversations.map((c) => c.id)).toEqual(["busy", "configured"]);
  });

  it("pages with an opaque cursor until next_cursor is null", async () => {
    const h = ticking();
    const ids = ["c1", "c2", "c3", "c4", "c5"];
    for (const id of ids) await post(h, id, 0, smallTurn(0));
    const seen: string[][] = [];
    let query = "?limit=2";
    for (;;) {
      const page = await list(h, query);
      seen.push(page.conversations.map((c) => c.id));
      if (page.next_cursor === null) break;
      query = `?limit=2&cursor=${encodeURIComponent(page.next_cursor)}`;
    }
    expect(seen).toEqual([["c5", "c4"], ["c3", "c2"], ["c1"]]);
    expect((await list(h)).conversations).toHaveLength(5);
  });

  it("refuses a bad limit or a cursor it did not give, with a clear detail (400)", async () => {
    const h = ticking();
    await post(h, "c1", 0, smallTurn(0));
    for (const query of ["?limit=0", "?limit=101", "?limit=ten", "?limit=1.5"]) {
      const answer = await h.request("GET", `/v1/conversations${query}`);
      expect(answer.status, query).toBe(400);
      expect(((await answer.json()) as { detail: string }).detail).toContain(
        "limit must be a whole number from 1 to 100",
      );
    }
    for (const cursor of ["garbage!", Buffer.from('{"page":2}').toString("base64url")]) {
      const answer = await h.request("GET", `/v1/conversations?cursor=${cursor}`);
      expect(answer.status).toBe(400);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(((await answer.json()) as { detail: string }).detail).toMatch(
        /^cursor is not one this API gave \(.+\): pass a page's next_cursor unchanged/,
      );
    }
    expect((await h.app.request("/v1/conversations")).status).toBe(401);
  });

  it("shows a tenant only its own conversations", async () => {
    const h = ticking();
    await post(h, "alices", 0, smallTurn(0));
    expect(await list(h, "", BOB_KEY)).toEqual({ conversations: [], next_cursor: null });
    // Even with alice's cursor.
    await post(h, "alices-2", 0, smallTurn(0));
    const cursor = (await list(h, "?limit=1")).next_cursor as string;
    expect(await list(h, `?cursor=${cursor}`, BOB_KEY)).toEqual({
      conversations: [],
      next_cursor: null,
    });
  });

  it("counts the bands of a head written before the head counted them", async () => {
    const h = ticking();
    const ref = { tenant: "alice", conversation: "older" };
    await h.store.appendTurn(
      ref,
      { turn: 0, events: smallTurn(0), size: { ...EMPTY_TURN_SIZE, text: 18 }, digest: "d0" },
      { compactions_version: 0 },
      { projected_chars: 18 },
    );
    // A compaction written without `bands` on the head, as before this change.
    await h.store.addCompaction(
      ref,
      {
        key: "MAN#000001",
        after_turn: 0,
        seq: 1,
        compaction: compaction(0, 0, 5, { reasoning: "strip" }),
      },
      { turn_count: 1, compactions_version: 0 },
      {},
    );
    expect((await list(h)).conversations).toEqual([
      {
        id: "older",
        turn_count: 1,
        estimated_tokens: 4.5,
        context_window: null,
        utilization: null,
        bands: { auto: 0, manual: 1 },
        last_fired_at: null,
        warnings: offAndUnknown("older"),
      },
    ]);
  });

  it("is in the OpenAPI document, with the timeline", async () => {
    const h = harness();
    const doc = (await (await h.app.request("/v1/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; parameters?: { name: string }[] }>
      >;
    };
    const listing = doc.paths["/v1/conversations"]?.get;
    expect(listing?.operationId).toBe("listConversations");
    expect(listing?.parameters?.map((p) => p.name).sort()).toEqual(["cursor", "limit"]);
    expect(doc.paths["/v1/conversations/{id}/timeline"]?.get?.operationId).toBe("getTimeline");
  });
});

describe("a DynamoDB Local table made before the list index", () => {
  it("gets the index from createTable, and the list reads it", async () => {
    // A database of its own (DynamoDB Local keeps one per access key): in the
    // run's shared one, the TTL work on hundreds of tables holds a new index in
    // CREATING for over a minute, unlike a local runtime's single table.
    const client = new DynamoDBClient(
      localClientConfig({
        endpoint: localEndpoint(),
        credentials: { accessKeyId: "listindexmigration", secretAccessKey: "local" },
      }),
    );
    try {
      const table = `before-index-${randomUUID()}`;
      const {
        GlobalSecondaryIndexes: _index,
        AttributeDefinitions,
        ...older
      } = createTableInput(table);
      await client.send(
        new CreateTableCommand({
          ...older,
          AttributeDefinitions: AttributeDefinitions?.slice(0, 2),
        }),
      );
      expect(await createTable(client, table)).toEqual({ created: false });
      const h = harness({ store: new DynamoConversationStore(client, table) });
      await post(h, "c1", 0, smallTurn(0));
      expect((await list(h)).conversations.map((c) => c.id)).toEqual(["c1"]);
    } finally {
      client.destroy();
    }
  });
});
