/**
 * Idle compaction (issue 29) through the HTTP API and the compactor's
 * evaluation: a deferred decision answers `after_turn` at once with
 * `deferred_until`, the timer fires the band once the conversation rested,
 * and duplicate, late and raced timers give one band or none, never two.
 * Expectations are literals (the numbers of api-wait.test.ts's turns).
 */
import { describe, expect, it } from "vitest";
import { chatToolTurn } from "../helpers/format-samples.ts";
import { harness } from "../helpers/service.ts";

const TURNS = "/v1/conversations/c/turns";
const auto = (extra: Record<string, unknown>) => ({
  conversation: {
    compaction: {
      auto: {
        enabled: true,
        trigger_ratio: 0.5,
        min_turns: 1,
        rule: { keep_first: 0, keep_last: 1, tool_calls: "strip" },
        when: "idle",
        idle_seconds: 300,
        ...extra,
      },
    },
  },
});

// About 600 tokens a turn on a 2,000-token window: turn 1 is over 1,000 (the threshold).
const postTurn = (h: ReturnType<typeof harness>, turn: number, chars = 2_400) =>
  h.request("POST", TURNS, {
    turn,
    model: { context_window: 2_000 },
    format: "openai-chat",
    messages: chatToolTurn(turn, chars),
  });

async function deliver(h: ReturnType<typeof harness>) {
  for (const message of h.queue.take()) await h.evaluate(message);
}

async function bands(h: ReturnType<typeof harness>) {
  const list = await h.request("GET", "/v1/conversations/c/compactions");
  return ((await list.json()) as { compactions: Record<string, unknown>[] }).compactions;
}

/** Two turns posted and evaluated: turn 1 crosses the threshold and is deferred. */
async function deferred(extra: Record<string, unknown> = {}) {
  const h = harness();
  expect((await h.request("PUT", "/v1/conversations/c/config", auto(extra))).status).toBe(200);
  for (const turn of [0, 1]) {
    expect((await postTurn(h, turn)).status).toBe(202);
    await deliver(h);
  }
  return h;
}

describe("when: idle", () => {
  it("defers the firing: after_turn answers at once with deferred_until, and no band yet", async () => {
    const h = await deferred();
    const postedAt = h.clock.now;
    const read = await h.request("GET", "/v1/conversations/c?after_turn=1");
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      decided_through: 1,
      deferred_until: new Date(postedAt + 300_000).toISOString(),
    });
    const view = await h.request("GET", "/v1/conversations/c/projection?after_turn=1");
    expect(await view.json()).toMatchObject({
      deferred_until: new Date(postedAt + 300_000).toISOString(),
    });
    expect(await bands(h)).toEqual([]);
    const timeline = await h.request("GET", "/v1/conversations/c/timeline");
    const turns = ((await timeline.json()) as { turns: Record<string, unknown>[] }).turns;
    expect(turns[1]).toMatchObject({
      fired: null,
      skip_reason: "deferred_until_idle",
      deferred_until: new Date(postedAt + 300_000).toISOString(),
    });
    const timers = h.timers.take();
    expect(timers).toHaveLength(1);
    expect(timers[0]?.dueMillis).toBe(postedAt + 300_000);
    expect(timers[0]?.message).toMatchObject({ turn: 1, idle_from_ms: postedAt });
  });

  it("fires once the conversation rested, with when and rested_seconds in the trigger", async () => {
    const h = await deferred();
    const [timer] = h.timers.take();
    h.clock.now += 300_000;
    const outcome = await h.evaluate(timer?.message ?? expect.unreachable());
    expect(outcome.outcome).toBe("fired");
    const listed = await bands(h);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      from_turn: 0,
      to_turn: 0,
      trigger: { turn: 1, when: "idle", rested_seconds: 300 },
    });
    const timeline = await h.request("GET", "/v1/conversations/c/timeline");
    const turns = ((await timeline.json()) as { turns: Record<string, unknown>[] }).turns;
    expect(turns[1]).toMatchObject({ fired: { from_turn: 0, to_turn: 0 }, skip_reason: null });
    // A duplicate and a late copy of the same timer write nothing more.
    h.clock.now += 3_600_000;
    for (const copy of [timer, timer]) {
      const again = await h.evaluate(copy?.message ?? expect.unreachable());
      expect(again).toMatchObject({ outcome: "skipped", reason: "already_evaluated" });
    }
    expect(await bands(h)).toHaveLength(1);
    const summary = await h.request("GET", "/v1/conversations/c?after_turn=1");
    expect(await summary.json()).not.toHaveProperty("deferred_until");
  });

  it("a timer that lost the race to a newer turn does nothing; the newer turn defers again", async () => {
    const h = await deferred();
    const [first] = h.timers.take();
    h.clock.now += 60_000; // the conversation continues within idle_seconds
    expect((await postTurn(h, 2, 400)).status).toBe(202);
    await deliver(h);
    h.clock.now += 240_000;
    const stale = await h.evaluate(first?.message ?? expect.unreachable());
    expect(stale).toMatchObject({ outcome: "skipped", reason: "stale" });
    expect(await bands(h)).toEqual([]);
    const [second] = h.timers.take();
    expect(second?.message.turn).toBe(2);
    h.clock.now += 60_000;
    expect((await h.evaluate(second?.message ?? expect.unreachable())).outcome).toBe("fired");
    expect(await bands(h)).toHaveLength(1);
  });

  it("timers delivered at once (SQS's duplicates, a restart's redelivery) give one band", async () => {
    const h = await deferred();
    const [timer] = h.timers.take();
    h.clock.now += 300_000;
    const message = timer?.message ?? expect.unreachable();
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map(() => h.evaluate(message)));
    expect(outcomes.filter((o) => o.outcome === "fired")).toHaveLength(1);
    expect(await bands(h)).toHaveLength(1);
  });

  it("a timer racing a new turn: the band lands before it or not at all, never twice", async () => {
    const h = await deferred();
    const [timer] = h.timers.take();
    h.clock.now += 300_000;
    const [fired] = await Promise.all([
      h.evaluate(timer?.message ?? expect.unreachable()),
      postTurn(h, 2, 400),
    ]);
    await deliver(h);
    const listed = await bands(h);
    expect(listed.length).toBe(fired.outcome === "fired" ? 1 : 0);
    for (const late of h.timers.take()) {
      h.clock.now = late.dueMillis;
      await h.evaluate(late.message);
    }
    expect((await bands(h)).length).toBeLessThanOrEqual(1);
  });

  it("an early timer defers again and schedules the rest", async () => {
    const h = await deferred();
    const [timer] = h.timers.take();
    h.clock.now += 100_000;
    const early = await h.evaluate(timer?.message ?? expect.unreachable());
    expect(early).toMatchObject({ outcome: "skipped", reason: "deferred_until_idle" });
    expect(h.timers.take().map((t) => t.dueMillis)).toEqual([timer?.dueMillis]);
    expect(await bands(h)).toEqual([]);
  });

  it("past hard_ratio the band fires at once, whatever when says", async () => {
    const h = harness();
    await h.request("PUT", "/v1/conversations/c/config", auto({ hard_ratio: 0.55 }));
    for (const turn of [0, 1]) {
      await postTurn(h, turn);
      await deliver(h);
    }
    expect(h.timers.take()).toEqual([]);
    const listed = await bands(h);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.trigger).not.toHaveProperty("when");
  });

  it("refuses a hard_ratio at or below trigger_ratio, naming the field", async () => {
    const h = harness();
    const put = await h.request("PUT", "/v1/conversations/c/config", auto({ hard_ratio: 0.5 }));
    expect(put.status).toBe(400);
    expect(JSON.stringify(await put.json())).toContain(
      "conversation.compaction.auto.hard_ratio: must be greater than trigger_ratio (0.5); got 0.5",
    );
  });
});
