/**
 * EventBridge publishing (functions/notifications/eventbridge.ts) on moto:
 * notifications put on a bus reach the notifier's queue through a rule on
 * their source, as infra/notifications.ts wires it, each event's detail the
 * notification itself.
 *
 * moto does not enforce PutEvents' size limits (an entry, and the entries of
 * one call, at most 262,144 bytes: it takes a 300 KB entry) nor SQS's
 * 262,144-byte message limit on what a rule forwards. So the test measures
 * what reached moto as AWS documents the sizes ("Calculating PutEvents event
 * entry size": 14 bytes of Time, the UTF-8 bytes of Source, DetailType and
 * Detail) and holds our publisher to the limits.
 */
import {
  CreateEventBusCommand,
  type PutEventsCommandInput,
  PutRuleCommand,
  PutTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import type { Compaction } from "../../core/events.ts";
import { EventBridgePublisher } from "../../functions/notifications/eventbridge.ts";
import { firingNotifications, resetNotifications } from "../../functions/notifications/events.ts";
import { EVENT_SOURCE } from "../../functions/notifications/size.ts";
import type { Notification } from "../../functions/ports.ts";
import { motoEventBridge, motoSqs, queueArn, uniqueName } from "../helpers/moto.ts";

/** PutEvents' limit on an entry and on a call's entries, and SQS's on a message (AWS quotas). */
const LIMIT_BYTES = 262_144;

const ref = { tenant: "alice", conversation: "c1" };

const sqs = motoSqs();
afterAll(() => sqs.destroy());

/** A bus (with the notifier's rule and queue when `rule`), and a publisher whose calls are recorded. */
async function channel(rule: boolean) {
  const client = motoEventBridge();
  const calls: PutEventsCommandInput[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      calls.push(args.input as PutEventsCommandInput);
      return next(args);
    },
    { step: "initialize", name: "recordPutEvents" },
  );
  const bus = uniqueName("notifications");
  await client.send(new CreateEventBusCommand({ Name: bus }));
  const publisher = new EventBridgePublisher(client, bus);
  if (!rule) return { calls, publisher, queueUrl: undefined };
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: bus }));
  const queueUrl = QueueUrl as string;
  await client.send(
    new PutRuleCommand({
      Name: "NotificationRule",
      EventBusName: bus,
      EventPattern: JSON.stringify({ source: [EVENT_SOURCE] }),
    }),
  );
  await client.send(
    new PutTargetsCommand({
      Rule: "NotificationRule",
      EventBusName: bus,
      Targets: [{ Id: "notifier", Arn: await queueArn(sqs, queueUrl) }],
    }),
  );
  return { calls, publisher, queueUrl };
}

/** Every message on a queue (standard: receives until one returns none). */
async function drain(client: SQSClient, queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 30,
      }),
    );
    if (Messages.length === 0) return bodies;
    bodies.push(...Messages.map((message) => message.Body ?? ""));
  }
}

/** A PutEvents entry's size as AWS counts it (our entries set no Time and no Resources; Time counted). */
const entryBytes = (entry: NonNullable<PutEventsCommandInput["Entries"]>[number]) =>
  14 +
  Buffer.byteLength(entry.Source ?? "") +
  Buffer.byteLength(entry.DetailType ?? "") +
  Buffer.byteLength(entry.Detail ?? "");

/** Band `i`: turns 2i..2i+1 and a 4,000-character summary (70 of them are the 290 KB reset). */
const band = (i: number): Compaction & { position: number } => ({
  type: "compaction",
  timestamp: `2026-11-29T12:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.000000Z`,
  from_turn: 2 * i,
  to_turn: 2 * i + 1,
  source: "manual",
  summary: { summary: `band ${i} `.padEnd(4_000, "ü") },
  position: i + 1,
});

const reset = () =>
  resetNotifications(
    ref,
    Array.from({ length: 70 }, (_, i) => band(i)),
    Date.UTC(2026, 10, 29, 13),
  );

describe("EventBridge publishing (moto)", () => {
  // moto spends about 0.6 s of CPU on each event a rule forwards (it builds
  // a JSONPath parser per input path): two events only go through the rule.
  it("reaches the notifier's queue through the rule on its source, each event's detail the whole notification", async () => {
    const { publisher, queueUrl } = await channel(true);
    const notifications = [...firingNotifications(ref, "AUTO#000003", band(3)), ...reset()];
    expect(notifications.map((notification) => notification.body.type)).toEqual([
      "compaction.fired",
      "compactions.reset",
    ]);
    await publisher.publish(notifications);

    const events = (await drain(sqs, queueUrl as string)).map((body) => ({
      bytes: Buffer.byteLength(body),
      event: JSON.parse(body) as { source: string; "detail-type": string; detail: Notification },
    }));
    expect(events.map(({ event }) => event.detail).sort(byId)).toEqual(
      [...notifications].sort(byId),
    );
    for (const { bytes, event } of events) {
      expect(event).toMatchObject({ source: "autocompact", "detail-type": event.detail.body.type });
      // What the rule forwards (the event's envelope around the detail) must fit an SQS message.
      expect(bytes).toBeLessThanOrEqual(LIMIT_BYTES);
    }
  });

  it("puts notifications at most 10 and 262,144 bytes a call", async () => {
    const { calls, publisher } = await channel(false);
    // Twelve firings and a reset of 70 summary bands: more than one call's entries, and more than one call's bytes.
    const notifications: Notification[] = [
      ...Array.from({ length: 12 }, (_, i) =>
        firingNotifications(ref, `AUTO#${i}`, band(i)),
      ).flat(),
      ...reset(),
    ];
    await publisher.publish(notifications);
    const entries = calls.flatMap((call) => call.Entries ?? []);
    expect(entries.map((entry) => JSON.parse(entry.Detail ?? "").id)).toEqual(
      notifications.map((notification) => notification.id),
    );
    expect(calls.length).toBeGreaterThan(2);
    for (const call of calls) {
      const sizes = (call.Entries ?? []).map(entryBytes);
      expect(sizes.length).toBeLessThanOrEqual(10);
      expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(LIMIT_BYTES);
    }
  });
});

const byId = (a: Notification, b: Notification) => a.id.localeCompare(b.id);
