/**
 * POST /v1/conversations/{id}/compactions?dry_run=true (issue 15): answers
 * the manual compaction a spec or rule would add and the estimate it would
 * leave, which applying it then does exactly; and it never writes (the
 * stored items are byte-identical before and after).
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import { splitTurns } from "../../core/turns.ts";
import type { SummaryRequest } from "../../functions/ports.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { scanWireItems } from "../fixtures/dynamodb-items-v1.generate.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { BOB_KEY, harness } from "../helpers/service.ts";

type Harness = ReturnType<typeof harness>;
interface DryRun {
  compaction: Record<string, unknown> & { position: number; from_turn: number; to_turn: number };
  estimated_tokens_before: number;
  estimated_tokens_after: number;
}

async function json<T>(response: Response | Promise<Response>, status = 200): Promise<T> {
  const answer = await response;
  const body = await answer.json();
  expect(answer.status, JSON.stringify(body)).toBe(status);
  return body as T;
}

/** Stores a seeded conversation of `count` turns (default config: nothing fires). */
async function stored(h: Harness, id: string, count: number): Promise<Entry[][]> {
  const turns = splitTurns(generateConversation({ seed: 99, turns: count }));
  for (const [turn, events] of turns.entries()) {
    await json(h.request("POST", `/v1/conversations/${id}/turns`, { turn, events }), 202);
  }
  for (const m of h.queue.take()) await h.evaluate(m);
  return turns;
}

const estimate = async (h: Harness, id: string) =>
  (await json<{ estimated_tokens: number }>(h.request("GET", `/v1/conversations/${id}`)))
    .estimated_tokens;

const dryRun = (h: Harness, id: string, body: unknown, key?: string) =>
  h.request("POST", `/v1/conversations/${id}/compactions?dry_run=true`, body, key);

const REQUESTS = [
  { spec: "r+t:..-2" },
  { rule: { tool_calls: "strip", keep_first: 2, keep_last: 3 } },
  { spec: "t:3..5" },
];

describe("POST /v1/conversations/{id}/compactions?dry_run=true", () => {
  it("answers what a spec or a rule would add, and applying it does exactly that", async () => {
    const h = harness();
    await stored(h, "conv", 12);
    for (const [index, body] of REQUESTS.entries()) {
      const before = await estimate(h, "conv");
      const preview = await json<DryRun>(dryRun(h, "conv", body));
      expect(preview.estimated_tokens_before).toBe(before);
      expect(preview.compaction).toMatchObject({ type: "compaction", source: "manual" });
      expect(preview.compaction.position).toBe(index + 1);
      // The manual clock stands still, so even the timestamp is the one applying gives.
      const applied = await json(
        h.request("POST", "/v1/conversations/conv/compactions", body),
        201,
      );
      expect(applied).toEqual(preview.compaction);
      expect(await estimate(h, "conv")).toBe(preview.estimated_tokens_after);
    }
    // Three compactions landed, each the one its preview showed.
    expect(
      (
        await json<{ compactions: unknown[] }>(
          h.request("GET", "/v1/conversations/conv/compactions"),
        )
      ).compactions,
    ).toHaveLength(3);
  });

  it("previews a summary with the summarizer, as applying would, and keeps nothing", async () => {
    const asked: SummaryRequest[] = [];
    const h = harness({
      summarizer: {
        summarize: async (request) => {
          asked.push(request);
          return { text: "They read the logs and fixed the build.", model: "stub", latency_ms: 1 };
        },
      },
    });
    await stored(h, "conv", 8);
    const preview = await json<DryRun>(dryRun(h, "conv", { spec: "s:1..4" }));
    expect(asked.map((r) => [r.from_turn, r.to_turn])).toEqual([[1, 4]]);
    expect(preview.compaction).toMatchObject({
      from_turn: 1,
      to_turn: 4,
      summary: { summary: "They read the logs and fixed the build." },
    });
    expect(preview.estimated_tokens_after).toBeLessThan(preview.estimated_tokens_before);
    expect(
      (
        await json<{ compactions: unknown[] }>(
          h.request("GET", "/v1/conversations/conv/compactions"),
        )
      ).compactions,
    ).toEqual([]);
  });

  it("answers the errors applying would (404 for another tenant, 422, 400), writing nothing", async () => {
    const h = harness();
    await stored(h, "conv", 3);
    expect((await dryRun(h, "conv", { spec: "r:.." }, BOB_KEY)).status).toBe(404);
    expect((await dryRun(h, "none", { spec: "r:.." })).status).toBe(404);
    const empty = await dryRun(h, "conv", {
      rule: { reasoning: "strip", keep_first: 2, keep_last: 2 },
    });
    expect(empty.status).toBe(422);
    expect((await dryRun(h, "conv", { spec: "x:.." })).status).toBe(400);
    const bad = await h.request("POST", "/v1/conversations/conv/compactions?dry_run=maybe", {
      spec: "r:..",
    });
    expect(bad.status).toBe(400);
    expect(
      (
        await json<{ compactions: unknown[] }>(
          h.request("GET", "/v1/conversations/conv/compactions"),
        )
      ).compactions,
    ).toEqual([]);
  });

  it("is in the OpenAPI document: the dry_run query and its 200", async () => {
    const h = harness();
    const doc = (await (await h.app.request("/v1/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { parameters?: { name: string }[]; responses: Record<string, unknown> }>
      >;
    };
    const add = doc.paths["/v1/conversations/{id}/compactions"]?.post;
    expect(add?.parameters?.map((p) => p.name)).toContain("dry_run");
    expect(JSON.stringify(add?.responses["200"])).toContain(
      "#/components/schemas/CompactionDryRun",
    );
  });
});

describe("dry runs on DynamoDB Local", () => {
  let client: DynamoDBClient;
  let table: string;
  beforeAll(async () => {
    client = localClient();
    table = await freshTable(client, "dry-run");
  });
  afterAll(() => client?.destroy());

  it("leave every stored item byte-identical: stream, head, sizes, list index", async () => {
    const h = harness({ store: new DynamoConversationStore(client, table) });
    await stored(h, "conv", 10);
    await json(h.request("POST", "/v1/conversations/conv/compactions", { spec: "r:..-3" }), 201);
    const before = await scanWireItems(client, table);
    for (const body of [...REQUESTS, { rule: { reasoning: "strip", keep_last: 20 } }]) {
      await dryRun(h, "conv", body);
    }
    expect(await scanWireItems(client, table)).toEqual(before);
  });
});
