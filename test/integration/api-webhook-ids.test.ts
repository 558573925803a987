/**
 * Signed turn posts remember their `webhook-id` for the tolerance window
 * (issue 13 item 5): a redelivery of a message is the first delivery's
 * replay, the id reused for another body is a 409 that stores nothing, and
 * the id is free again once the window has passed. On the in-memory receipts
 * and on DynamoDB Local's.
 */
import { afterAll, describe, expect, it } from "vitest";
import { splitTurns } from "../../core/turns.ts";
import { hashApiKey } from "../../functions/keys.ts";
import type { WebhookReceipts } from "../../functions/ports.ts";
import { DynamoWebhookReceipts } from "../../functions/store/webhook-receipts-dynamodb.ts";
import { signWebhook } from "../../functions/webhook-signature.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { harness } from "../helpers/service.ts";
import { offAndUnknown } from "../helpers/warnings.ts";

const turns = splitTurns(JSON.parse(JSON.stringify(generateConversation({ seed: 5, turns: 3 }))));
const secret = `whsec_${Buffer.from("webhook id signing key").toString("base64")}`;
const tenants = [
  { id: "signed", key_hashes: [hashApiKey("ak_signed")], webhook_secrets: [secret] },
  { id: "other", key_hashes: [hashApiKey("ak_other")], webhook_secrets: [secret] },
  { id: "unsigned", key_hashes: [hashApiKey("ak_unsigned")] },
];
const bodyOf = (turn: number) => JSON.stringify({ turn, events: turns[turn] });

/** The warnings of `c` here: compaction off (the default), and no model named. */
const WARNINGS = offAndUnknown("c");
const REUSED = {
  type: "/problems/webhook-id-reused",
  title: "Webhook id already used",
  status: 409,
  detail:
    'webhook-id "msg_1" was already used for another message: send each message under an id of its own (only a redelivery of the same body to the same conversation keeps its id)',
};

function signedHarness(webhookReceipts?: WebhookReceipts) {
  const h = harness({ tenants, ...(webhookReceipts ? { webhookReceipts } : {}) });
  // A whole second a day ahead of the wall clock: DynamoDB Local's TTL deletes
  // items whose expiry is past by the wall clock, whenever it gets to them.
  const start = Math.floor(Date.now() / 1000) * 1000 + 86_400_000;
  h.clock.now = start;
  const nowSeconds = () => Math.floor(h.clock.now / 1000);
  /** Posts `body` signed as message `id` at `timestamp` (default: the clock's now). */
  const deliver = (
    id: string,
    body: string,
    { timestamp = nowSeconds(), key = "ak_signed", conversation = "c" } = {},
  ) =>
    h.request("POST", `/v1/conversations/${conversation}/turns`, body, key, {
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(secret, id, timestamp, body),
    });
  const at = (seconds: number) => {
    h.clock.now = start + seconds * 1000;
  };
  /** The conversation's turn count, undefined while it does not exist. */
  const turnCount = async (tenant = "signed", conversation = "c") =>
    (await h.store.getHead({ tenant, conversation }))?.turn_count;
  return { h, deliver, at, nowSeconds, turnCount };
}

const receiptsUnderTest: [string, () => Promise<WebhookReceipts | undefined>][] = [
  ["in memory", async () => undefined],
];
let dynamo: ReturnType<typeof localClient> | undefined;
afterAll(() => dynamo?.destroy());
receiptsUnderTest.push([
  "on DynamoDB Local",
  async () => {
    dynamo ??= localClient();
    return new DynamoWebhookReceipts(dynamo, await freshTable(dynamo, "webhook-ids"));
  },
]);

describe.each(receiptsUnderTest)("webhook-id reuse, receipts %s", (_name, receipts) => {
  it("answers a redelivery as the first delivery's replay, and a reused id for another body 409 with nothing stored", async () => {
    const { h, deliver, at, turnCount } = signedHarness(await receipts());
    const postedAt = h.clock.now;
    const first = await deliver("msg_1", bodyOf(0));
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({
      status: "created",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
      evaluated_through: null,
      decided_through: null,
      warnings: WARNINGS,
    });
    // A redelivery is signed again, with a later timestamp: the same message all the same.
    at(30);
    const redelivery = await deliver("msg_1", bodyOf(0));
    expect(redelivery.status).toBe(200);
    expect(await redelivery.json()).toEqual({
      status: "replayed",
      turn: 0,
      turn_count: 1,
      evaluation_enqueued: true,
      evaluated_through: null,
      decided_through: null,
      warnings: WARNINGS,
    });
    // Each enqueue carries its post's time (the start of the evaluation lag), and the conversation's life.
    const { incarnation } = (await h.store.getHead({ tenant: "signed", conversation: "c" })) ?? {};
    const message = { tenant: "signed", conversation: "c", turn: 0, incarnation };
    expect(h.queue.take()).toEqual([
      { ...message, posted_at_ms: postedAt },
      { ...message, posted_at_ms: postedAt + 30_000 },
    ]);

    const reused = await deliver("msg_1", bodyOf(1));
    expect(reused.status).toBe(409);
    expect(reused.headers.get("content-type")).toBe("application/problem+json");
    expect(await reused.json()).toEqual(REUSED);
    expect(await turnCount()).toBe(1);
    expect(h.queue.take()).toEqual([]);
    // Into another conversation too: the id names a message, whatever it posts to.
    expect((await deliver("msg_1", bodyOf(0), { conversation: "d" })).status).toBe(409);
    expect(await turnCount("signed", "d")).toBeUndefined();

    // The refused reuse did not replace the receipt; the new body under an id of its own is stored.
    expect((await deliver("msg_1", bodyOf(0))).status).toBe(200);
    expect((await deliver("msg_2", bodyOf(1))).status).toBe(202);
    expect(await turnCount()).toBe(2);
  });

  it("keeps ids per tenant, and only for tenants that sign", async () => {
    const { deliver, turnCount } = signedHarness(await receipts());
    expect((await deliver("msg_1", bodyOf(0))).status).toBe(202);
    expect((await deliver("msg_1", bodyOf(0), { conversation: "e" })).status).toBe(409);
    expect(await turnCount("signed", "e")).toBeUndefined();
    expect((await deliver("msg_1", bodyOf(0), { key: "ak_other", conversation: "e" })).status).toBe(
      202,
    );
    expect(await turnCount("other", "e")).toBe(1);
    // An unsigned tenant's webhook headers are not verified, so its ids are not kept.
    expect((await deliver("msg_1", bodyOf(0), { key: "ak_unsigned" })).status).toBe(202);
    expect((await deliver("msg_1", bodyOf(1), { key: "ak_unsigned" })).status).toBe(202);
    expect(await turnCount("unsigned")).toBe(2);
  });

  it("frees the id once the window after the delivery and its signature has passed", async () => {
    const { deliver, at, nowSeconds, turnCount } = signedHarness(await receipts());
    expect((await deliver("msg_1", bodyOf(0))).status).toBe(202);
    at(299);
    expect((await deliver("msg_1", bodyOf(1))).status).toBe(409);
    at(300);
    expect((await deliver("msg_1", bodyOf(1))).status).toBe(202);
    expect(await turnCount()).toBe(2);
    // Kept from this delivery on: 300 s from now, the earlier receipt's expiry no longer counts.
    at(599);
    expect((await deliver("msg_1", bodyOf(2))).status).toBe(409);
    expect(await turnCount()).toBe(2);

    // A timestamp ahead of the clock: kept until the signature expires, 300 s after it.
    const ahead = nowSeconds() + 200;
    expect((await deliver("msg_ahead", bodyOf(2), { timestamp: ahead })).status).toBe(202);
    at(599 + 499);
    expect((await deliver("msg_ahead", bodyOf(0))).status).toBe(409);
    at(599 + 500);
    expect((await deliver("msg_ahead", bodyOf(0))).status).toBe(200);
    expect(await turnCount()).toBe(3);
  });
});
