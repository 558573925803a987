/**
 * Reported usage on turn posts (issue 26): the body's `usage` is validated
 * like the rest of the turn, kept on the turn's size record with the
 * projected view's characters once the turn is stored (what that call saw),
 * part of what makes a re-post a replay, and never in the events; the
 * calibrated estimator fitted to it (core/calibration.ts), as
 * `GET /v1/conversations/{id}` answers it and a band's trigger records it.
 */
import { describe, expect, it } from "vitest";
import { splitTurns } from "../../core/turns.ts";
import { strippableTurns } from "../helpers/builders.ts";
import { CHAT_README_TURN } from "../helpers/format-samples.ts";
import { harness } from "../helpers/service.ts";

const TURNS = "/v1/conversations/c/turns";
const REF = { tenant: "alice", conversation: "c" };

const ask = (content: string) => ({
  type: "chat_request",
  timestamp: "2026-11-29T12:00:00Z",
  content,
});
const start = { type: "turn_start", timestamp: "2026-11-29T12:00:00Z" };

describe("POST …/turns with usage", () => {
  it("keeps the usage on the size record with the view it saw, not in the events", async () => {
    const h = harness();
    const usage = { input_tokens: 5_010, output_tokens: 20, cached_input_tokens: 4_000, calls: 2 };
    expect(
      (await h.request("POST", TURNS, { turn: 0, events: [ask("a".repeat(40))], usage })).status,
    ).toBe(202);
    expect(
      (await h.request("POST", TURNS, { turn: 1, events: [start, ask("b".repeat(60))] })).status,
    ).toBe(202);
    expect(
      (
        await h.request("POST", TURNS, {
          turn: 2,
          events: [start, ask("c".repeat(100))],
          usage: { input_tokens: 5_060 },
        })
      ).status,
    ).toBe(202);
    const records = await h.store.listTurnSizes(REF);
    // The view once each turn was stored: 40, then 40 + 60 + 100 bytes.
    expect(records.map((r) => r.usage)).toEqual([
      { ...usage, view_chars: 40 },
      undefined,
      { input_tokens: 5_060, view_chars: 200 },
    ]);
    const { events } = (await (await h.request("GET", "/v1/conversations/c/events")).json()) as {
      events: unknown[];
    };
    expect(JSON.stringify(events)).not.toContain("input_tokens");
  });

  it("takes usage on a provider format's post too", async () => {
    const h = harness();
    const posted = await h.request("POST", TURNS, {
      turn: 0,
      format: "openai-chat",
      messages: CHAT_README_TURN,
      usage: { input_tokens: 900, output_tokens: 31 },
    });
    expect(posted.status).toBe(202);
    // 21 + 9 + 20 + 33 + 25 bytes (api-formats.test.ts counts the same turn).
    expect((await h.store.listTurnSizes(REF))[0]?.usage).toEqual({
      input_tokens: 900,
      output_tokens: 31,
      view_chars: 108,
    });
  });

  it("reads the usage from the SDK's response object a format post carries", async () => {
    const h = harness();
    // An Anthropic Message's usage: 25 uncached + 6,000 read + 500 written from the cache.
    const response = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "ok" }],
      usage: {
        input_tokens: 25,
        cache_read_input_tokens: 6_000,
        cache_creation_input_tokens: 500,
        output_tokens: 31,
      },
    };
    const posted = await h.request("POST", TURNS, {
      turn: 0,
      format: "anthropic-messages",
      messages: [{ role: "user", content: "hello" }],
      response,
    });
    expect(posted.status).toBe(202);
    expect((await h.store.listTurnSizes(REF))[0]?.usage).toEqual({
      input_tokens: 6_525,
      output_tokens: 31,
      cached_input_tokens: 6_000,
      view_chars: 5,
    });
    const both = await h.request("POST", TURNS, {
      turn: 1,
      format: "anthropic-messages",
      messages: [{ role: "user", content: "again" }],
      response,
      usage: { input_tokens: 1 },
    });
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({
      detail: "post either `usage` or the `response` it is read from, not both",
    });
    const missing = await h.request("POST", TURNS, {
      turn: 1,
      format: "openai-chat",
      messages: [{ role: "user", content: "again" }],
      response: { id: "chatcmpl-1", object: "chat.completion" },
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      errors: [{ pointer: "/response/usage" }],
    });
  });

  it("replays an identical post and refuses one whose usage differs", async () => {
    const h = harness();
    const body = { turn: 0, events: [ask("hello")], usage: { input_tokens: 10 } };
    expect((await h.request("POST", TURNS, body)).status).toBe(202);
    expect(await (await h.request("POST", TURNS, body)).json()).toMatchObject({
      status: "replayed",
    });
    const other = await h.request("POST", TURNS, { ...body, usage: { input_tokens: 11 } });
    expect(other.status).toBe(409);
  });

  it("refuses bad usage with a located 400", async () => {
    const h = harness();
    const response = await h.request("POST", TURNS, {
      turn: 0,
      events: [ask("hello")],
      usage: { input_tokens: 10, cached_input_tokens: 11 },
    });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { detail: string; errors: unknown[] };
    expect(problem.detail).toBe(
      "the turn is invalid: /usage/cached_input_tokens: must be at most input_tokens (input_tokens counts cached tokens too)",
    );
    expect(problem.errors).toEqual([
      {
        pointer: "/usage/cached_input_tokens",
        detail: "must be at most input_tokens (input_tokens counts cached tokens too)",
      },
    ]);
    expect(await h.store.getHead(REF)).toBeUndefined();
  });
});

describe("the calibrated estimate on the service", () => {
  /** Turns of 1,000 request bytes, each reporting 0.3 · view + 5,000 tokens (exactly). */
  async function post(h: ReturnType<typeof harness>, turns: number, withUsage: number) {
    for (let turn = 0; turn < turns; turn++) {
      const view = 1_000 * (turn + 1);
      const posted = await h.request("POST", TURNS, {
        turn,
        model: { context_window: 8_000 },
        events: turn === 0 ? [ask("x".repeat(1_000))] : [start, ask("x".repeat(1_000))],
        ...(turn < withUsage
          ? { usage: { input_tokens: 0.3 * view + 4_900, output_tokens: 100 } }
          : {}),
      });
      expect(posted.status).toBe(202);
    }
  }

  const summary = async (h: ReturnType<typeof harness>) =>
    (await (await h.request("GET", "/v1/conversations/c")).json()) as {
      estimated_tokens: number;
      estimator: Record<string, unknown>;
    };

  it("answers chars / 4 until 3 turns carry usage, then the fit", async () => {
    const h = harness();
    await post(h, 2, 2);
    expect(await summary(h)).toMatchObject({
      estimated_tokens: 500,
      estimator: { kind: "chars", tokens_per_char: 0.25, overhead_tokens: 0, turns_with_usage: 2 },
    });
    const h3 = harness();
    await post(h3, 3, 3);
    // 0.3 · 3,000 + 5,000.
    expect(await summary(h3)).toEqual(
      expect.objectContaining({
        estimated_tokens: 5_900,
        estimator: {
          kind: "calibrated",
          tokens_per_char: 0.3,
          overhead_tokens: 5_000,
          turns_with_usage: 3,
        },
      }),
    );
  });

  it("fires on the calibrated estimate and records the estimator in the band's trigger", async () => {
    const h = harness();
    const config = { conversation: { compaction: { auto: { enabled: true, min_turns: 0 } } } };
    expect((await h.request("PUT", "/v1/conversations/c/config", config)).status).toBe(200);
    await post(h, 5, 3);
    // chars / 4 would be 1,250 tokens, far under the threshold of 6,000; the fit says 6,500.
    const outcome = await h.evaluate({ tenant: "alice", conversation: "c", turn: 4 });
    expect(outcome).toMatchObject({ outcome: "fired" });
    const [band] = await h.store.listCompactions(REF);
    expect(band?.compaction.trigger).toEqual({
      turn: 4,
      estimated_tokens: 6_500,
      threshold: 6_000,
      context_window: 8_000,
      estimated_tokens_after: 6_500,
      estimator: "calibrated",
      tokens_per_char: 0.3,
      overhead_tokens: 5_000,
    });
  });
});

describe("the API's estimates in the estimator's tokens", () => {
  it("the timeline, the projection and a dry run answer 0.3 · chars + 5,000 once fitted", async () => {
    const h = harness();
    const config = { conversation: { compaction: { auto: { enabled: true, min_turns: 0 } } } };
    expect((await h.request("PUT", "/v1/conversations/c/config", config)).status).toBe(200);
    // Five turns of 1,000 bytes, the first three reporting 0.3 · view + 5,000 tokens.
    for (let turn = 0; turn < 5; turn++) {
      const view = 1_000 * (turn + 1);
      await h.request("POST", TURNS, {
        turn,
        model: { context_window: 8_000 },
        events: turn === 0 ? [ask("x".repeat(1_000))] : [start, ask("x".repeat(1_000))],
        ...(turn < 3 ? { usage: { input_tokens: 0.3 * view + 4_900, output_tokens: 100 } } : {}),
      });
    }
    await h.evaluate({ tenant: "alice", conversation: "c", turn: 4 });
    const { turns } = (await (await h.request("GET", "/v1/conversations/c/timeline")).json()) as {
      turns: { raw_tokens: number; projected_tokens: number | null }[];
    };
    // Raw: 0.3 · 1,000(t + 1) + 5,000; the evaluation after turn 4 saw 6,500 (chars / 4: 1,250).
    expect(turns.map((t) => t.raw_tokens)).toEqual([5_300, 5_600, 5_900, 6_200, 6_500]);
    expect(turns[4]?.projected_tokens).toBe(6_500);
    const projection = (await (
      await h.request("GET", "/v1/conversations/c/projection")
    ).json()) as {
      estimated_tokens: number;
    };
    expect(projection.estimated_tokens).toBe(6_500);
    const dry = await h.request("POST", "/v1/conversations/c/compactions?dry_run=true", {
      spec: "t:1..2",
    });
    expect(await dry.json()).toMatchObject({
      estimated_tokens_before: 6_500,
      estimated_tokens_after: 6_500,
    });
  });
});

/** Posts test/helpers/builders.ts's five strippable turns (500 tokens by chars / 4), one per request. */
async function postStrippable(h: ReturnType<typeof harness>, window: number) {
  const turns = splitTurns(strippableTurns(5));
  for (const [turn, events] of turns.entries()) {
    const posted = await h.request("POST", TURNS, {
      turn,
      model: { context_window: window },
      events,
    });
    expect(posted.status).toBe(202);
  }
}

describe("the guards on the service", () => {
  it("records a low_gain skip with its gain in the decision and the timeline", async () => {
    const h = harness();
    const auto = { enabled: true, min_turns: 0, min_gain_tokens: 200 };
    const config = { conversation: { compaction: { auto } } };
    expect((await h.request("PUT", "/v1/conversations/c/config", config)).status).toBe(200);
    // 500 tokens over the threshold of 450; the band [1, 1] strips 25 tokens.
    await postStrippable(h, 600);
    expect(await h.evaluate({ tenant: "alice", conversation: "c", turn: 4 })).toMatchObject({
      outcome: "skipped",
      reason: "low_gain",
      decision: { gain_tokens: 25, estimated_tokens: 500, range: { from_turn: 1, to_turn: 1 } },
    });
    expect((await h.store.getHead(REF))?.last_decision).toEqual({
      turn: 4,
      outcome: "skipped",
      reason: "low_gain",
      gain_tokens: 25,
    });
    const { turns } = (await (await h.request("GET", "/v1/conversations/c/timeline")).json()) as {
      turns: Record<string, unknown>[];
    };
    expect(turns[4]).toEqual({
      turn: 4,
      raw_tokens: 500,
      projected_tokens: 500,
      threshold: 450,
      fired: null,
      skip_reason: "low_gain",
      gain_tokens: 25,
    });
    expect(await h.store.listCompactions(REF)).toEqual([]);
  });

  it("overrides the guards past the window and names them in the band's trigger", async () => {
    const h = harness();
    const auto = { enabled: true, min_turns: 0, min_gain_tokens: 200, min_band_turns: 2 };
    const config = { conversation: { compaction: { auto } } };
    expect((await h.request("PUT", "/v1/conversations/c/config", config)).status).toBe(200);
    // 500 tokens exceed this window itself.
    await postStrippable(h, 499);
    expect(await h.evaluate({ tenant: "alice", conversation: "c", turn: 4 })).toMatchObject({
      outcome: "fired",
    });
    const [band] = await h.store.listCompactions(REF);
    expect(band?.compaction.trigger).toEqual({
      turn: 4,
      estimated_tokens: 500,
      threshold: 374.25,
      context_window: 499,
      estimated_tokens_after: 475,
      guard_overridden: ["short_range", "low_gain"],
    });
  });
});
