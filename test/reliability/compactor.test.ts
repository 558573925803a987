import { beforeAll, describe, expect, it } from "vitest";
import { estimateStream } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import { compactionsOf } from "../../core/projection.ts";
import { evaluateStream, simulateStream } from "../../core/replay.ts";
import { splitTurns } from "../../core/turns.ts";
import { readStream } from "../../functions/conversations/state.ts";
import { ConditionFailedError } from "../../functions/errors.ts";
import type { ConversationStore } from "../../functions/ports.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { overriding } from "../helpers/overriding.ts";
import { harness } from "../helpers/service.ts";

const ref = { tenant: "alice", conversation: "c" };
const AUTO = { enabled: true, trigger_ratio: 0.6 };
const MODEL = { context_window: 12_000 };

const stream: Entry[] = JSON.parse(JSON.stringify(generateConversation({ seed: 99, turns: 30 })));
const turns = splitTurns(stream);

/** The stores the scenarios run on: the fake, and DynamoDB Local (a fresh table per scenario). */
const STORES: [string, () => Promise<ConversationStore>][] = [
  ["memory", async () => new MemoryConversationStore()],
  [
    "DynamoDB Local",
    async () => {
      const client = localClient();
      return new DynamoConversationStore(client, await freshTable(client, "reliability"));
    },
  ],
];

let makeStore: () => Promise<ConversationStore> = async () => new MemoryConversationStore();

async function setup(store?: ConversationStore) {
  const h = harness({ settings: { config: AUTO }, store: store ?? (await makeStore()) });
  const tenant = { id: "alice" };
  const append = (turn: number) =>
    h.service.appendTurn(tenant, "c", { turn, events: turns[turn] as Entry[], model: MODEL });
  return { ...h, tenant, append };
}

async function autoBands(store: ConversationStore) {
  return (await store.listCompactions(ref)).filter((c) => c.compaction.source === "auto");
}

describe.each(STORES)("the compactor under at-least-once delivery (%s)", (_name, factory) => {
  beforeAll(() => {
    makeStore = factory;
  });

  it("fires exactly the bands a replay of the stream fires (webhook → queue → evaluation, turn by turn)", async () => {
    const h = await setup();
    for (let t = 0; t < turns.length; t++) {
      await h.append(t);
      for (const message of h.queue.take()) await h.evaluate(message);
    }
    const expected = await simulateStream(stream, { layers: [AUTO], model: MODEL });
    const bands = (await autoBands(h.store)).map((c) => ({
      turn: c.after_turn,
      from: c.compaction.from_turn,
      to: c.compaction.to_turn,
    }));
    expect(expected.firings.length).toBeGreaterThan(1);
    expect(bands).toEqual(
      expected.firings.map((f) => ({ turn: f.turn, from: f.from_turn, to: f.to_turn })),
    );
    const head = await h.store.getHead(ref);
    const raw = await readStream(h.store, ref);
    expect(head?.projected_chars).toBe(estimateStream(raw).chars);
    expect(head?.evaluated_through).toBe(turns.length - 1);
  });

  it("adds one band for five concurrent deliveries of one message", async () => {
    const h = await setup();
    for (let t = 0; t < 20; t++) await h.append(t);
    const message = { tenant: "alice", conversation: "c", turn: 19 };
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => h.evaluate(message)));
    expect(outcomes.filter((o) => o.outcome === "fired")).toHaveLength(1);
    expect(await autoBands(h.store)).toHaveLength(1);
  });

  it("fires a strip band reading none of its turns; the view's first read keeps the band's form", async () => {
    const inner = await makeStore();
    const reads: (number | undefined)[][] = [];
    const store = overriding(inner, {
      readTurns: (r, from, to) => {
        reads.push([from, to]);
        return inner.readTurns(r, from, to);
      },
    });
    const h = await setup(store);
    for (let t = 0; t < 20; t++) await h.append(t);
    h.queue.take();
    reads.length = 0;
    expect((await h.evaluate({ tenant: "alice", conversation: "c", turn: 19 })).outcome).toBe(
      "fired",
    );
    expect(reads).toEqual([]);
    expect(await inner.listMaterialized(ref)).toEqual([]);
    const first = await h.service.projection(h.tenant, "c");
    const [band] = await autoBands(inner);
    const forms = await inner.listMaterialized(ref);
    expect(forms.map((f) => [f.key, f.from_turn])).toEqual([
      [band?.key, band?.compaction.from_turn],
    ]);
    expect(await h.service.projection(h.tenant, "c")).toEqual(first);
  });

  it("adds one band for two different messages of the same turn (a replay re-enqueued it)", async () => {
    const h = await setup();
    for (let t = 0; t < 20; t++) await h.append(t);
    await h.append(19);
    const messages = h.queue.take().filter((m) => m.turn === 19);
    expect(messages).toHaveLength(2);
    await Promise.all(messages.map((m) => h.evaluate(m)));
    expect(await autoBands(h.store)).toHaveLength(1);
  });

  it("skips a turn's late message as stale once a newer turn is stored", async () => {
    const h = await setup();
    for (let t = 0; t < 21; t++) await h.append(t);
    expect((await h.evaluate({ tenant: "alice", conversation: "c", turn: 20 })).outcome).toBe(
      "fired",
    );
    expect(await h.evaluate({ tenant: "alice", conversation: "c", turn: 19 })).toMatchObject({
      outcome: "skipped",
      reason: "already_evaluated",
    });
    const h2 = await setup();
    for (let t = 0; t < 21; t++) await h2.append(t);
    expect(await h2.evaluate({ tenant: "alice", conversation: "c", turn: 19 })).toMatchObject({
      outcome: "skipped",
      reason: "stale",
    });
    expect(await autoBands(h2.store)).toHaveLength(0);
    expect((await h2.evaluate({ tenant: "alice", conversation: "c", turn: 20 })).outcome).toBe(
      "fired",
    );
    expect(await autoBands(h2.store)).toHaveLength(1);
  });

  it("does not add a second band when the first delivery crashed after writing", async () => {
    const inner = await makeStore();
    let crash = true;
    const crashing = overriding(inner, {
      addCompaction: async (...args: Parameters<ConversationStore["addCompaction"]>) => {
        await inner.addCompaction(...args);
        if (crash) {
          crash = false;
          throw new Error("Lambda timed out after the write");
        }
      },
    });
    const h = await setup(crashing);
    for (let t = 0; t < 20; t++) await h.append(t);
    const message = { tenant: "alice", conversation: "c", turn: 19 };
    await expect(h.evaluate(message)).rejects.toThrow(/timed out/);
    expect(await h.evaluate(message)).toMatchObject({
      outcome: "skipped",
      reason: "already_evaluated",
    });
    expect(await autoBands(inner)).toHaveLength(1);
  });

  it("evaluates the newest state when messages arrive out of order and keeps the cached estimate exact", async () => {
    const h = await setup();
    for (let t = 0; t < turns.length; t++) await h.append(t);
    const messages = h.queue.take().reverse();
    for (const m of messages) await h.evaluate(m);
    // Only the newest turn's message evaluates (every older one is stale), and
    // on the whole stream it fires once, over the band evaluating the stream file gives.
    const expected = await evaluateStream(stream, { layers: [AUTO], model: MODEL, nowMillis: 0 });
    if (expected.kind !== "fire")
      throw new Error(`the scenario needs a firing, got ${expected.kind}`);
    const bands = await autoBands(h.store);
    expect(bands.map((b) => [b.after_turn, b.compaction.from_turn, b.compaction.to_turn])).toEqual([
      [turns.length - 1, expected.decision.range.from_turn, expected.decision.range.to_turn],
    ]);
    const raw = await readStream(h.store, ref);
    expect((await h.store.getHead(ref))?.projected_chars).toBe(estimateStream(raw).chars);
    expect(compactionsOf(raw)).toHaveLength(bands.length);
  });

  it("keeps the cached estimate exact through manual compactions and resets", async () => {
    const h = await setup();
    for (let t = 0; t < 12; t++) await h.append(t);
    await h.service.compact(h.tenant, "c", { spec: "t=omit:2..5" });
    await h.service.compact(h.tenant, "c", { spec: "r:..-2" });
    await h.append(12);
    for (const m of h.queue.take()) await h.evaluate(m);
    const check = async () => {
      expect((await h.store.getHead(ref))?.projected_chars).toBe(
        estimateStream(await readStream(h.store, ref)).chars,
      );
    };
    await check();
    await h.service.reset(h.tenant, "c", { position: 1 });
    await check();
    await h.service.reset(h.tenant, "c", { source: "manual" });
    await check();
    await h.service.reset(h.tenant, "c", {});
    await check();
    expect((await h.store.getHead(ref))?.max_compacted_turn).toBe(-1);
  });

  it("resets more compactions than one transaction can hold", async () => {
    const h = await setup();
    for (let t = 0; t < 8; t++) await h.append(t);
    for (let i = 0; i < 95; i++)
      await h.service.compact(h.tenant, "c", { spec: `r:${i % 8}..${i % 8}` });
    const { removed } = await h.service.reset(h.tenant, "c", {});
    expect(removed).toHaveLength(95);
    expect(await h.store.listCompactions(ref)).toEqual([]);
    const head = await h.store.getHead(ref);
    expect(head?.projected_chars).toBe(estimateStream(await readStream(h.store, ref)).chars);
    expect(head?.max_compacted_turn).toBe(-1);
  }, 60_000);

  it("reports a reset of 95 bands interrupted after its first transaction, and the next turn's evaluation finishes it", async () => {
    const inner = await makeStore();
    let removals = 0;
    let interrupt = false;
    const interrupted = overriding(inner, {
      removeCompactions: async (...args: Parameters<ConversationStore["removeCompactions"]>) => {
        if (interrupt && ++removals === 2) throw new Error("the function timed out");
        await inner.removeCompactions(...args);
      },
    });
    const h = await setup(interrupted);
    for (let t = 0; t < 8; t++) await h.append(t);
    for (let i = 0; i < 95; i++)
      await h.service.compact(h.tenant, "c", { spec: `r:${i % 8}..${i % 8}` });
    h.queue.take();
    interrupt = true;
    await expect(h.service.reset(h.tenant, "c", {})).rejects.toMatchObject({
      name: "ContentionError",
      status: 503,
      message: expect.stringMatching(/^reset interrupted after removing 90 of 95 compactions/),
    });
    const manual = async () =>
      (await inner.listCompactions(ref)).filter((c) => c.compaction.source === "manual");
    expect(await manual()).toHaveLength(5);
    expect((await inner.getHead(ref))?.removing).toHaveLength(5);
    // The next turn lands without a read; its evaluation finishes the reset first.
    await h.append(8);
    for (const m of h.queue.take()) await h.evaluate(m);
    expect(await manual()).toEqual([]);
    const head = await inner.getHead(ref);
    expect(head?.removing).toBeUndefined();
    expect(head?.projected_chars).toBe(estimateStream(await readStream(inner, ref)).chars);
  }, 60_000);

  it("reuses a band's summary when a lost race makes the evaluation retry", async () => {
    const inner = await makeStore();
    let races = 1;
    const racing = overriding(inner, {
      addCompaction: async (...args: Parameters<ConversationStore["addCompaction"]>) => {
        if (races-- > 0) throw new ConditionFailedError("a concurrent writer won");
        await inner.addCompaction(...args);
      },
    });
    let calls = 0;
    const summarizer = {
      summarize: async () => {
        calls++;
        return { text: "what happened so far", model: "fake", latency_ms: 1 };
      },
    };
    const h = harness({
      settings: { config: { ...AUTO, rule: { summary: {} } } },
      store: racing,
      summarizer,
    });
    for (let t = 0; t < 20; t++) {
      await h.service.appendTurn({ id: "alice" }, "c", {
        turn: t,
        events: turns[t] as Entry[],
        model: MODEL,
      });
    }
    expect((await h.evaluate({ tenant: "alice", conversation: "c", turn: 19 })).outcome).toBe(
      "fired",
    );
    expect(calls).toBe(1);
    expect((await autoBands(inner))[0]?.compaction.summary).toEqual({
      summary: "what happened so far",
    });
  });
});
