/**
 * Per-tenant limits through the HTTP API (issue 25 items 5 and 6): the
 * request rate and the cap on waiting reads answer 429
 * `/problems/rate-limited` with `Retry-After`, per tenant; identical dry runs
 * on an unchanged conversation call the summarizer once; a tenant over its
 * summary tokens of the day gets 429 `/problems/summary-budget` until the
 * next UTC midnight. The clock is the harness's manual one, and a wait's
 * pauses pass only when a test lets them; expectations are literals.
 */
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../functions/keys.ts";
import type { Summarizer, SummaryRequest } from "../../functions/ports.ts";
import { MemorySummaryBudgets } from "../../functions/store/summary-budgets-memory.ts";
import { ALICE_KEY, BOB_KEY, harness, postMessageTurns } from "../helpers/service.ts";

const LIMITS = { requests_per_second: 1, burst: 2, waiting_reads: 1 };
const COMPACTIONS = "/v1/conversations/c1/compactions";

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Record<string, unknown>;
}

/** A summarizer that counts its calls, each reporting 400 + 100 tokens. */
function countingSummarizer() {
  const calls: SummaryRequest[] = [];
  const summarizer: Summarizer = {
    summarize: async (request) => {
      calls.push(request);
      return {
        text: `SUMMARY ${calls.length}`,
        model: "stub",
        latency_ms: 1,
        input_tokens: 400,
        output_tokens: 100,
      };
    },
  };
  return { calls, summarizer };
}

/**
 * A wait's pauses, each held until the test lets it pass; passing one moves
 * the harness clock by its length, as the harness's own pause does. Waits
 * then last no real time, and nothing moves while a test looks.
 */
function heldPauses() {
  const pending: Array<{ ms: number; pass: () => void }> = [];
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  return {
    sleep: (ms: number) => new Promise<void>((pass) => pending.push({ ms, pass })),
    /** Resolves once `count` pauses are held (a read has reached its wait). */
    async held(count: number): Promise<void> {
      while (pending.length < count) await tick();
    },
    /** Lets pauses pass, in the order they began, until `read` answers. */
    async runOut(answer: Response | Promise<Response>, clock: { now: number }): Promise<Response> {
      const read = Promise.resolve(answer);
      let answered = false;
      void read.finally(() => {
        answered = true;
      });
      while (!answered) {
        const pause = pending.shift();
        if (pause) {
          clock.now += pause.ms;
          pause.pass();
        }
        await tick();
      }
      return read;
    },
  };
}

describe("the request rate", () => {
  it("answers 429 rate-limited with Retry-After past the burst, per tenant, until tokens refill", async () => {
    const h = harness({ limits: LIMITS });
    expect((await h.request("GET", "/v1/conversations")).status).toBe(200);
    expect((await h.request("GET", "/v1/conversations")).status).toBe(200);
    const limited = await h.request("GET", "/v1/conversations");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(await problem(limited)).toEqual({
      type: "/problems/rate-limited",
      title: "Too many requests",
      status: 429,
      detail:
        'tenant "alice" is over its 1 requests a second (burst 2): retry after the Retry-After seconds',
      limit: "requests_per_second",
      retry_after: 1,
    });
    // Bob's bucket is his own.
    expect((await h.request("GET", "/v1/conversations", undefined, BOB_KEY)).status).toBe(200);
    h.clock.now += 1_000;
    expect((await h.request("GET", "/v1/conversations")).status).toBe(200);
    expect((await h.request("GET", "/v1/conversations")).status).toBe(429);
  });

  it("takes a tenant's own limits over the defaults", async () => {
    const h = harness({
      limits: LIMITS,
      tenants: [
        { id: "alice", key_hashes: [hashApiKey(ALICE_KEY)], limits: { burst: 4 } },
        { id: "bob", key_hashes: [hashApiKey(BOB_KEY)] },
      ],
    });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.request("GET", "/v1/conversations")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });

  it("counts nothing before authentication: an unknown key is a 401, not a 429", async () => {
    const h = harness({ limits: LIMITS });
    for (let i = 0; i < 4; i++) {
      expect((await h.request("GET", "/v1/conversations", undefined, "ak_nobody_000")).status).toBe(
        401,
      );
    }
    expect((await h.request("GET", "/v1/conversations")).status).toBe(200);
  });
});

describe("waiting reads", () => {
  it("holds at most the tenant's cap at once; another tenant's and a read without wait still answer", async () => {
    const pauses = heldPauses();
    const h = harness({ limits: { ...LIMITS, burst: 100 }, sleep: pauses.sleep });
    await postMessageTurns(h.request, "c1", 1);
    await postMessageTurns((m, p, b) => h.request(m, p, b, BOB_KEY), "c1", 1);
    h.queue.take();
    const held = h.request("GET", "/v1/conversations/c1/projection?after_turn=0&wait=3");
    await pauses.held(1);
    const refused = await h.request("GET", "/v1/conversations/c1/projection?after_turn=0&wait=5");
    expect(refused.status).toBe(429);
    // The held read's 3 s run out in 3 s on the harness clock.
    expect(refused.headers.get("retry-after")).toBe("3");
    expect(await problem(refused)).toMatchObject({
      type: "/problems/rate-limited",
      limit: "waiting_reads",
      retry_after: 3,
    });
    // Bob waits (and runs out: nothing evaluates), alice reads without a wait.
    const bobs = h.request(
      "GET",
      "/v1/conversations/c1/projection?after_turn=0&wait=1",
      undefined,
      BOB_KEY,
    );
    expect((await pauses.runOut(bobs, h.clock)).status).toBe(503);
    expect((await h.request("GET", "/v1/conversations/c1/projection")).status).toBe(200);
    // The held read ends (its wait runs out on the harness clock); its place is free again.
    expect((await pauses.runOut(held, h.clock)).status).toBe(503);
    const again = h.request("GET", "/v1/conversations/c1/projection?after_turn=0&wait=1");
    expect((await pauses.runOut(again, h.clock)).status).toBe(503);
  });
});

describe("the two limits together", () => {
  it("refuses a waiting read over the cap without taking a token from the bucket", async () => {
    const pauses = heldPauses();
    const h = harness({
      limits: { requests_per_second: 1, burst: 3, waiting_reads: 1 },
      sleep: pauses.sleep,
    });
    await postMessageTurns(h.request, "c1", 1); // token 1
    h.queue.take();
    const held = h.request("GET", "/v1/conversations/c1/projection?after_turn=0&wait=1"); // 2
    await pauses.held(1);
    for (let i = 0; i < 3; i++) {
      const refused = await h.request("GET", "/v1/conversations/c1/projection?after_turn=0&wait=1");
      expect((await problem(refused)).limit).toBe("waiting_reads");
    }
    expect((await h.request("GET", "/v1/conversations/c1")).status).toBe(200); // 3
    expect((await h.request("GET", "/v1/conversations/c1")).status).toBe(429);
    expect((await pauses.runOut(held, h.clock)).status).toBe(503);
  });
});

describe("dry runs and the summary budget", () => {
  it("calls the summarizer once for 20 identical dry runs of an unchanged conversation", async () => {
    const { calls, summarizer } = countingSummarizer();
    const h = harness({ summarizer, dryRunCache: true });
    await postMessageTurns(h.request, "c1", 6);
    const answers = [];
    for (let i = 0; i < 20; i++) {
      const answer = await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..3" });
      expect(answer.status).toBe(200);
      answers.push(await answer.json());
    }
    expect(calls).toHaveLength(1);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    // Another request, or the same on a changed conversation, is asked again.
    expect(
      (await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..2" })).status,
    ).toBe(200);
    expect(calls).toHaveLength(2);
    await postMessageTurns(h.request, "c1", 7); // 0..5 replayed, 6 new
    expect(
      (await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..3" })).status,
    ).toBe(200);
    expect(calls).toHaveLength(3);
    // A compaction added changes the answer too.
    expect((await h.request("POST", COMPACTIONS, { spec: "t:0..0" })).status).toBe(201);
    expect(
      (await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..3" })).status,
    ).toBe(200);
    expect(calls).toHaveLength(4);
    // Bob's identical request is his own.
    await postMessageTurns((m, p, b) => h.request(m, p, b, BOB_KEY), "c1", 6);
    await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..3" }, BOB_KEY);
    expect(calls).toHaveLength(5);
  });

  it("refuses summaries with 429 summary-budget once the day's tokens are used, until UTC midnight", async () => {
    const { calls, summarizer } = countingSummarizer();
    const budgets = new MemorySummaryBudgets();
    const h = harness({ summarizer, summaryBudget: { tokensPerDay: 1_000, budgets } });
    await postMessageTurns(h.request, "c1", 6);
    // The harness clock: 2026-11-29T12:00:00Z. 500 tokens a summary.
    expect(
      (await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..3" })).status,
    ).toBe(200);
    expect((await h.request("POST", COMPACTIONS, { spec: "s:1..2" })).status).toBe(201);
    expect(await budgets.used("alice", "2026-11-29")).toBe(1_000);
    const over = await h.request("POST", `${COMPACTIONS}?dry_run=true`, { spec: "s:1..3" });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("43200");
    expect(await problem(over)).toEqual({
      type: "/problems/summary-budget",
      title: "Summary budget used up",
      status: 429,
      detail:
        'tenant "alice" used its 1000 summary tokens of 2026-11-29 (UTC): manual and dry-run summaries resume at 2026-11-30T00:00:00.000Z',
      summary_tokens_per_day: 1_000,
      summary_tokens_used: 1_000,
      resets_at: "2026-11-30T00:00:00.000Z",
    });
    expect((await h.request("POST", COMPACTIONS, { spec: "s:4..5" })).status).toBe(429);
    expect(calls).toHaveLength(2);
    // A compaction without a summary costs no tokens; another tenant has its own budget.
    expect((await h.request("POST", COMPACTIONS, { spec: "t:0..0" })).status).toBe(201);
    await postMessageTurns((m, p, b) => h.request(m, p, b, BOB_KEY), "c1", 6);
    expect((await h.request("POST", COMPACTIONS, { spec: "s:1..3" }, BOB_KEY)).status).toBe(201);
    // The next UTC day.
    h.clock.now += 12 * 3_600_000;
    expect((await h.request("POST", COMPACTIONS, { spec: "s:4..5" })).status).toBe(201);
    expect(calls).toHaveLength(4);
  });
});
