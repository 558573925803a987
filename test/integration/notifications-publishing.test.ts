/**
 * Where notifications come from and where endpoints live (issue 16): the
 * compactor's handler publishes a firing (and its still-over-threshold
 * event), publishes it again, under the same ids, when the turn's message is
 * redelivered, retries a failed publish in place and then fails the record
 * (so SQS retries);
 * the tenants' table keeps an endpoint with its secret sealed.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import type { SQSRecord } from "aws-lambda";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FireDecision } from "../../core/auto-compaction.ts";
import type { Compaction } from "../../core/events.ts";
import type { EvaluationOutcome } from "../../functions/compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import { QueueError, SetupError } from "../../functions/errors.ts";
import { RecordingPublisher } from "../../functions/notifications/recording.ts";
import type { Notification, NotificationPublisher } from "../../functions/ports.ts";
import { LocalSecretSealer } from "../../functions/secrets/local.ts";
import { DynamoTenantDirectory } from "../../functions/store/tenants-dynamodb.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";

const band = (after: number): Compaction => ({
  type: "compaction",
  timestamp: "2026-11-29T12:00:00.000000Z",
  from_turn: 1,
  to_turn: 8,
  source: "auto",
  tool_calls: { policy: "strip", request: true, response: true },
  trigger: {
    turn: 11,
    estimated_tokens: 160_000,
    threshold: 150_000,
    context_window: 200_000,
    estimated_tokens_after: after,
  },
});

const decision: FireDecision = {
  fire: true,
  reason: "over_threshold",
  turn_count: 12,
  range: { from_turn: 1, to_turn: 8 },
  estimated_tokens: 160_000,
  threshold: 150_000,
  context_window: 200_000,
};

const fired = (after: number): EvaluationOutcome => ({
  outcome: "fired",
  decision,
  band: { compaction: band(after), estimated_tokens_after: after },
});

function record(id: string): SQSRecord {
  return {
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: JSON.stringify({ tenant: "alice", conversation: "c1", turn: 11 }),
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: "1795000000000",
      SenderId: "test",
      ApproximateFirstReceiveTimestamp: "1795000000000",
      MessageGroupId: "g1",
      MessageDeduplicationId: `d-${id}`,
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:evaluations.fifo",
    awsRegion: "eu-west-1",
  };
}

function handlerWith(
  outcome: () => EvaluationOutcome,
  notifier: NotificationPublisher,
): ReturnType<typeof createCompactorHandler> {
  return createCompactorHandler({
    evaluate: async () => outcome(),
    logger: new Logger({ logLevel: "SILENT" }),
    metrics: new Metrics({ namespace: "Test" }),
    notifier,
    publishing: { sleep: async () => {} },
  });
}

beforeEach(() => {
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the compactor's notifications", () => {
  it("publish a firing that got under the threshold as compaction.fired alone, with the band", async () => {
    const notifier = new RecordingPublisher();
    await handlerWith(() => fired(90_000), notifier)({ Records: [record("m1")] });
    expect(notifier.published.map((n) => [n.tenant, n.body])).toEqual([
      [
        "alice",
        {
          type: "compaction.fired",
          timestamp: "2026-11-29T12:00:00.000000Z",
          data: { conversation: "c1", band: band(90_000) },
        },
      ],
    ]);
  });

  it("publish compaction.still_over_threshold too when the band left the view over it", async () => {
    const notifier = new RecordingPublisher();
    await handlerWith(() => fired(151_000), notifier)({ Records: [record("m1")] });
    expect(notifier.published.map((n) => n.body.type)).toEqual([
      "compaction.fired",
      "compaction.still_over_threshold",
    ]);
    const [first, second] = notifier.published;
    expect(first?.id).not.toBe(second?.id);
  });

  it("publish the same messages again when the turn's message is redelivered after it fired", async () => {
    const notifier = new RecordingPublisher();
    await handlerWith(() => fired(151_000), notifier)({ Records: [record("m1")] });
    const redelivered: EvaluationOutcome = {
      outcome: "skipped",
      reason: "already_evaluated",
      fired: { key: "AUTO#000011", after_turn: 11, seq: 4, compaction: band(151_000) },
    };
    await handlerWith(() => redelivered, notifier)({ Records: [record("m1")] });
    const [a, b, c, d] = notifier.published as Notification[];
    expect([c, d]).toEqual([a, b]);
    // A redelivery of a turn that did not fire publishes nothing.
    await handlerWith(
      () => ({ outcome: "skipped", reason: "already_evaluated" }),
      notifier,
    )({ Records: [record("m1")] });
    expect(notifier.published).toHaveLength(4);
  });

  it("fail the record when publishing fails after its retries in place, so SQS retries it", async () => {
    let attempts = 0;
    const failing: NotificationPublisher = {
      publish: async () => {
        attempts++;
        throw new QueueError("EventBridge refused 1 of 1 notifications");
      },
    };
    const answer = await handlerWith(() => fired(90_000), failing)({ Records: [record("m1")] });
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: "m1" }]);
    expect(attempts).toBe(3);
  });

  it("retry a failed publish in place: a passing refusal neither fails the record nor loses the notification", async () => {
    const notifier = new RecordingPublisher();
    let refusals = 1;
    const flaky: NotificationPublisher = {
      publish: async (notifications) => {
        if (refusals-- > 0) throw new QueueError("EventBridge refused 1 of 1 notifications");
        await notifier.publish(notifications);
      },
    };
    const answer = await handlerWith(() => fired(90_000), flaky)({ Records: [record("m1")] });
    expect(answer.batchItemFailures).toEqual([]);
    expect(notifier.published.map((n) => n.body.type)).toEqual(["compaction.fired"]);
  });
});

describe("endpoints in the tenants' table", () => {
  const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  it("keep the url and events, the secret sealed (never in plain text), and remove them", async () => {
    const client = localClient();
    const table = await freshTable(client, "notification-endpoints");
    const sealer = LocalSecretSealer.ephemeral();
    const directory = new DynamoTenantDirectory(client, table, sealer);
    await directory.createTenant("acme");
    expect(await directory.getEndpoint("acme")).toBeUndefined();

    const endpoint = {
      url: "https://hooks.example.com/a",
      events: ["compaction.fired" as const],
      secret: SECRET,
    };
    await directory.putEndpoint("acme", endpoint);
    expect(await directory.getEndpoint("acme")).toEqual(endpoint);
    const item = unmarshall(
      (
        await client.send(
          new GetItemCommand({
            TableName: table,
            Key: marshall({ pk: "TENANT#acme", sk: "TENANT" }),
          }),
        )
      ).Item ?? {},
    );
    expect(item.notifications.url).toBe("https://hooks.example.com/a");
    expect(item.notifications.secret.key_id).toBe(sealer.keyId);
    expect(JSON.stringify(item)).not.toContain(SECRET.slice(6));

    // Another key does not open it.
    await expect(
      new DynamoTenantDirectory(client, table, LocalSecretSealer.ephemeral()).getEndpoint("acme"),
    ).rejects.toThrow(SetupError);

    // A tenant that does not exist gets no endpoint.
    await expect(directory.putEndpoint("ghost", endpoint)).rejects.toThrow(/no tenant "ghost"/);

    expect(await directory.deleteEndpoint("acme")).toBe(true);
    expect(await directory.deleteEndpoint("acme")).toBe(false);
    expect(await directory.getEndpoint("acme")).toBeUndefined();
    client.destroy();
  });
});
