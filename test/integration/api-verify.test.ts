/**
 * POST /v1/conversations/{id}/verify[?repair=true] (issue 13 item 9): a
 * drifted head is found and repaired, conditionally; a clean one reports
 * nothing; on the in-memory store and on DynamoDB Local.
 */
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { ConditionFailedError } from "../../functions/errors.ts";
import type { ConversationRef, HeadCounters } from "../../functions/ports.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { HEAD_SK, partitionKey } from "../../functions/store/dynamodb-keys.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { message, request, toolCall, toolResult, turnStart } from "../helpers/builders.ts";
import { DRIFTED_REPORT, storeDriftedConversation, storeWrongSizes } from "../helpers/drifted.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { ALICE_KEY, BOB_KEY, harness } from "../helpers/service.ts";

const REF = { tenant: "alice", conversation: "drifted" };
const VERIFY = "/v1/conversations/drifted/verify";

/** A verify as a CLI or curl sends it: no body, no content-type. */
const verify = (h: ReturnType<typeof harness>, path: string, key = ALICE_KEY) =>
  h.app.request(path, { method: "POST", headers: { authorization: `Bearer ${key}` } });

const countersOf = async (h: ReturnType<typeof harness>, ref: ConversationRef) => {
  const head = await h.store.getHead(ref);
  return {
    turn_count: head?.turn_count,
    projected_chars: head?.projected_chars,
    max_compacted_turn: head?.max_compacted_turn,
    compactions_version: head?.compactions_version,
    evaluated_through: head?.evaluated_through,
  };
};

/** What {@link storeDriftedConversation}'s head must hold (worked out there). */
const REPAIRED = {
  turn_count: 3,
  projected_chars: 254,
  max_compacted_turn: 1,
  compactions_version: 5,
  evaluated_through: 2,
};

describe("POST /v1/conversations/{id}/verify", () => {
  it("reports a drifted head without touching it, then repairs it", async () => {
    const h = harness();
    await storeDriftedConversation(h.store, REF);
    const before = await h.store.getHead(REF);

    const checked = await verify(h, VERIFY);
    expect(checked.status).toBe(200);
    expect(await checked.json()).toEqual({ drift: DRIFTED_REPORT, repaired: false });
    expect(await h.store.getHead(REF)).toEqual(before);

    const repaired = await verify(h, `${VERIFY}?repair=true`);
    expect(repaired.status).toBe(200);
    expect(await repaired.json()).toEqual({ drift: DRIFTED_REPORT, repaired: true });
    expect(await countersOf(h, REF)).toEqual(REPAIRED);
    // 254 characters are 63.5 estimated tokens.
    expect(await (await h.request("GET", "/v1/conversations/drifted")).json()).toMatchObject({
      turn_count: 3,
      evaluated_through: 2,
      estimated_tokens: 63.5,
    });

    expect(await (await verify(h, VERIFY)).json()).toEqual({ drift: [], repaired: false });
    // A repair with nothing to repair writes nothing.
    expect(await (await verify(h, `${VERIFY}?repair=true`)).json()).toEqual({
      drift: [],
      repaired: false,
    });
    // The next manual band takes version 6: the repaired version leaves key MAN#000005 alone.
    const band = await h.request("POST", "/v1/conversations/drifted/compactions", { spec: "r:0" });
    expect(band.status).toBe(201);
    expect(await countersOf(h, REF)).toMatchObject({ compactions_version: 6 });
  });

  it("reports no drift for a conversation written by the service, cross-turn tool names included", async () => {
    const h = harness();
    const id = "/v1/conversations/clean";
    const turns = [
      [request("read it"), toolCall("c1", "fs_read_file", { path: "a.log" })],
      [turnStart(1), toolResult("c1", "x".repeat(200), false, 1), message("read", 1)],
      [turnStart(2), request("again", 2), message("ok", 2)],
    ];
    for (const [turn, events] of turns.entries()) {
      expect((await h.request("POST", `${id}/turns`, { turn, events })).status).toBe(202);
    }
    expect((await h.request("POST", `${id}/compactions`, { spec: "t:0..1" })).status).toBe(201);
    for (const message of h.queue.take()) await h.evaluate(message);
    const head = await h.store.getHead({ tenant: "alice", conversation: "clean" });
    expect(head).toMatchObject({ turn_count: 3, evaluated_through: 2, max_compacted_turn: 1 });
    expect(await (await verify(h, `${id}/verify`)).json()).toEqual({ drift: [], repaired: false });
    expect(await (await verify(h, `${id}/verify?repair=true`)).json()).toEqual({
      drift: [],
      repaired: false,
    });
    expect(await h.store.getHead({ tenant: "alice", conversation: "clean" })).toEqual(head);
  });

  it("reports stored turn sizes that differ from the events, and never rewrites them", async () => {
    const h = harness();
    await storeWrongSizes(h.store, REF);
    const drift = [{ field: "turns[0].size.text", stored: 1, expected: 160 }];
    expect(await (await verify(h, VERIFY)).json()).toEqual({ drift, repaired: false });
    expect(await (await verify(h, `${VERIFY}?repair=true`)).json()).toEqual({
      drift,
      repaired: false,
    });
    expect((await h.store.listTurnSizes(REF))[0]?.size.text).toBe(1);
  });

  it("is tenant-scoped: another tenant's conversation and an unknown one are 404", async () => {
    const h = harness();
    await storeDriftedConversation(h.store, REF);
    const before = await h.store.getHead(REF);
    for (const response of [
      await verify(h, `${VERIFY}?repair=true`, BOB_KEY),
      await verify(h, "/v1/conversations/nobody/verify"),
    ]) {
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/application\/problem\+json/);
    }
    expect(await h.store.getHead(REF)).toEqual(before);
    expect((await verify(h, `${VERIFY}?repair=yes`)).status).toBe(400);
    expect(
      (await h.app.request(VERIFY, { method: "POST", headers: { authorization: "Bearer nope" } }))
        .status,
    ).toBe(401);
  });

  it("re-checks when a write lands between its read and its repair", async () => {
    const calls: HeadCounters[] = [];
    let race: (() => unknown) | undefined;
    class RacingStore extends MemoryConversationStore {
      override async repairHead(ref: ConversationRef, expected: HeadCounters, to: HeadCounters) {
        calls.push(expected);
        const write = race;
        race = undefined;
        await write?.();
        return super.repairHead(ref, expected, to);
      }
    }
    const h = harness({ store: new RacingStore() });
    await storeDriftedConversation(h.store, REF);
    // Turn 3 (20 characters) lands after the verify read the head: uncovered, it adds to the
    // drifted 7, and the head's last turn is 3 now.
    race = () =>
      h.request("POST", "/v1/conversations/drifted/turns", {
        turn: 3,
        events: [turnStart(3), request("t".repeat(10), 3), message("c".repeat(10), 3)],
      });
    const repaired = await verify(h, `${VERIFY}?repair=true`);
    expect(repaired.status).toBe(200);
    expect(await repaired.json()).toEqual({
      drift: [
        { field: "projected_chars", stored: 27, expected: 274 },
        { field: "max_compacted_turn", stored: 0, expected: 1 },
        { field: "compactions_version", stored: 1, expected: 5 },
        { field: "evaluated_through", stored: 9, expected: 3 },
      ],
      repaired: true,
    });
    expect(calls.map((c) => c.turn_count)).toEqual([3, 4]);
    expect(await countersOf(h, REF)).toEqual({
      turn_count: 4,
      projected_chars: 274,
      max_compacted_turn: 1,
      compactions_version: 5,
      evaluated_through: 3,
    });
  });

  it("answers 503 when its repair keeps losing races", async () => {
    class LosingStore extends MemoryConversationStore {
      override async repairHead(): Promise<void> {
        throw new ConditionFailedError("a concurrent write");
      }
    }
    const h = harness({ store: new LosingStore(), retry: { budgetMs: 0 } });
    await storeDriftedConversation(h.store, REF);
    const response = await verify(h, `${VERIFY}?repair=true`);
    expect(response.status).toBe(503);
    expect(await countersOf(h, REF)).toMatchObject({ projected_chars: 7 });
    expect((await verify(h, VERIFY)).status).toBe(200);
  });
});

describe("verify on DynamoDB Local", () => {
  const client = localClient();
  afterAll(() => client.destroy());

  it("finds and repairs a head changed behind the service's back, attributes missing included", async () => {
    const table = await freshTable(client);
    const h = harness({ store: new DynamoConversationStore(client, table) });
    const id = "/v1/conversations/d1";
    const turns = [
      [request("q".repeat(100)), message("a".repeat(60))],
      [turnStart(1), request("r".repeat(40), 1), message("done", 1)],
    ];
    for (const [turn, events] of turns.entries()) {
      expect((await h.request("POST", `${id}/turns`, { turn, events })).status).toBe(202);
    }
    const ref = { tenant: "alice", conversation: "d1" };
    // projected_chars 1000 and max_compacted_turn 5 instead of 160 + 44 = 204 and -1;
    // evaluated_through removed (read as its default, -1).
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: partitionKey(ref) }, sk: { S: HEAD_SK } },
        UpdateExpression:
          "SET projected_chars = :p, max_compacted_turn = :m REMOVE evaluated_through",
        ExpressionAttributeValues: { ":p": { N: "1000" }, ":m": { N: "5" } },
      }),
    );
    const drift = [
      { field: "projected_chars", stored: 1000, expected: 204 },
      { field: "max_compacted_turn", stored: 5, expected: -1 },
    ];
    expect(await (await verify(h, `${id}/verify`)).json()).toEqual({ drift, repaired: false });
    expect(await (await verify(h, `${id}/verify?repair=true`)).json()).toEqual({
      drift,
      repaired: true,
    });
    expect(await countersOf(h, ref)).toEqual({
      turn_count: 2,
      projected_chars: 204,
      max_compacted_turn: -1,
      compactions_version: 0,
      evaluated_through: -1,
    });
    expect(await (await verify(h, `${id}/verify`)).json()).toEqual({ drift: [], repaired: false });
  });
});
