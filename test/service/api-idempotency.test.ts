/**
 * `Idempotency-Key` on `POST …/compactions` (issue 25): a retry with the same
 * key and body answers the first result (status and body) without a second
 * band or a second summary call; the key with another body is a 409
 * `/problems/idempotency-key-reused`; a retry while the first request still
 * runs is a 409 `/problems/idempotency-key-in-progress` with `Retry-After`.
 */
import { describe, expect, it } from "vitest";
import type { Summarizer, SummaryRequest } from "../../functions/ports.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { overriding } from "../helpers/overriding.ts";
import { BOB_KEY, harness, postMessageTurns } from "../helpers/service.ts";

const PATH = "/v1/conversations/c1/compactions";

/** A summarizer that counts its calls and answers when `gate` lets it. */
function countingSummarizer(gate: () => Promise<void> = async () => {}) {
  const calls: SummaryRequest[] = [];
  const summarizer: Summarizer = {
    summarize: async (request) => {
      calls.push(request);
      await gate();
      return { text: `SUMMARY ${calls.length}`, model: "stub", latency_ms: 1 };
    },
  };
  return { calls, summarizer };
}

/** A harness holding six turns of c1. */
async function sixTurns(summarizer?: Summarizer) {
  const h = harness(summarizer ? { summarizer } : {});
  await postMessageTurns(h.request, "c1", 6);
  return h;
}

const withKey = (key: string) => ({ "idempotency-key": key });

describe("POST …/compactions with Idempotency-Key", () => {
  it("answers a retry with the first answer: one band, one summary call", async () => {
    const { calls, summarizer } = countingSummarizer();
    const { request } = await sixTurns(summarizer);
    const first = await request("POST", PATH, { spec: "s:1..3" }, undefined, withKey("retry-1"));
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody = await first.json();
    expect(firstBody).toMatchObject({ position: 1, summary: { summary: "SUMMARY 1" } });

    const again = await request("POST", PATH, { spec: "s:1..3" }, undefined, withKey("retry-1"));
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(firstBody);
    expect(calls).toHaveLength(1);
    const listed = await (await request("GET", PATH)).json();
    expect((listed as { compactions: unknown[] }).compactions).toHaveLength(1);

    // Without a key, or under another one, the same body is a new request.
    expect((await request("POST", PATH, { spec: "s:1..3" })).status).toBe(201);
    expect(
      (await request("POST", PATH, { spec: "s:1..3" }, undefined, withKey("retry-2"))).status,
    ).toBe(201);
    expect(calls).toHaveLength(3);
  });

  it("refuses the key with another body (409 problem+json) and adds nothing", async () => {
    const { request } = await sixTurns();
    expect(
      (await request("POST", PATH, { spec: "t:0..1" }, undefined, withKey("k-1"))).status,
    ).toBe(201);
    for (const [body, query] of [
      [{ spec: "t:0..2" }, ""],
      [{ spec: "t:0..1" }, "?dry_run=true"],
    ] as const) {
      const reused = await request("POST", `${PATH}${query}`, body, undefined, withKey("k-1"));
      expect(reused.status).toBe(409);
      expect(reused.headers.get("content-type")).toBe("application/problem+json");
      expect(await reused.json()).toEqual({
        type: "/problems/idempotency-key-reused",
        title: "Idempotency key already used",
        status: 409,
        detail:
          'Idempotency-Key "k-1" was already used for another request to this conversation: send each request under a key of its own (only a retry of the same body keeps its key)',
      });
    }
    const listed = (await (await request("GET", PATH)).json()) as { compactions: unknown[] };
    expect(listed.compactions).toHaveLength(1);
    // Keys are the tenant's own: bob's conversation c1 does not exist, whatever the key.
    expect((await request("POST", PATH, { spec: "t:0..2" }, BOB_KEY, withKey("k-1"))).status).toBe(
      404,
    );
  });

  it("answers a retry during the first request with 409 in-progress and Retry-After", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { calls, summarizer } = countingSummarizer(() => held);
    const { request } = await sixTurns(summarizer);
    const first = request("POST", PATH, { spec: "s:1..3" }, undefined, withKey("slow"));
    while (calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const during = await request("POST", PATH, { spec: "s:1..3" }, undefined, withKey("slow"));
    expect(during.status).toBe(409);
    expect(during.headers.get("retry-after")).toBe("1");
    expect(((await during.json()) as { type: string }).type).toBe(
      "/problems/idempotency-key-in-progress",
    );
    release();
    expect((await first).status).toBe(201);
    const after = await request("POST", PATH, { spec: "s:1..3" }, undefined, withKey("slow"));
    expect(after.status).toBe(201);
    expect(calls).toHaveLength(1);
  });

  it("lets a failed request's retry run again, and keeps a dry run's answer too", async () => {
    const { request } = await sixTurns();
    const failed = await request("POST", PATH, { spec: "t:40..50" }, undefined, withKey("bad"));
    expect(failed.status).toBe(422);
    const retried = await request("POST", PATH, { spec: "t:40..50" }, undefined, withKey("bad"));
    expect(retried.status).toBe(422);

    const dry = await request(
      "POST",
      `${PATH}?dry_run=true`,
      { spec: "t:0..1" },
      undefined,
      withKey("dry"),
    );
    expect(dry.status).toBe(200);
    const dryAgain = await request(
      "POST",
      `${PATH}?dry_run=true`,
      { spec: "t:0..1" },
      undefined,
      withKey("dry"),
    );
    expect(dryAgain.status).toBe(200);
    expect(dryAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(await dryAgain.json()).toEqual(await dry.json());
  });

  it("still answers the band when its answer cannot be kept, and says so as a server fault", async () => {
    const faults: unknown[] = [];
    const store = overriding(new MemoryConversationStore(), {
      finishIdempotencyKey: async () => {
        throw new Error("item too large");
      },
    });
    const { request } = harness({ store, onServerError: (error) => faults.push(error) });
    await postMessageTurns(request, "c1", 6);
    const first = await request("POST", PATH, { spec: "t:0..1" }, undefined, withKey("k"));
    expect(first.status).toBe(201);
    expect(faults).toEqual([new Error("item too large")]);
  });

  it("refuses a key that is not 1 to 255 visible ASCII characters (400)", async () => {
    const { request } = await sixTurns();
    for (const key of ["x".repeat(256), "with space", "clé"]) {
      const answer = await request("POST", PATH, { spec: "t:0..1" }, undefined, withKey(key));
      expect(answer.status).toBe(400);
    }
    const listed = (await (await request("GET", PATH)).json()) as { compactions: unknown[] };
    expect(listed.compactions).toEqual([]);
  });

  it("is in the OpenAPI document: the header and the 409", async () => {
    const { request } = await sixTurns();
    const document = (await (await request("GET", "/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>>;
    };
    const operation = document.paths["/v1/conversations/{id}/compactions"]?.post as unknown as {
      parameters: { name: string; in: string }[];
      responses: Record<string, unknown>;
    };
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({ name: "idempotency-key", in: "header" }),
    );
    expect(JSON.stringify(operation.responses["409"])).toContain("IdempotencyConflictProblem");
    expect(operation.responses["201"]).toMatchObject({
      headers: { "idempotent-replayed": { schema: { type: "string", enum: ["true"] } } },
    });
  });
});
