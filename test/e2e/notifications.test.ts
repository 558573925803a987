/**
 * Firing notifications end to end on the local runtime (issue 16): a
 * recorded conversation replayed turn by turn, every firing reaching the
 * tenant's receiver (an HTTP server here) as a Standard Webhooks message the
 * official `standardwebhooks` library verifies; a redelivered evaluation
 * message sending the same message again under the same `webhook-id`; a
 * receiver that fails for a while getting everything once it recovers (the
 * runtime's backoff sleeps are injected: no real 30 s waits); and a reset.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Compaction } from "../../core/events.ts";
import { DEV_TENANT } from "../../functions/local/runtime.ts";
import { encodeMessageBody, messageGroupId } from "../../functions/queue/message.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { startTestRuntime, type TestRuntime } from "../helpers/local-runtime.ts";
import { type Receiver, startReceiver } from "../helpers/notification-receiver.ts";

let runtime: TestRuntime;
let receiver: Receiver;
/** The runtime's waits between delivery attempts, in ms (slept for no time at all). */
const waits: number[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  runtime = await startTestRuntime("autocompact-notify-", {
    notificationBackoff: {
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => 0.999999,
    },
  });
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  await receiver?.close();
});

type Listed = Compaction & { position: number };
const bandOf = ({ position: _, ...band }: Listed) => band;

describe("notifications on the local runtime", () => {
  let secret: string;
  beforeAll(async () => {
    ({ secret } = await runtime.api<{ secret: string }>("PUT", "/v1/notifications", {
      url: receiver.url,
    }));
  });

  it("delivers every firing of a replayed conversation, signed, and a redelivery under the same webhook-id", async () => {
    await runtime.replay("notify-replay", generateConversation({ seed: 314, turns: 30 }));
    await runtime.service.notifications.idle();
    const { compactions } = await runtime.api<{ compactions: Listed[] }>(
      "GET",
      "/v1/conversations/notify-replay/compactions",
    );
    const bands = compactions.filter((c) => c.source === "auto");
    expect(bands.length).toBeGreaterThanOrEqual(2);

    // Every request verifies with the official library under the secret PUT answered.
    for (const request of receiver.requests) {
      expect(() =>
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>),
      ).not.toThrow();
    }
    // Deliveries run concurrently: in the order of the bands (timestamps only increase).
    const delivered = receiver
      .delivered()
      .sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.type.localeCompare(b.type));
    const fired = delivered.filter((d) => d.type === "compaction.fired");
    expect(fired.map((d) => d.data)).toEqual(
      bands.map((band) => ({ conversation: "notify-replay", band: bandOf(band) })),
    );
    expect(fired.map((d) => d.timestamp)).toEqual(bands.map((band) => band.timestamp));
    // Still over the threshold: exactly the bands whose own audit says so.
    const stillOver = delivered.filter((d) => d.type === "compaction.still_over_threshold");
    expect(stillOver.map((d) => d.data)).toEqual(
      bands
        .filter((b) => (b.trigger?.estimated_tokens_after ?? 0) > (b.trigger?.threshold ?? 0))
        .map((band) => ({ conversation: "notify-replay", band: bandOf(band) })),
    );
    expect(new Set(delivered.map((d) => d.id)).size).toBe(delivered.length);

    // The evaluation message of a turn that fired, delivered again (at-least-once).
    const first = bands[0] as Listed;
    const before = receiver.requests.length;
    const message = {
      tenant: DEV_TENANT,
      conversation: "notify-replay",
      turn: first.trigger?.turn as number,
    };
    // Sent again under a deduplication id of its own, as an at-least-once redelivery.
    await runtime.service.queue.send(encodeMessageBody(message), {
      groupId: messageGroupId(message),
      deduplicationId: "redelivered",
    });
    await expect
      .poll(() => receiver.requests.length, { timeout: 30_000, interval: 25 })
      .toBeGreaterThan(before);
    await runtime.service.notifications.idle();
    // The same messages as the first time (the firing, and its still-over event
    // if it had one): the same ids, byte for byte the same bodies.
    const again = receiver.requests.slice(before);
    const originals = receiver.requests
      .slice(0, before)
      .filter((r) => JSON.parse(r.body).data.band?.timestamp === first.timestamp);
    expect(originals.map((r) => r.headers["webhook-id"])).toContain(fired[0]?.id);
    const byId = (requests: typeof again) =>
      Object.fromEntries(requests.map((r) => [String(r.headers["webhook-id"]), r.body]));
    expect(byId(again)).toEqual(byId(originals));
  }, 180_000);

  it("gets every event to a receiver that fails for a while, then delivers a reset", async () => {
    receiver.requests.length = 0;
    waits.length = 0;
    receiver.failing = 7;
    const { compactions } = await runtime.api<{ compactions: Listed[] }>(
      "GET",
      "/v1/conversations/notify-replay/compactions",
    );
    const { removed } = await runtime.api<{ removed: Listed[] }>(
      "DELETE",
      "/v1/conversations/notify-replay/compactions",
    );
    expect(removed).toEqual(compactions);
    await runtime.service.notifications.idle();

    expect(receiver.requests.map((r) => r.status)).toEqual([...Array(7).fill(503), 204]);
    // Between attempts the runtime waited at most 30 s (doubling from 0.5 s).
    expect(waits).toHaveLength(7);
    expect(Math.max(...waits)).toBeLessThan(30_000);
    const [reset] = receiver.delivered();
    expect(reset?.type).toBe("compactions.reset");
    expect(reset?.data).toEqual({ conversation: "notify-replay", removed });
    expect(new Set(receiver.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
  });
});
