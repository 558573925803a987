/**
 * Reported usage on turn posts (issue 26): the body's `usage` is validated
 * like the rest of the turn, kept on the turn's size record with the
 * projected view's characters once the turn is stored (what that call saw),
 * part of what makes a re-post a replay, and never in the events.
 */
import { describe, expect, it } from "vitest";
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
