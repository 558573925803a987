/**
 * Read your evaluation (issue 12) through the HTTP API: `after_turn` and
 * `wait` on the reads, `wait` on a turn post, the 503 of a wait that runs
 * out, and a stale skip that defers to the newer turn's decision.
 * Expectations are literals.
 */
import { describe, expect, it } from "vitest";
import { chatToolTurn } from "../helpers/format-samples.ts";
import { harness } from "../helpers/service.ts";

const TURNS = "/v1/conversations/c/turns";
const CONFIG = {
  conversation: {
    compaction: {
      auto: {
        enabled: true,
        trigger_ratio: 0.5,
        min_turns: 1,
        rule: { keep_first: 0, keep_last: 1, tool_calls: "strip" },
      },
    },
  },
};

const postTurn = (h: ReturnType<typeof harness>, turn: number, query = "") =>
  h.request("POST", `${TURNS}${query}`, {
    turn,
    model: { context_window: 2_000 },
    format: "openai-chat",
    messages: chatToolTurn(turn, 2_400), // about 600 tokens
  });

/** Delivers every queued evaluation. */
async function deliver(h: ReturnType<typeof harness>) {
  for (const message of h.queue.take()) await h.evaluate(message);
}

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Record<string, unknown>;
}

describe("reads with after_turn", () => {
  it("answer the view once the turn is decided, with how far evaluations got", async () => {
    const h = harness();
    await h.request("PUT", "/v1/conversations/c/config", CONFIG);
    for (const turn of [0, 1]) {
      await postTurn(h, turn);
      await deliver(h);
    }
    const read = await h.request(
      "GET",
      "/v1/conversations/c/projection?format=openai-chat&after_turn=1",
    );
    expect(read.status).toBe(200);
    const body = (await read.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ evaluated_through: 1, decided_through: 1 });
    // Turn 1's evaluation fired (about 1,210 tokens over 1,000): turn 0's result is stripped.
    expect((body.messages as { content: unknown }[])[2]?.content).toBe(
      "[compacted] read_file: success",
    );
    const summary = await h.request("GET", "/v1/conversations/c?after_turn=1");
    expect(await summary.json()).toMatchObject({
      turn_count: 2,
      evaluated_through: 1,
      decided_through: 1,
    });
  });

  it("waits for an evaluation that lands meanwhile", async () => {
    const h = harness();
    await postTurn(h, 0);
    const read = h.request("GET", "/v1/conversations/c/projection?after_turn=0&wait=5");
    await new Promise((resolve) => setTimeout(resolve, 120));
    await deliver(h);
    const answer = await read;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ evaluated_through: 0, decided_through: 0 });
  });

  it("answer 503 evaluation-pending when the wait runs out, never an older view", async () => {
    const h = harness();
    await postTurn(h, 0);
    await deliver(h);
    await postTurn(h, 1);
    for (const path of ["/v1/conversations/c/projection", "/v1/conversations/c"]) {
      const answer = await h.request("GET", `${path}?after_turn=1&wait=0.2`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(await problem(answer)).toEqual({
        type: "/problems/evaluation-pending",
        title: "The evaluation of that turn has not finished",
        status: 503,
        detail:
          "no evaluation has decided on turn 1 yet (decided through 0, after 0.2 s): retry, or wait longer (wait=S, at most 25)",
        after_turn: 1,
        evaluated_through: 0,
        decided_through: 0,
      });
    }
  });

  it("do not count a stale skip: the newer turn's evaluation decides", async () => {
    const h = harness();
    await postTurn(h, 0);
    await postTurn(h, 1);
    const [first, second] = h.queue.take();
    await h.evaluate(first as never);
    // Turn 0 was skipped as stale: evaluated, not decided.
    const pending = await h.request("GET", "/v1/conversations/c?after_turn=0");
    expect(pending.status).toBe(503);
    expect(await problem(pending)).toMatchObject({ evaluated_through: 0, decided_through: null });
    await h.evaluate(second as never);
    const decided = await h.request("GET", "/v1/conversations/c?after_turn=0");
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ evaluated_through: 1, decided_through: 1 });
  });

  it.each([
    [
      "?after_turn=2",
      400,
      "after_turn 2 is not stored yet: the conversation has 1 turn(s), so after_turn can be at most 0",
    ],
    ["?wait=3", 400, "wait needs after_turn: the turn whose evaluation to wait for"],
    ["?after_turn=0&wait=26", 400, "wait must be at most 25 seconds"],
    ["?after_turn=-1", 400, "after_turn must be a whole number of a stored turn"],
  ])("refuse %s with a detail that says so", async (query, status, detail) => {
    const h = harness();
    await postTurn(h, 0);
    const answer = await h.request("GET", `/v1/conversations/c/projection${query}`);
    expect(answer.status).toBe(status);
    expect((await problem(answer)).detail).toContain(detail);
  });
});

describe("POST …/turns?wait=", () => {
  it("answers once the turn is evaluated, with the band it fired", async () => {
    const h = harness();
    await h.request("PUT", "/v1/conversations/c/config", CONFIG);
    await postTurn(h, 0);
    await deliver(h);
    const posted = postTurn(h, 1, "?wait=5");
    await new Promise((resolve) => setTimeout(resolve, 120));
    await deliver(h);
    const answer = await posted;
    expect(answer.status).toBe(202);
    expect(await answer.json()).toEqual({
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
      warnings: [],
    });
  });

  it("answers with the skip reason, and without wait at once with the progress so far", async () => {
    const h = harness();
    const first = await postTurn(h, 0);
    expect(await first.json()).toMatchObject({ evaluated_through: null, decided_through: null });
    await deliver(h);
    const posted = postTurn(h, 1, "?wait=5");
    await new Promise((resolve) => setTimeout(resolve, 120));
    await deliver(h);
    expect(await (await posted).json()).toMatchObject({
      evaluated_through: 1,
      decided_through: 1,
      decision: { turn: 1, outcome: "skipped", reason: "disabled" },
    });
  });

  it("answers 503 evaluation-pending with the turn stored when the wait runs out", async () => {
    const h = harness();
    const answer = await postTurn(h, 0, "?wait=0.1");
    expect(answer.status).toBe(503);
    expect(await problem(answer)).toMatchObject({
      type: "/problems/evaluation-pending",
      after_turn: 0,
      decided_through: null,
    });
    expect(await (await h.request("GET", "/v1/conversations/c")).json()).toMatchObject({
      turn_count: 1,
    });
  });
});
