/**
 * Deleting a conversation while the compactor and the webhook keep working
 * on it (issue 10 item 8): evaluations delivered before, during (between the
 * tombstone and the purge) and after a delete, duplicated and out of order,
 * are no-ops and leave nothing behind; a turn posted during the delete is a
 * 503 the platform retries; afterwards turn 0 starts a new conversation,
 * whose turns are evaluated at once (the in-process queue keeps SQS's
 * 5-minute deduplication window; issue 25) while the old one's messages are
 * stale. On the in-memory store and on DynamoDB Local.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Entry } from "../../core/events.ts";
import { splitTurns } from "../../core/turns.ts";
import { type EvaluationOutcome, evaluateTurn } from "../../functions/compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import { ConversationService } from "../../functions/conversations/service.ts";
import { CorruptDataError } from "../../functions/errors.ts";
import type {
  ConversationRef,
  ConversationStore,
  EvaluationMessage,
} from "../../functions/ports.ts";
import { InProcessQueue } from "../../functions/queue/in-process.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { partitionKey } from "../../functions/store/dynamodb-keys.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { StaticTenantDirectory } from "../../functions/store/tenants-memory.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { overriding } from "../helpers/overriding.ts";
import { harness } from "../helpers/service.ts";

const ref = { tenant: "alice", conversation: "c" };
const AUTO = { enabled: true, trigger_ratio: 0.6 };
const MODEL = { context_window: 12_000 };
const turns = splitTurns(JSON.parse(JSON.stringify(generateConversation({ seed: 99, turns: 30 }))));

/** A store, and every item its table still holds for a conversation (DynamoDB only). */
interface StoreUnderTest {
  readonly store: ConversationStore;
  readonly rawItems?: (ref: ConversationRef) => Promise<string[]>;
}

const STORES: [string, () => Promise<StoreUnderTest>][] = [
  ["memory", async () => ({ store: new MemoryConversationStore() })],
  [
    "DynamoDB Local",
    async () => {
      const client = localClient();
      const table = await freshTable(client, "delete");
      return {
        store: new DynamoConversationStore(client, table),
        rawItems: async (r) => {
          const { Items = [] } = await client.send(
            new QueryCommand({
              TableName: table,
              ConsistentRead: true,
              KeyConditionExpression: "pk = :pk",
              ExpressionAttributeValues: { ":pk": { S: partitionKey(r) } },
            }),
          );
          return Items.map((item) => item.sk?.S ?? "");
        },
      };
    },
  ],
];

let makeStore: () => Promise<StoreUnderTest> = async () => ({
  store: new MemoryConversationStore(),
});

/** A harness with auto compaction on, over `store` (default: the store under test itself). */
function setup(
  under: StoreUnderTest,
  store = under.store,
  options: Parameters<typeof harness>[0] = {},
) {
  const h = harness({ settings: { config: AUTO }, ...options, store });
  const post = (turn: number) =>
    h.request("POST", "/v1/conversations/c/turns", {
      turn,
      events: turns[turn] as Entry[],
      model: MODEL,
    });
  const append = (turn: number) =>
    h.service.appendTurn({ id: "alice" }, "c", {
      turn,
      events: turns[turn] as Entry[],
      model: MODEL,
    });
  return { ...h, post, append };
}

/** What is left of `ref`: through the port, and (on DynamoDB) every raw item of its partition. */
async function leftovers(store: ConversationStore, under: StoreUnderTest) {
  return {
    head: await store.getHead(ref),
    turns: (await store.readTurns(ref)).length,
    sizes: (await store.listTurnSizes(ref)).length,
    compactions: (await store.listCompactions(ref)).length,
    items: (await under.rawItems?.(ref)) ?? [],
  };
}
const NOTHING = { head: undefined, turns: 0, sizes: 0, compactions: 0, items: [] };

/** Each message twice, newest first: duplicated and reordered deliveries. */
const shuffled = (messages: readonly EvaluationMessage[]) =>
  [...messages].reverse().flatMap((m) => [m, { ...m }]);

const skippedUnknown = { outcome: "skipped", reason: "unknown_turn" } as const;

describe.each(STORES)("deleting a conversation under live traffic (%s)", (_name, factory) => {
  beforeAll(() => {
    makeStore = factory;
  });

  it("makes deliveries during and after the delete no-ops, and leaves nothing behind", async () => {
    const under = await makeStore();
    const outcomes: { during: EvaluationOutcome[]; turnPost?: Response } = { during: [] };
    let h: ReturnType<typeof setup> | undefined;
    let pending: EvaluationMessage[] = [];
    // Between the tombstone and the purge: every pending message, twice and
    // out of order, and the platform posting the next turn.
    const store = overriding(under.store, {
      finishDelete: async (r) => {
        for (const message of shuffled(pending))
          outcomes.during.push(await (h as NonNullable<typeof h>).evaluate(message));
        outcomes.turnPost = await (h as NonNullable<typeof h>).post(20);
        await under.store.finishDelete(r);
      },
    });
    h = setup(under, store);
    for (let t = 0; t < 20; t++) expect((await h.post(t)).status).toBe(202);
    pending = h.queue.take();
    expect(pending).toHaveLength(20);
    // Before: the newest turn fires a band, a duplicate of it is already evaluated.
    const last = pending.at(-1) as EvaluationMessage;
    expect((await h.evaluate(last)).outcome).toBe("fired");
    expect(await h.evaluate(last)).toMatchObject({
      outcome: "skipped",
      reason: "already_evaluated",
    });
    expect(await store.listCompactions(ref)).toHaveLength(1);

    const deleted = await h.request("DELETE", "/v1/conversations/c");
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");

    expect(outcomes.during).toHaveLength(40);
    expect(outcomes.during.filter((o) => o.outcome !== "skipped")).toEqual([]);
    expect(new Set(outcomes.during.map((o) => o.outcome === "skipped" && o.reason))).toEqual(
      new Set(["unknown_turn"]),
    );
    expect(outcomes.turnPost?.status).toBe(503);
    expect(outcomes.turnPost?.headers.get("retry-after")).toBe("1");
    expect(await outcomes.turnPost?.json()).toMatchObject({
      type: "/problems/contention",
      status: 503,
      detail: 'conversation "c" is being deleted: retry the request once the delete has finished',
    });

    // After: every message again, twice and out of order.
    for (const message of shuffled(pending))
      expect(await h.evaluate(message)).toEqual(skippedUnknown);
    expect(await leftovers(store, under)).toEqual(NOTHING);
    expect(h.queue.take()).toEqual([]);
    expect((await h.request("GET", "/v1/conversations/c")).status).toBe(404);
    expect((await h.request("DELETE", "/v1/conversations/c")).status).toBe(204);
  });

  it("starts a new conversation at turn 0 after the delete, with none of the old bands", async () => {
    const h = setup(await makeStore());
    for (let t = 0; t < 20; t++) await h.append(t);
    const old = h.queue.take();
    expect((await h.evaluate(old.at(-1) as EvaluationMessage)).outcome).toBe("fired");
    await h.service.compact({ id: "alice" }, "c", { spec: "r:..-2" });
    await h.service.putConfig({ id: "alice" }, "c", { min_turns: 1 });
    expect((await h.request("DELETE", "/v1/conversations/c")).status).toBe(204);

    const gap = await h.post(20);
    expect(gap.status).toBe(409);
    expect(await gap.json()).toMatchObject({ expected_turn: 0 });
    expect((await h.post(0)).status).toBe(202);
    expect((await h.post(1)).status).toBe(202);
    // The old conversation's messages, the turns the new one has too (0 and 1) included: stale,
    // and they write nothing (no turn of the new one counts as evaluated).
    for (const message of shuffled(old))
      expect(await h.evaluate(message)).toEqual({ outcome: "skipped", reason: "stale" });
    expect(await (await h.request("GET", "/v1/conversations/c")).json()).toMatchObject({
      turn_count: 2,
      evaluated_through: null,
      compactions: [],
    });
    expect(await (await h.request("GET", "/v1/conversations/c/config")).json()).toMatchObject({
      conversation: { compaction: { auto: {} } },
      effective: { min_turns: 5 },
    });
    const events = (await (await h.request("GET", "/v1/conversations/c/events")).json()) as {
      events: Entry[];
    };
    expect(events.events).toEqual([...(turns[0] as Entry[]), ...(turns[1] as Entry[])]);
    for (const message of h.queue.take()) await h.evaluate(message);
    expect(await h.store.getHead(ref)).toMatchObject({
      turn_count: 2,
      evaluated_through: 1,
      compactions_version: 0,
      max_compacted_turn: -1,
    });
  });

  it("never lands a band decided before the tombstone", async () => {
    const under = await makeStore();
    let begun: Promise<boolean> | undefined;
    const store = overriding(under.store, {
      // The decision was made on the live head; the delete begins before its write.
      addCompaction: async (...args: Parameters<ConversationStore["addCompaction"]>) => {
        begun ??= under.store.beginDelete(ref);
        expect(await begun).toBe(true);
        await under.store.addCompaction(...args);
      },
    });
    const h = setup(under, store);
    for (let t = 0; t < 20; t++) await h.append(t);
    const message = { tenant: "alice", conversation: "c", turn: 19 };
    const results = await Promise.all([h.evaluate(message), h.evaluate({ ...message })]);
    expect(results).toEqual([skippedUnknown, skippedUnknown]);
    expect(await under.store.listCompactions(ref)).toEqual([]);
    // The delete that crashed after its tombstone is finished by the next one.
    expect((await h.request("DELETE", "/v1/conversations/c")).status).toBe(204);
    expect(await leftovers(store, under)).toEqual(NOTHING);
  });

  it("never lands a band decided on the conversation before it was deleted and created again at the same numbers", async () => {
    const under = await makeStore();
    let h: ReturnType<typeof setup> | undefined;
    let recreated = false;
    const store = overriding(under.store, {
      // Decided on the first life; before its write, the id is deleted and its 20 turns posted again.
      addCompaction: async (...args: Parameters<ConversationStore["addCompaction"]>) => {
        if (!recreated) {
          recreated = true;
          expect((await h?.request("DELETE", "/v1/conversations/c"))?.status).toBe(204);
          for (let t = 0; t < 20; t++) await h?.append(t);
        }
        await under.store.addCompaction(...args);
      },
    });
    h = setup(under, store);
    for (let t = 0; t < 20; t++) await h.append(t);
    const first = h.queue.take().at(-1) as EvaluationMessage;
    // Its write is refused on the new life; decided again there, the first life's message is stale.
    expect(await h.evaluate(first)).toEqual({ outcome: "skipped", reason: "stale" });
    expect(recreated).toBe(true);
    expect(await under.store.listCompactions(ref)).toEqual([]);
    expect(await under.store.getHead(ref)).toMatchObject({ turn_count: 20, evaluated_through: -1 });
    // The new life's own message fires its own band.
    const second = h.queue.take().at(-1) as EvaluationMessage;
    expect(second.incarnation).not.toBe(first.incarnation);
    expect((await h.evaluate(second)).outcome).toBe("fired");
  });

  it("never marks the conversation created again under its id with a skip decided before the delete", async () => {
    const under = await makeStore();
    let h: ReturnType<typeof setup> | undefined;
    let recreated = false;
    const store = overriding(under.store, {
      // A skip decided on the first life; before its mark, the id is deleted and its 3 turns posted again.
      markEvaluated: async (...args: Parameters<ConversationStore["markEvaluated"]>) => {
        if (!recreated) {
          recreated = true;
          expect((await h?.request("DELETE", "/v1/conversations/c"))?.status).toBe(204);
          for (let t = 0; t < 3; t++) await h?.append(t);
        }
        await under.store.markEvaluated(...args);
      },
    });
    h = setup(under, store);
    for (let t = 0; t < 3; t++) await h.append(t);
    const first = h.queue.take().at(-1) as EvaluationMessage;
    expect(await h.evaluate(first)).toMatchObject({ outcome: "skipped", reason: "min_turns" });
    expect(recreated).toBe(true);
    // The second life's turn 2 is still to be evaluated, by its own message.
    expect(await under.store.getHead(ref)).toMatchObject({ turn_count: 3, evaluated_through: -1 });
    const second = h.queue.take().at(-1) as EvaluationMessage;
    expect(await h.evaluate(second)).toMatchObject({ outcome: "skipped", reason: "min_turns" });
    expect(await under.store.getHead(ref)).toMatchObject({
      evaluated_through: 2,
      decided_through: 2,
    });
  });

  it("skips a summary whose events a delete removed while it read them, and reads answer 404, not 500", async () => {
    const under = await makeStore();
    let racing = true;
    const store = overriding(under.store, {
      // The purge removes the chunks between the read of the TURN items and theirs.
      readTurns: async (...args: Parameters<ConversationStore["readTurns"]>) => {
        if (!racing) return under.store.readTurns(...args);
        await under.store.beginDelete(ref);
        await under.store.finishDelete(ref);
        throw new CorruptDataError("turn 0: 0 of 1 event chunks found");
      },
    });
    const summarizer = {
      summarize: async () => ({ text: "what happened", model: "fake", latency_ms: 1 }),
    };
    const h = setup(under, store, {
      settings: { config: { ...AUTO, rule: { summary: {} } } },
      summarizer,
    });
    const appendWithoutRace = async (count: number) => {
      racing = false;
      for (let t = 0; t < count; t++) await h.append(t);
      racing = true;
    };
    await appendWithoutRace(20);
    expect(await h.evaluate({ tenant: "alice", conversation: "c", turn: 19 })).toEqual(
      skippedUnknown,
    );
    expect(await leftovers(under.store, under)).toEqual(NOTHING);

    for (const path of ["/v1/conversations/c/events", "/v1/conversations/c/projection"]) {
      await appendWithoutRace(3);
      const read = await h.request("GET", path);
      expect(read.status).toBe(404);
      expect(await read.json()).toMatchObject({ type: "/problems/not-found" });
      expect(await leftovers(under.store, under)).toEqual(NOTHING);
    }
  });

  it("leaves nothing behind whichever of a delete, turn posts and evaluations runs first", async () => {
    const under = await makeStore();
    const h = setup(under);
    for (let t = 0; t < 20; t++) await h.append(t);
    const messages = h.queue.take();
    const [deleted, ...rest] = await Promise.all([
      h.request("DELETE", "/v1/conversations/c"),
      ...shuffled(messages.slice(-3)).map((m) => h.evaluate(m)),
      h.post(20),
      h.post(21),
    ]);
    expect(deleted?.status).toBe(204);
    // Each post landed before the tombstone (and went with the delete), met
    // it (503), or came after it (409: a new conversation starts at turn 0).
    for (const post of rest.slice(-2) as Response[]) expect([202, 409, 503]).toContain(post.status);
    expect(await leftovers(h.store, under)).toEqual(NOTHING);
  });
});

describe.each(STORES)(
  "a conversation deleted and created again, on the in-process queue (%s)",
  (_name, factory) => {
    it("evaluates the second life's turns within SQS's deduplication window: its turn 2 is decided", async () => {
      const { store } = await factory();
      // The compactor's log lines and EMF are not the subject here.
      vi.spyOn(process.stdout, "write").mockReturnValue(true);
      vi.spyOn(process.stderr, "write").mockReturnValue(true);
      const settings = { config: AUTO };
      const tenants = new StaticTenantDirectory([{ id: "alice", key_hashes: [] }]);
      // The default window: 5 minutes, as SQS FIFO's.
      const queue = new InProcessQueue({ onError: () => undefined });
      const service = new ConversationService({ store, queue, settings });
      queue.start(
        createCompactorHandler({
          evaluate: (message, options) =>
            evaluateTurn({ store, tenants, settings }, message, options),
          logger: new Logger({ serviceName: "compactor-test", logLevel: "SILENT" }),
          metrics: new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" }),
        }),
      );
      const tenant = { id: "alice" };
      const lives: unknown[] = [];
      try {
        for (const life of [1, 2]) {
          for (let turn = 0; turn < 3; turn++) {
            const posted = await service.appendTurn(tenant, "c", {
              turn,
              events: turns[turn] as Entry[],
              model: MODEL,
            });
            expect(posted).toMatchObject({ status: "created", evaluation_enqueued: true });
          }
          await queue.drain();
          const head = await store.getHead(ref);
          lives.push({
            life,
            turn_count: head?.turn_count,
            evaluated_through: head?.evaluated_through,
            decided_through: head?.decided_through,
            last_decision: head?.last_decision,
          });
          if (life === 1) await service.deleteConversation(tenant, "c");
        }
      } finally {
        await queue.stop();
        vi.restoreAllMocks();
      }
      // Three turns are at most min_turns (5): each life's turn 2 is decided as a skip.
      const decided = {
        turn_count: 3,
        evaluated_through: 2,
        decided_through: 2,
        last_decision: { turn: 2, outcome: "skipped", reason: "min_turns" },
      };
      expect(lives).toEqual([
        { life: 1, ...decided },
        { life: 2, ...decided },
      ]);
      expect(queue.deadLetters()).toEqual([]);
    });
  },
);
