/**
 * The idle timers as they run on AWS (issue 29, docs/architecture.md §2
 * "Idle timers"), on moto: the real SQS adapter (functions/queue/idle-timers.ts)
 * sends `DelaySeconds` messages to a standard queue with a DLQ behind it, as
 * infra/idle-timers.ts declares them, and the compactor's real handler
 * consumes them the way Lambda's event source mapping would, on the memory
 * store with a manual clock (the compactor's time; moto delays by its own).
 *
 * moto honours `DelaySeconds` (a delayed message is counted as such and not
 * received until due) and refuses more than 900, as SQS does. A rest over
 * 900 s cannot be waited out in a test: its hops are read as they were sent
 * (the `DelaySeconds` moto accepted) and handed to the compactor at their due
 * time on the manual clock; a timer due in 1 s is received from moto.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type EvaluationOutcome, evaluateTurn } from "../../functions/compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import type { EvaluationMessage } from "../../functions/ports.ts";
import { SqsIdleTimers } from "../../functions/queue/idle-timers.ts";
import { decodeMessageBody } from "../../functions/queue/message.ts";
import { EventSourceMapping } from "../helpers/event-source-mapping.ts";
import { chatToolTurn } from "../helpers/format-samples.ts";
import { freshIdleTimerQueues, motoSqs, queueArn } from "../helpers/moto.ts";
import { harness } from "../helpers/service.ts";

/** The stack's redrive (5 receives); a short visibility timeout keeps a redelivery quick. */
const QUEUE = { maxReceiveCount: 5, visibilityTimeoutSeconds: 1 };

const sqs: SQSClient = motoSqs();
/** Every SendMessage the adapter made, as sent. */
const sent: SendMessageCommandInput[] = [];
sqs.middlewareStack.add(
  (next) => async (args) => {
    if ((args.input as SendMessageCommandInput).DelaySeconds !== undefined)
      sent.push(args.input as SendMessageCommandInput);
    return next(args);
  },
  { step: "initialize", name: "recordSends" },
);
let mapping: EventSourceMapping | undefined;

beforeAll(() => {
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
});
afterEach(async () => {
  await mapping?.stop();
  mapping = undefined;
  sent.length = 0;
});
afterAll(() => {
  vi.unstubAllEnvs();
  sqs.destroy();
});

const config = (idleSeconds: number) => ({
  conversation: {
    compaction: {
      auto: {
        enabled: true,
        trigger_ratio: 0.5,
        min_turns: 1,
        rule: { keep_first: 0, keep_last: 1, tool_calls: "strip" },
        when: "idle",
        idle_seconds: idleSeconds,
      },
    },
  },
});

/**
 * A conversation whose turn 1 crosses the threshold (about 600 tokens a turn
 * on a 2,000-token window, as test/service/idle-compaction.test.ts), and the
 * compactor's evaluation with the SQS timers on `queueUrl`.
 */
async function conversation(queueUrl: string, idleSeconds: number) {
  const h = harness();
  const put = await h.request("PUT", "/v1/conversations/c/config", config(idleSeconds));
  expect(put.status).toBe(200);
  const deps = {
    store: h.store,
    tenants: h.tenants,
    clock: h.clock,
    timers: new SqsIdleTimers(sqs, queueUrl, h.clock),
  };
  const evaluate = (message: EvaluationMessage) => evaluateTurn(deps, message);
  const post = async (turn: number) => {
    const posted = await h.request("POST", "/v1/conversations/c/turns", {
      turn,
      model: { context_window: 2_000 },
      format: "openai-chat",
      messages: chatToolTurn(turn, 2_400),
    });
    expect(posted.status).toBe(202);
  };
  const bands = async () => h.store.listCompactions({ tenant: "alice", conversation: "c" });
  return { h, deps, evaluate, post, bands };
}

async function attributes(queueUrl: string) {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["All"] }),
  );
  return {
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
    visible: Number(Attributes.ApproximateNumberOfMessages),
  };
}

/** The timer a SendMessage carried. */
const timerOf = (input: SendMessageCommandInput | undefined): EvaluationMessage => {
  const decoded = decodeMessageBody(input?.MessageBody ?? "");
  if (!decoded.ok) throw new Error(decoded.error);
  return decoded.message;
};

describe("idle timers on a standard SQS queue (moto)", () => {
  it("moto refuses a DelaySeconds over 900, as SQS does", async () => {
    const { queueUrl } = await freshIdleTimerQueues(sqs, QUEUE);
    await expect(
      sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "{}", DelaySeconds: 901 }),
      ),
    ).rejects.toThrow(/DelaySeconds/);
  });

  it("sends a 3,600 s rest as four hops of 900 s; the last one due fires the band, once", async () => {
    const { queueUrl } = await freshIdleTimerQueues(sqs, QUEUE);
    const c = await conversation(queueUrl, 3_600);
    await c.post(0);
    await c.post(1);
    const postedAt = c.h.clock.now;
    for (const message of c.h.queue.take()) await c.evaluate(message);
    expect(sent.map((s) => s.DelaySeconds)).toEqual([900]);
    // moto holds it: delayed, nothing to receive.
    expect(await attributes(queueUrl)).toEqual({ delayed: 1, visible: 0 });
    const now = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(now.Messages ?? []).toEqual([]);

    // Each hop arrives when its 900 s have passed, finds the rest not over and sends the next.
    const outcomes: EvaluationOutcome["outcome"][] = [];
    for (let hop = 1; hop <= 4; hop++) {
      c.h.clock.now = postedAt + hop * 900_000;
      outcomes.push((await c.evaluate(timerOf(sent[hop - 1]))).outcome);
    }
    expect(outcomes).toEqual(["skipped", "skipped", "skipped", "fired"]);
    expect(sent.map((s) => s.DelaySeconds)).toEqual([900, 900, 900, 900]);
    expect(sent.map((s) => timerOf(s).idle_from_ms)).toEqual([
      postedAt,
      postedAt,
      postedAt,
      postedAt,
    ]);
    expect(await attributes(queueUrl)).toEqual({ delayed: 4, visible: 0 });
    const bands = await c.bands();
    expect(bands.map((b) => b.compaction.trigger)).toMatchObject([
      { turn: 1, when: "idle", rested_seconds: 3_600 },
    ]);
    // moto still holds the four hops (handed over above as they would arrive): their
    // deliveries in 900 s are second deliveries, with the band there: no-ops.
    c.h.clock.now = postedAt + 3_600_000 + 900_000;
    for (const input of sent.slice(0, 4)) {
      expect(await c.evaluate(timerOf(input))).toMatchObject({
        outcome: "skipped",
        reason: "already_evaluated",
      });
    }
    expect(await c.bands()).toHaveLength(1);
    expect(sent).toHaveLength(4);
  });

  it("holds a timer until due, then the compactor fires it; a second delivery gives no second band", async () => {
    const queues = await freshIdleTimerQueues(sqs, QUEUE);
    const c = await conversation(queues.queueUrl, 30);
    await c.post(0);
    await c.post(1);
    const postedAt = c.h.clock.now;
    // The evaluation runs 29 s after the post: the timer is due in 1 s.
    c.h.clock.now = postedAt + 29_000;
    for (const message of c.h.queue.take()) await c.evaluate(message);
    expect(sent.map((s) => s.DelaySeconds)).toEqual([1]);
    expect(await attributes(queues.queueUrl)).toEqual({ delayed: 1, visible: 0 });
    // The compactor's clock at the due time; moto's passes on its own.
    c.h.clock.now = postedAt + 30_000;

    const evaluated: EvaluationOutcome[] = [];
    const handler = createCompactorHandler({
      evaluate: async (message, options) => {
        const outcome = await evaluateTurn(c.deps, message, options);
        evaluated.push(outcome);
        return outcome;
      },
      logger: new Logger({ serviceName: "moto-timers", logLevel: "SILENT" }),
      metrics: new Metrics({ namespace: "AutocompactMoto", serviceName: "moto-timers" }),
      clock: c.h.clock,
    });
    mapping = new EventSourceMapping({
      client: sqs,
      queueUrl: queues.queueUrl,
      queueArn: await queueArn(sqs, queues.queueUrl),
      handler,
      functionTimeoutMs: 1_000,
    });
    mapping.start();
    await vi.waitFor(() => expect(evaluated).toHaveLength(1), { timeout: 10_000, interval: 50 });
    expect(evaluated[0]?.outcome).toBe("fired");
    expect(await c.bands()).toHaveLength(1);

    // A standard queue may deliver a message twice, and a copy may come late.
    const copy = sent[0]?.MessageBody ?? "";
    await sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: copy }));
    await vi.waitFor(() => expect(evaluated).toHaveLength(2), { timeout: 10_000, interval: 50 });
    c.h.clock.now += 3_600_000;
    await sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: copy }));
    await vi.waitFor(() => expect(evaluated).toHaveLength(3), { timeout: 10_000, interval: 50 });
    expect(evaluated.slice(1)).toMatchObject([
      { outcome: "skipped", reason: "already_evaluated" },
      { outcome: "skipped", reason: "already_evaluated" },
    ]);
    expect(await c.bands()).toHaveLength(1);
    expect(mapping.batches.flatMap((b) => b.failed)).toEqual([]);
    expect(mapping.errors).toEqual([]);
    await mapping.stop();
    expect(await attributes(queues.queueUrl)).toEqual({ delayed: 0, visible: 0 });
  });
});
