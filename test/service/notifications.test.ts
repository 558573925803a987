/**
 * Firing notifications (issue 16), in-process: the `/v1/notifications`
 * routes and the URLs they refuse on the deployed configuration; the reset's
 * notification; one signed delivery (verified with the official
 * `standardwebhooks` library) to a receiver, pinned to the address checked;
 * the notifier Lambda's handler; the EventBridge publisher; and the local
 * runtime's retries (backoff capped at 30 s, injected sleep).
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import type { SQSRecord } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { InvalidInputError } from "../../core/errors.ts";
import { QueueError } from "../../functions/errors.ts";
import { deliverNotification } from "../../functions/notifications/delivery.ts";
import { EventBridgePublisher } from "../../functions/notifications/eventbridge.ts";
import { LocalNotificationDelivery } from "../../functions/notifications/local-delivery.ts";
import { RecordingPublisher } from "../../functions/notifications/recording.ts";
import {
  AWS_URL_POLICY,
  LOCAL_URL_POLICY,
  type Resolver,
} from "../../functions/notifications/url-safety.ts";
import { createNotifierHandler } from "../../functions/notifier/handler.ts";
import type { Notification, NotificationPublisher } from "../../functions/ports.ts";
import { MemoryNotificationEndpoints } from "../../functions/store/tenants-memory.ts";
import { type Receiver, startReceiver } from "../helpers/notification-receiver.ts";
import { BOB_KEY, harness, postMessageTurns } from "../helpers/service.ts";

/** A resolver with fixed answers; any other name does not resolve. */
const resolver =
  (answers: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

const DNS = resolver({
  "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "internal.example.com": ["10.1.2.3"],
  "sneaky.example.com": ["93.184.215.14", "169.254.169.254"],
});

const notification: Notification = {
  tenant: "alice",
  id: "msg_fixed0000000000000000000000000",
  body: {
    type: "compaction.fired",
    timestamp: "2026-11-29T12:00:00.000000Z",
    data: { conversation: "c1", band: { type: "compaction", from_turn: 1, to_turn: 3 } },
  },
};

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  receiver.requests.length = 0;
  receiver.failing = 0;
});

describe("PUT/GET/DELETE /v1/notifications", () => {
  const h = () =>
    harness({
      notifications: {
        endpoints: new MemoryNotificationEndpoints(),
        policy: AWS_URL_POLICY,
        resolve: DNS,
      },
    });

  it("registers an endpoint, answers its whsec_ secret once, replaces it, and removes it", async () => {
    const { request } = h();
    const put = await request("PUT", "/v1/notifications", {
      url: "https://hooks.example.com/autocompact",
      events: ["compaction.fired", "compactions.reset"],
    });
    expect(put.status).toBe(200);
    const registered = (await put.json()) as { url: string; events: string[]; secret: string };
    expect(registered).toMatchObject({
      url: "https://hooks.example.com/autocompact",
      events: ["compaction.fired", "compactions.reset"],
    });
    expect(registered.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(registered.secret)).not.toThrow();

    const get = await request("GET", "/v1/notifications");
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({
      url: "https://hooks.example.com/autocompact",
      events: ["compaction.fired", "compactions.reset"],
    });

    const again = (await (
      await request("PUT", "/v1/notifications", { url: "https://hooks.example.com/v2" })
    ).json()) as { secret: string; events?: string[] };
    expect(again.secret).not.toBe(registered.secret);
    expect(again.events).toBeUndefined();
    // Another tenant has none.
    expect((await request("GET", "/v1/notifications", undefined, BOB_KEY)).status).toBe(404);

    expect((await request("DELETE", "/v1/notifications")).status).toBe(204);
    expect((await request("DELETE", "/v1/notifications")).status).toBe(204);
    const gone = await request("GET", "/v1/notifications");
    expect(gone.status).toBe(404);
    expect(gone.headers.get("content-type")).toContain("application/problem+json");
    expect(((await gone.json()) as { detail: string }).detail).toContain("PUT /v1/notifications");
  });

  it("needs the API key", async () => {
    const { app } = h();
    for (const method of ["GET", "PUT", "DELETE"]) {
      const response = await app.request("/v1/notifications", {
        method,
        headers: { "content-type": "application/json" },
        ...(method === "PUT"
          ? { body: JSON.stringify({ url: "https://hooks.example.com/" }) }
          : {}),
      });
      expect(response.status).toBe(401);
    }
  });

  it.each([
    ["http://169.254.169.254/latest/meta-data/", "must use https"],
    ["https://169.254.169.254/latest/meta-data/", "is a linkLocal address"],
    ["https://10.0.0.1/hook", "is a private address"],
    ["https://[fd00:ec2::254]/latest", "is a uniqueLocal address"],
    ["https://127.0.0.1:8443/hook", "is a loopback address"],
    ["https://100.64.0.7/hook", "is a carrierGradeNat address"],
    ["https://0.0.0.0/hook", "is a unspecified address"],
    ["https://[::ffff:10.0.0.1]/hook", "is a private address"],
    ["https://internal.example.com/hook", "resolves to 10.1.2.3, which is a private address"],
    [
      "https://sneaky.example.com/hook",
      "resolves to 169.254.169.254, which is a linkLocal address",
    ],
    ["https://nowhere.example.com/hook", "does not resolve"],
    ["https://user:pw@hooks.example.com/hook", "must not carry credentials"],
    ["hooks.example.com/hook", "is not an absolute URL"],
  ])("refuses %s on the deployed configuration (400, %s)", async (url, detail) => {
    const { request } = h();
    const response = await request("PUT", "/v1/notifications", { url });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as {
      type: string;
      detail: string;
      errors: { pointer: string }[];
    };
    expect(problem.type).toBe("/problems/invalid-request");
    expect(problem.detail).toContain(detail);
    expect(problem.errors[0]?.pointer).toBe("/url");
    expect((await request("GET", "/v1/notifications")).status).toBe(404);
  });

  it("refuses an unknown event type and unknown keys", async () => {
    const { request } = h();
    for (const body of [
      { url: "https://hooks.example.com/", events: ["compaction.deleted"] },
      { url: "https://hooks.example.com/", secret: "whsec_c2VjcmV0" },
      { url: "https://hooks.example.com/", events: [] },
    ]) {
      expect((await request("PUT", "/v1/notifications", body)).status).toBe(400);
    }
  });

  it("takes plain http and loopback on the local configuration", async () => {
    const { request } = harness({
      notifications: { endpoints: new MemoryNotificationEndpoints(), policy: LOCAL_URL_POLICY },
    });
    expect((await request("PUT", "/v1/notifications", { url: receiver.url })).status).toBe(200);
    const privateAddress = await request("PUT", "/v1/notifications", { url: "http://10.0.0.1/" });
    expect(privateAddress.status).toBe(400);
  });

  it("are in the OpenAPI document", async () => {
    const { app } = h();
    const document = (await (await app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(document.paths["/v1/notifications"] ?? {}).sort()).toEqual([
      "delete",
      "get",
      "put",
    ]);
  });
});

/** Posts six turns and two manual bands to c1. */
async function twoBands(request: ReturnType<typeof harness>["request"]) {
  await postMessageTurns(request, "c1", 6);
  for (const spec of ["t:0..1", "t:2..3"])
    expect((await request("POST", "/v1/conversations/c1/compactions", { spec })).status).toBe(201);
}

describe("a reset", () => {
  it("publishes compactions.reset with the removed bands, once per reset that removed any", async () => {
    const notifier = new RecordingPublisher();
    const { request } = harness({ notifier });
    await twoBands(request);

    const one = await request("DELETE", "/v1/conversations/c1/compactions/1");
    const removedOne = (await one.json()) as { removed: unknown[] };
    const all = await request("DELETE", "/v1/conversations/c1/compactions");
    const removedAll = (await all.json()) as { removed: unknown[] };
    expect((await request("DELETE", "/v1/conversations/c1/compactions")).status).toBe(200);

    expect(notifier.published.map((n) => [n.tenant, n.body.type, n.body.data])).toEqual([
      ["alice", "compactions.reset", { conversation: "c1", removed: removedOne.removed }],
      ["alice", "compactions.reset", { conversation: "c1", removed: removedAll.removed }],
    ]);
    const [first, second] = notifier.published;
    expect(first?.id).toMatch(/^msg_/);
    expect(first?.id).not.toBe(second?.id);
  });
});

describe("a reset whose notification cannot be published", () => {
  it("still answers the removed bands, after retrying, logging and counting the failure", async () => {
    let attempts = 0;
    const failing: NotificationPublisher = {
      publish: async () => {
        attempts++;
        throw new QueueError("EventBridge refused 1 of 1 notifications (InternalFailure: down)");
      },
    };
    const logger = { warn: vi.fn(), error: vi.fn() };
    const counted: [string, number][] = [];
    const metrics = {
      singleMetric: () => ({
        addMetric: (name: string, _unit: unknown, value: number) => counted.push([name, value]),
      }),
    } as unknown as Pick<Metrics, "singleMetric">;
    const waits: number[] = [];
    const { request } = harness({
      notifier: failing,
      publishing: { logger, metrics, sleep: async (ms) => void waits.push(ms), random: () => 0.5 },
    });
    await twoBands(request);

    const reset = await request("DELETE", "/v1/conversations/c1/compactions");
    expect(reset.status).toBe(200);
    expect(((await reset.json()) as { removed: { position: number }[] }).removed).toMatchObject([
      { position: 1 },
      { position: 2 },
    ]);
    expect(attempts).toBe(3);
    // Full jitter from 100 ms: half of 100, then of 200.
    expect(waits).toEqual([50, 100]);
    expect(logger.warn.mock.calls.map(([event]) => event)).toEqual([
      "notification.publish_retrying",
      "notification.publish_retrying",
    ]);
    expect(logger.error).toHaveBeenCalledWith(
      "notification.publish_failed",
      expect.objectContaining({
        tenant: "alice",
        conversation: "c1",
        types: ["compactions.reset"],
        attempt: 3,
      }),
    );
    expect(counted).toEqual([["NotificationsPublishFailed", 1]]);
    // The reset happened: nothing is left to remove.
    const listed = await request("GET", "/v1/conversations/c1/compactions");
    expect(((await listed.json()) as { compactions: unknown[] }).compactions).toEqual([]);
  });

  it("is published on a later attempt when the bus comes back", async () => {
    const recording = new RecordingPublisher();
    let failures = 1;
    const flaky: NotificationPublisher = {
      publish: async (notifications) => {
        if (failures-- > 0) throw new QueueError("throttled");
        await recording.publish(notifications);
      },
    };
    const logger = { warn: vi.fn(), error: vi.fn() };
    const { request } = harness({
      notifier: flaky,
      publishing: { logger, sleep: async () => {} },
    });
    await twoBands(request);
    expect((await request("DELETE", "/v1/conversations/c1/compactions/2")).status).toBe(200);
    expect(recording.published.map((n) => n.body.type)).toEqual(["compactions.reset"]);
    expect(logger.error).not.toHaveBeenCalled();
  });
});

describe("one delivery", () => {
  const endpoint = (url: string) => ({ url, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });

  it("POSTs the body signed as a Standard Webhooks message that the official library verifies", async () => {
    await deliverNotification(endpoint(receiver.url), notification, { policy: LOCAL_URL_POLICY });
    const [received] = receiver.requests;
    expect(received?.headers["content-type"]).toBe("application/json");
    expect(received?.headers["webhook-id"]).toBe(notification.id);
    const verified = new Webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verify(
      received?.body ?? "",
      received?.headers as Record<string, string>,
    );
    expect(verified).toEqual(notification.body);
    expect(() =>
      new Webhook("whsec_c2VjcmV0LWI=").verify(
        received?.body ?? "",
        received?.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it("throws on a non-2xx answer, so the message is retried", async () => {
    receiver.failing = 1;
    await expect(
      deliverNotification(endpoint(receiver.url), notification, { policy: LOCAL_URL_POLICY }),
    ).rejects.toThrow(QueueError);
    expect(receiver.requests.map((r) => r.status)).toEqual([503]);
  });

  it("connects to the address it checked (the name is never resolved again)", async () => {
    const port = new URL(receiver.url).port;
    // No DNS knows this name: only the injected resolver's answer can reach the receiver.
    await deliverNotification(endpoint(`http://receiver.invalid:${port}/hooks`), notification, {
      policy: LOCAL_URL_POLICY,
      resolve: resolver({ "receiver.invalid": ["127.0.0.1"] }),
    });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]?.headers.host).toBe(`receiver.invalid:${port}`);
  });

  it("checks the URL again when delivering: a name that now resolves to a private address gets nothing", async () => {
    await expect(
      deliverNotification(endpoint("https://hooks.example.com/"), notification, {
        policy: AWS_URL_POLICY,
        resolve: resolver({ "hooks.example.com": ["10.0.0.8"] }),
      }),
    ).rejects.toThrow(InvalidInputError);
  });
});

describe("the notifier handler", () => {
  const record = (id: string, body: unknown): SQSRecord => ({
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: typeof body === "string" ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: "2",
      SentTimestamp: "1795000000000",
      SenderId: "events",
      ApproximateFirstReceiveTimestamp: "1795000000000",
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:notifications",
    awsRegion: "eu-west-1",
  });
  /** A notification as the bus's rule forwards it to the queue. */
  const forwarded = (n: Notification) => ({
    version: "0",
    id: "e1",
    "detail-type": n.body.type,
    source: "autocompact",
    account: "123456789012",
    time: "2026-11-29T12:00:00Z",
    region: "eu-west-1",
    resources: [],
    detail: n,
  });

  beforeEach(() => {
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("delivers each record to its tenant's endpoint, fails the ones that were not, and skips tenants without one", async () => {
    const endpoints = new MemoryNotificationEndpoints();
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    await endpoints.putEndpoint("alice", { url: receiver.url, secret });
    await endpoints.putEndpoint("carol", {
      url: receiver.url,
      secret,
      events: ["compactions.reset"],
    });
    const handler = createNotifierHandler({
      endpoints,
      delivery: { policy: LOCAL_URL_POLICY },
      logger: new Logger({ logLevel: "SILENT" }),
      metrics: new Metrics({ namespace: "Test" }),
    });
    const answer = await handler({
      Records: [
        record("ok", forwarded(notification)),
        record("no-endpoint", forwarded({ ...notification, tenant: "bob" })),
        record("not-subscribed", forwarded({ ...notification, tenant: "carol" })),
        record("junk", "{not json"),
        record("not-a-notification", { detail: { tenant: "alice" } }),
      ],
    });
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([
      "junk",
      "not-a-notification",
    ]);
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(
      new Webhook(secret).verify(received?.body ?? "", received?.headers as Record<string, string>),
    ).toEqual(notification.body);

    receiver.failing = 1;
    const retried = await handler({ Records: [record("ok", forwarded(notification))] });
    expect(retried.batchItemFailures).toEqual([{ itemIdentifier: "ok" }]);
    // The retry carries the same webhook-id.
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([
      notification.id,
      notification.id,
    ]);
  });
});

describe("the EventBridge publisher", () => {
  const events = mockClient(EventBridgeClient);
  afterEach(() => {
    events.reset();
  });
  // The unit project shares workers between files: give the real client back.
  afterAll(() => {
    events.restore();
  });

  it("puts each notification on the bus (source autocompact, detail-type its type), ten per call", async () => {
    events.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [] });
    const many = Array.from({ length: 12 }, (_, i) => ({ ...notification, id: `msg_${i}` }));
    await new EventBridgePublisher(new EventBridgeClient({}), "the-bus").publish(many);
    const calls = events.commandCalls(PutEventsCommand);
    expect(calls.map((call) => call.args[0].input.Entries?.length)).toEqual([10, 2]);
    expect(calls[0]?.args[0].input.Entries?.[0]).toEqual({
      EventBusName: "the-bus",
      Source: "autocompact",
      DetailType: "compaction.fired",
      Detail: JSON.stringify({ ...notification, id: "msg_0" }),
    });
  });

  it("keeps each call within 256 KB, sized as EventBridge sizes entries", async () => {
    events.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [] });
    // Three entries of about 100 KB: two fit in one call (262,144 bytes), three do not.
    const big = (i: number): Notification => ({
      ...notification,
      id: `msg_${i}`,
      body: { ...notification.body, data: { conversation: "c1", note: "x".repeat(100_000) } },
    });
    await new EventBridgePublisher(new EventBridgeClient({}), "the-bus").publish([
      big(0),
      big(1),
      big(2),
    ]);
    const calls = events.commandCalls(PutEventsCommand);
    expect(
      calls.map((call) => call.args[0].input.Entries?.map((entry) => entry.Detail?.length)),
    ).toEqual([[100_147, 100_147], [100_147]]);
  });

  it("throws when EventBridge refuses an entry, so the caller's message is retried", async () => {
    events.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: "InternalFailure", ErrorMessage: "try again" }],
    });
    await expect(
      new EventBridgePublisher(new EventBridgeClient({}), "the-bus").publish([notification]),
    ).rejects.toThrow(/InternalFailure: try again/);
  });
});

describe("the local runtime's delivery", () => {
  it("retries a receiver that fails for a while, waiting at most 30 s between attempts, until it gets the event", async () => {
    const endpoints = new MemoryNotificationEndpoints();
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    await endpoints.putEndpoint("alice", { url: receiver.url, secret });
    const waits: number[] = [];
    const delivery = new LocalNotificationDelivery({
      endpoints,
      policy: LOCAL_URL_POLICY,
      sleep: async (ms) => {
        waits.push(ms);
      },
      // The longest wait the dice allow.
      random: () => 0.999999,
    });
    receiver.failing = 9;
    await delivery.publish([notification]);
    await delivery.idle();
    expect(receiver.requests.map((r) => r.status)).toEqual([...Array(9).fill(503), 204]);
    expect(waits).toHaveLength(9);
    // 0.5 s doubling per retry, capped at 30 s: the receiver that recovered
    // during any wait is tried again at most 30 s later.
    expect(Math.max(...waits)).toBeLessThan(30_000);
    expect(waits.filter((ms) => ms >= 29_000).length).toBeGreaterThanOrEqual(2);
    expect(new Set(receiver.requests.map((r) => r.headers["webhook-id"]))).toEqual(
      new Set([notification.id]),
    );
  });

  it("stops retrying when the endpoint is removed, and gives up after its attempts", async () => {
    const endpoints = new MemoryNotificationEndpoints();
    await endpoints.putEndpoint("alice", {
      url: receiver.url,
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    const delivery = new LocalNotificationDelivery({
      endpoints,
      policy: LOCAL_URL_POLICY,
      maxAttempts: 3,
      sleep: async () => {},
    });
    receiver.failing = 100;
    await delivery.publish([notification]);
    await delivery.idle();
    expect(receiver.requests).toHaveLength(3);

    receiver.requests.length = 0;
    const removing = new LocalNotificationDelivery({
      endpoints,
      policy: LOCAL_URL_POLICY,
      sleep: async () => {
        await endpoints.deleteEndpoint("alice");
      },
    });
    await removing.publish([notification]);
    await removing.idle();
    expect(receiver.requests).toHaveLength(1);
  });
});
