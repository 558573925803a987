/**
 * GET /v1/conversations/{id}/timeline (issue 15): for every replayed test
 * conversation it agrees with the bands and GET /conversations/{id}, turn
 * by turn, and it is computed without reading a single event.
 */
import { describe, expect, it } from "vitest";
import { estimateView } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import { EMPTY_TURN_SIZE } from "../../core/sizes.ts";
import { splitTurns } from "../../core/turns.ts";
import type { ConversationStore } from "../../functions/ports.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { compaction, message, request, turnStart } from "../helpers/builders.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { BOB_KEY, harness } from "../helpers/service.ts";

const AUTO = {
  enabled: true,
  trigger_ratio: 0.55,
  min_turns: 4,
  rule: { keep_first: 1, keep_last: 2 },
};
const WINDOW = 9_000;
/** WINDOW * trigger_ratio. */
const THRESHOLD = 4_950;

interface Row {
  turn: number;
  raw_tokens: number;
  projected_tokens: number | null;
  threshold: number | null;
  fired: { position: number | null; from_turn: number; to_turn: number; source: string } | null;
  skip_reason: string | null;
}
interface Listed {
  position: number;
  source: string;
  from_turn: number;
  to_turn: number;
  trigger?: { turn: number; estimated_tokens: number; threshold: number };
}

/** The store, with a count of the calls of each of its methods. */
function counting(inner: ConversationStore) {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
  return { store, calls };
}

type Harness = ReturnType<typeof harness>;

async function json<T>(response: Response | Promise<Response>, status = 200): Promise<T> {
  const answer = await response;
  const body = await answer.json();
  expect(answer.status, JSON.stringify(body)).toBe(status);
  return body as T;
}

/** Posts turns `from..` of `turns` and evaluates each; the estimate each evaluation will see. */
async function replay(h: Harness, id: string, turns: Entry[][], from = 0): Promise<number[]> {
  const seen: number[] = [];
  for (let turn = from; turn < turns.length; turn++) {
    await json(
      h.request("POST", `/v1/conversations/${id}/turns`, {
        turn,
        model: { id: "recorded-model", context_window: WINDOW },
        events: turns[turn],
      }),
      202,
    );
    // What the head says now is what the evaluation after this turn decides on.
    seen[turn] = (
      await json<{ estimated_tokens: number }>(h.request("GET", `/v1/conversations/${id}`))
    ).estimated_tokens;
    for (const m of h.queue.take()) await h.evaluate(m);
  }
  return seen;
}

const timelineOf = async (h: Harness, id: string, key?: string) =>
  (
    await json<{ turns: Row[] }>(
      h.request("GET", `/v1/conversations/${id}/timeline`, undefined, key),
    )
  ).turns;

describe("GET /v1/conversations/{id}/timeline", () => {
  it.each([314, 7, 2026])(
    "agrees with the bands and GET /conversations/{id} for replayed conversation %i, reading no event",
    async (seed) => {
      const { store, calls } = counting(new MemoryConversationStore());
      const h = harness({ store });
      const id = `replayed-${seed}`;
      await json(
        h.request("PUT", `/v1/conversations/${id}/config`, {
          conversation: { compaction: { auto: AUTO } },
        }),
      );
      const turns = splitTurns(generateConversation({ seed, turns: 36 }));
      const seen = await replay(h, id, turns);

      calls.clear();
      const timeline = await timelineOf(h, id);
      expect(calls.get("readTurns")).toBeUndefined();
      expect(calls.get("getTurn")).toBeUndefined();
      expect(calls.get("listTurnSizes")).toBe(1);

      const summary = await json<{ turn_count: number; compactions: Listed[] }>(
        h.request("GET", `/v1/conversations/${id}`),
      );
      expect(timeline.map((row) => row.turn)).toEqual([...turns.keys()]);
      expect(summary.turn_count).toBe(turns.length);
      const autos = summary.compactions.filter((c) => c.source === "auto");
      expect(autos.length).toBeGreaterThan(0);
      for (const band of autos) {
        const trigger = band.trigger as NonNullable<Listed["trigger"]>;
        expect(timeline[trigger.turn]).toMatchObject({
          projected_tokens: trigger.estimated_tokens,
          threshold: trigger.threshold,
          fired: {
            position: band.position,
            from_turn: band.from_turn,
            to_turn: band.to_turn,
            source: "auto",
          },
          skip_reason: null,
        });
      }
      expect(timeline.filter((row) => row.fired !== null)).toHaveLength(autos.length);
      for (const row of timeline) {
        const t = row.turn;
        // Raw: the events of turns 0..t, estimated as they are (no compaction).
        expect(row.raw_tokens).toBe(estimateView(turns.slice(0, t + 1).flat()).estimated_tokens);
        expect(row.projected_tokens).toBe(seen[t]);
        expect(row.threshold).toBe(THRESHOLD);
        if (row.fired) continue;
        const expected =
          t + 1 <= AUTO.min_turns
            ? "min_turns"
            : (seen[t] as number) <= THRESHOLD
              ? "under_threshold"
              : "empty_range";
        expect(row.skip_reason, `turn ${t}`).toBe(expected);
      }
    },
  );

  it("keeps a removed band's firing, without a position", async () => {
    const h = harness();
    await json(
      h.request("PUT", "/v1/conversations/reset/config", {
        conversation: { compaction: { auto: AUTO } },
      }),
    );
    await replay(h, "reset", splitTurns(generateConversation({ seed: 314, turns: 36 })));
    const before = await timelineOf(h, "reset");
    const fired = before.filter((row) => row.fired);
    expect(fired.length).toBeGreaterThan(0);
    await json(h.request("DELETE", "/v1/conversations/reset/compactions?source=auto"));
    const after = await timelineOf(h, "reset");
    expect(after).toEqual(
      before.map((row) => (row.fired ? { ...row, fired: { ...row.fired, position: null } } : row)),
    );
  });

  it("says unknown (null) for a turn skipped as stale, and for one not evaluated yet", async () => {
    const h = harness();
    const turn = (t: number): Entry[] => [
      turnStart(t * 10),
      request(`question ${t}`, t * 10 + 1),
      message(`answer ${t}`, t * 10 + 2),
    ];
    await replay(h, "stale", [turn(0), turn(1)]);
    for (const t of [2, 3]) {
      await json(
        h.request("POST", "/v1/conversations/stale/turns", { turn: t, events: turn(t) }),
        202,
      );
    }
    const [two, three] = h.queue.take();
    // Turn 2's message arrives after turn 3 is stored: skipped as stale, no decision recorded.
    expect(await h.evaluate(two as never)).toMatchObject({ reason: "stale" });
    const pending = await timelineOf(h, "stale");
    expect(
      pending.slice(2).map(({ projected_tokens, threshold, fired, skip_reason }) => ({
        projected_tokens,
        threshold,
        fired,
        skip_reason,
      })),
    ).toEqual([
      { projected_tokens: null, threshold: null, fired: null, skip_reason: null },
      { projected_tokens: null, threshold: null, fired: null, skip_reason: null },
    ]);
    await h.evaluate(three as never);
    const done = await timelineOf(h, "stale");
    // Default config: disabled, trigger_ratio 0.75 of the 9,000-token window turn 1 was posted with.
    expect(done[3]).toMatchObject({ threshold: 6_750, fired: null, skip_reason: "disabled" });
    expect(done[3]?.projected_tokens).toEqual(expect.any(Number));
    expect(done[2]?.skip_reason).toBeNull();
    expect(done[0]?.skip_reason).toBe("disabled");
  });

  it("takes a band stored before evaluations were recorded from its audit", async () => {
    const h = harness();
    const ref = { tenant: "alice", conversation: "legacy" };
    const events = (t: number): Entry[] => [turnStart(t), request("x".repeat(40), t)];
    for (let t = 0; t < 3; t++) {
      await h.store.appendTurn(
        ref,
        { turn: t, events: events(t), size: { ...EMPTY_TURN_SIZE, text: 40 }, digest: `d${t}` },
        { compactions_version: 0 },
        { projected_chars: (t + 1) * 40 },
      );
    }
    const trigger = {
      turn: 2,
      estimated_tokens: 30,
      threshold: 25,
      context_window: 50,
      estimated_tokens_after: 20,
    };
    await h.store.addCompaction(
      ref,
      {
        key: "AUTO#000002",
        after_turn: 2,
        seq: 1,
        compaction: compaction(0, 0, 9, { reasoning: "strip", source: "auto", trigger }),
      },
      { turn_count: 3, compactions_version: 0 },
      {},
    );
    expect(await timelineOf(h, "legacy")).toEqual([
      {
        turn: 0,
        raw_tokens: 10,
        projected_tokens: null,
        threshold: null,
        fired: null,
        skip_reason: null,
      },
      {
        turn: 1,
        raw_tokens: 20,
        projected_tokens: null,
        threshold: null,
        fired: null,
        skip_reason: null,
      },
      {
        turn: 2,
        raw_tokens: 30,
        projected_tokens: 30,
        threshold: 25,
        fired: { position: 1, from_turn: 0, to_turn: 0, source: "auto" },
        skip_reason: null,
      },
    ]);
  });

  it("is another tenant's 404, and a 404 for no such conversation", async () => {
    const h = harness();
    await replay(h, "mine", [[turnStart(0), request("hello", 1)]]);
    const hidden = await h.request("GET", "/v1/conversations/mine/timeline", undefined, BOB_KEY);
    expect(hidden.status).toBe(404);
    expect(hidden.headers.get("content-type")).toContain("application/problem+json");
    expect((await h.request("GET", "/v1/conversations/none/timeline")).status).toBe(404);
  });
});
