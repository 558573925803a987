/**
 * The fault-injection suite's service (test/reliability/faults.test.ts): the
 * Hono app, the in-process queue (SQS FIFO semantics) and the compactor
 * handler on a fresh table of the run's DynamoDB Local, wired as
 * functions/local/runtime.ts wires them, with the faults the scenarios
 * inject (throttling storms, a wrapped compactor store, held messages, a
 * manual clock and recorded idle timers), and the figures every scenario
 * reports. Also the conversations the scenarios post, with the bands core's
 * replay fires on them.
 */
import { Readable } from "node:stream";
import { isDeepStrictEqual } from "node:util";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSEvent } from "aws-lambda";
import { expect, vi } from "vitest";
import type { BandSummary } from "../../core/auto-compaction.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import type { Entry } from "../../core/events.ts";
import { simulateStream } from "../../core/replay.ts";
import { splitTurns } from "../../core/turns.ts";
import { createApp } from "../../functions/api/app.ts";
import { type EvaluationOutcome, evaluateTurn } from "../../functions/compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import { ConversationService } from "../../functions/conversations/service.ts";
import type {
  Clock,
  ConversationRef,
  ConversationStore,
  EvaluationMessage,
  IdleTimers,
  Summarizer,
  TurnQueue,
} from "../../functions/ports.ts";
import { InProcessQueue, type QueueBatchHandler } from "../../functions/queue/in-process.ts";
import {
  encodeMessageBody,
  messageDeduplicationId,
  messageGroupId,
} from "../../functions/queue/message.ts";
import { LocalSecretSealer } from "../../functions/secrets/local.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { DynamoTenantDirectory, SECRETS_NOT_READ } from "../../functions/store/tenants-dynamodb.ts";
import { MemoryWebhookReceipts } from "../../functions/store/webhook-receipts-memory.ts";
import { generateConversation } from "./conversation.ts";
import { freshTable, localClient } from "./dynamodb.ts";
import { memoryNotifications } from "./service.ts";

export const TENANT = "alice";
export const AUTO: AutoConfigLayer = { enabled: true, trigger_ratio: 0.6 };
export const MODEL = { id: "faults-model", context_window: 20_000 };

// ---------------------------------------------------------------------------
// Faults

/** DynamoDB's JSON-protocol answer to a throttled request. */
function throttledResponse(type: string) {
  return {
    statusCode: 400,
    reason: "injected",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amzn-requestid": `injected-${type}`,
    },
    body: Readable.from([
      Buffer.from(
        JSON.stringify({
          __type: `com.amazonaws.dynamodb.v20120810#${type}`,
          message: `injected ${type}`,
        }),
      ),
    ]),
  };
}

/**
 * Throttling storms. During a storm, the first request of each operation
 * (GetItem, Query, TransactWriteItems, UpdateItem, …) of each client is
 * answered as DynamoDB answers a throttled request, ThrottlingException and
 * ProvisionedThroughputExceededException in turn, instead of being sent. The
 * middleware sits below the SDK's retry strategy (inside the deserializer),
 * so the SDK sees real error responses and retries them as it would
 * DynamoDB's. It counts every attempt that reaches it, per operation.
 *
 * Why one throttle per operation and client, not every request: the SDK's
 * adaptive mode (functions/store/dynamodb-client.ts) rate-limits a client
 * once it is throttled, down to 0.5 requests per second for a client that
 * has sent little, and recovers over seconds; throttling every request keeps
 * it there and a few turns take minutes.
 */
export class ThrottlingStorms {
  readonly sent = new Map<string, number>();
  readonly throttled = new Map<string, number>();
  #count = 0;
  /** Per client, the operations the current storm has hit; none between storms. */
  #hit: Map<DynamoDBClient, Set<string>> | undefined;

  /** Starts a storm (or ends it, with `undefined`). */
  storm(what: "every operation" | undefined): void {
    this.#hit = what === undefined ? undefined : new Map();
  }

  install(client: DynamoDBClient): DynamoDBClient {
    client.middlewareStack.add(
      (next) => async (args) => {
        const headers = (args.request as { headers: Record<string, string> }).headers;
        const operation = String(headers["x-amz-target"]).split(".")[1] ?? "unknown";
        bump(this.sent, operation);
        const hit = this.#hit;
        if (!hit) return next(args);
        const ofClient = hit.get(client) ?? new Set<string>();
        hit.set(client, ofClient);
        if (ofClient.has(operation)) return next(args);
        ofClient.add(operation);
        bump(this.throttled, operation);
        const type =
          this.#count++ % 2 === 0
            ? "ThrottlingException"
            : "ProvisionedThroughputExceededException";
        return { response: throttledResponse(type) } as Awaited<ReturnType<typeof next>>;
      },
      { step: "deserialize", priority: "low", name: "injectThrottlingStorms" },
    );
    return client;
  }

  total(counts: Map<string, number>): number {
    return [...counts.values()].reduce((a, b) => a + b, 0);
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

// ---------------------------------------------------------------------------
// The service under test

export interface Delivery {
  readonly id: string;
  readonly body: string;
  readonly receiveCount: number;
  readonly batch: number;
  readonly ok: boolean;
}

export interface Evaluation {
  readonly message: EvaluationMessage;
  readonly outcome?: EvaluationOutcome;
  readonly error?: unknown;
}

export interface StackOptions {
  readonly settings?: { config: AutoConfigLayer };
  readonly summarizer?: Summarizer;
  readonly visibilityTimeoutMs: number;
  readonly storms?: ThrottlingStorms;
  /** Wraps the compactor's store (to catch a write in the middle). */
  readonly compactorStore?: (store: ConversationStore) => ConversationStore;
  /** The api's and the compactor's clock (the system's without it). */
  readonly clock?: Clock;
  /** Where deferrals schedule their timers (the test delivers them, as the timer queue would). */
  readonly timers?: IdleTimers;
}

/**
 * The api (its own DynamoDB client), the queue and the compactor (its own
 * client), as two Lambdas would have. Messages the api sends go to the queue
 * unless `hold` is set: then the test sends them, in any order and as often
 * as it likes.
 */
export async function startStack(options: StackOptions) {
  const plain = localClient();
  const table = await freshTable(plain, "faults");
  const apiClient = localClient();
  const compactorClient = localClient();
  options.storms?.install(apiClient);
  options.storms?.install(compactorClient);
  const tenantKey = await new DynamoTenantDirectory(plain, table, SECRETS_NOT_READ).createTenant(
    TENANT,
  );

  const store = new DynamoConversationStore(plain, table); // the test's view, without faults
  const apiStore = new DynamoConversationStore(apiClient, table);
  const compactorBase = new DynamoConversationStore(compactorClient, table);
  const compactorStore = options.compactorStore?.(compactorBase) ?? compactorBase;
  const settings = options.settings ?? { config: AUTO };

  /** For each dead letter, how many deliveries had been handled when it was dead-lettered. */
  const deadLetteredAfter: number[] = [];
  /** What the queue reports to nobody (a handler that threw, a journal that failed): none expected. */
  const queueErrors: unknown[] = [];
  const queue = new InProcessQueue({
    visibilityTimeoutMs: options.visibilityTimeoutMs,
    onError: (error) => {
      queueErrors.push(error);
    },
    onDeadLetter: () => {
      deadLetteredAfter.push(deliveries.length);
    },
  });
  let accepted = 0;
  const send = async (body: string, groupId: string, deduplicationId: string) => {
    const result = await queue.send(body, { groupId, deduplicationId });
    if (!result.duplicate) accepted++;
    return result;
  };
  const held: EvaluationMessage[] = [];
  const forwarder: TurnQueue & { hold: boolean } = {
    hold: false,
    async enqueue(message: EvaluationMessage): Promise<void> {
      if (forwarder.hold) held.push(message);
      else
        await send(
          encodeMessageBody(message),
          messageGroupId(message),
          messageDeduplicationId(message),
        );
    },
  };

  const service = new ConversationService({
    store: apiStore,
    queue: forwarder,
    settings,
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const serverErrors: unknown[] = [];
  const app = createApp({
    webhookReceipts: new MemoryWebhookReceipts(),
    notifications: memoryNotifications(),
    service,
    tenants: new DynamoTenantDirectory(apiClient, table, LocalSecretSealer.ephemeral()),
    onServerError: (error) => {
      serverErrors.push(error);
    },
  });
  const statuses = new Map<number, number>();
  const request = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const response = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    return response;
  };

  const compactorTenants = new DynamoTenantDirectory(compactorClient, table, SECRETS_NOT_READ);
  const evaluations: Evaluation[] = [];
  const handler = createCompactorHandler({
    evaluate: async (message, evaluateOptions) => {
      try {
        const outcome = await evaluateTurn(
          {
            store: compactorStore,
            tenants: compactorTenants,
            settings,
            ...(options.summarizer ? { summarizer: options.summarizer } : {}),
            ...(options.clock ? { clock: options.clock } : {}),
            ...(options.timers ? { timers: options.timers } : {}),
          },
          message,
          evaluateOptions,
        );
        evaluations.push({ message, outcome });
        return outcome;
      } catch (error) {
        evaluations.push({ message, error });
        throw error;
      }
    },
    logger: new Logger({ serviceName: "faults", logLevel: "SILENT" }),
    metrics: new Metrics({ namespace: "AutocompactFaults", serviceName: "faults" }),
  });
  const deliveries: Delivery[] = [];
  /** Per batch: the time left (the deadline of a Lambda) when the handler answered. */
  const leftAtAnswer: number[] = [];
  let batches = 0;
  const recording: QueueBatchHandler = async (event: SQSEvent, context) => {
    const batch = ++batches;
    const response = await handler(event, context);
    leftAtAnswer.push(context.getRemainingTimeInMillis());
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const record of event.Records) {
      deliveries.push({
        id: record.messageId,
        body: record.body,
        receiveCount: Number(record.attributes.ApproximateReceiveCount),
        batch,
        ok: !failed.has(record.messageId),
      });
    }
    return response;
  };
  let running = false;
  const start = () => {
    queue.start(recording);
    running = true;
  };
  const pause = async () => {
    if (running) await queue.stop();
    running = false;
  };
  start();

  const posted = new Map<string, Entry[][]>();
  /** Posts turn `turn` of `stream` to `conversation`; expects 202. */
  const post = async (conversation: string, stream: readonly Entry[][], turn: number) => {
    const events = stream[turn] as Entry[];
    const response = await request("POST", `/v1/conversations/${conversation}/turns`, {
      turn,
      model: MODEL,
      events,
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const turns = posted.get(conversation) ?? [];
    turns[turn] = events;
    posted.set(conversation, turns);
  };

  const ref = (conversation: string): ConversationRef => ({ tenant: TENANT, conversation });
  const autoBands = async (conversation: string) =>
    (await store.listCompactions(ref(conversation))).filter((c) => c.compaction.source === "auto");

  /** Waits (up to 30 s) until `turn` of `conversation` has been evaluated. */
  const evaluated = async (conversation: string, turn: number) => {
    await vi.waitFor(
      async () => {
        const head = await store.getHead(ref(conversation));
        if ((head?.evaluated_through ?? -1) < turn) {
          throw new Error(`turn ${turn} of ${conversation} is not evaluated yet`);
        }
      },
      { timeout: 30_000, interval: 20 },
    );
  };

  /** Turns posted (202) whose events are not stored exactly as posted. */
  const turnsLost = async (): Promise<number> => {
    let lost = 0;
    for (const [conversation, turns] of posted) {
      const stored = (await store.readTurns(ref(conversation))).map((t) => t.events);
      turns.forEach((events, turn) => {
        if (!isDeepStrictEqual(stored[turn], events)) lost++;
      });
    }
    return lost;
  };

  /** The figures every scenario reports (and no error went unanswered). */
  const figures = async (bandsExpected: number) => {
    expect(queueErrors, "errors the queue reported").toEqual([]);
    expect(serverErrors, "5xx the api answered").toEqual([]);
    let bands = 0;
    for (const conversation of posted.keys()) bands += (await autoBands(conversation)).length;
    const processed = new Set(deliveries.filter((d) => d.ok).map((d) => d.id)).size;
    const fiveHundreds = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    return {
      turns_posted: [...posted.values()].reduce((a, turns) => a + turns.length, 0),
      messages_sent: accepted,
      messages_processed: processed,
      deliveries: deliveries.length,
      dead_lettered: queue.deadLetters().length,
      bands_created: bands,
      bands_expected: bandsExpected,
      turns_lost: await turnsLost(),
      answers_5xx: fiveHundreds,
    };
  };

  return {
    store,
    queue,
    forwarder,
    held,
    send,
    request,
    post,
    evaluated,
    ref,
    autoBands,
    figures,
    deliveries,
    deadLetteredAfter,
    evaluations,
    leftAtAnswer,
    start,
    pause,
    /** Runs `step` with the consumer stopped, then lets it take everything at once and waits. */
    async step(step: () => Promise<void>) {
      await pause();
      await step();
      start();
      await queue.drain();
    },
    async stop() {
      await pause();
      for (const client of [plain, apiClient, compactorClient]) client.destroy();
    },
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;

/** A conversation's stream, split into turns, and the bands a turn-by-turn replay fires. */
export async function conversation(
  seed: number,
  turns: number,
  options: { layers?: AutoConfigLayer[]; mark?: string; summary?: string } = {},
) {
  let stream: Entry[] = JSON.parse(JSON.stringify(generateConversation({ seed, turns })));
  if (options.mark) {
    const mark = options.mark;
    stream = stream.map((e) =>
      e.type === "chat_request" && typeof e.content === "string"
        ? { ...e, content: `${mark} ${e.content}` }
        : e,
    );
  }
  const summaryText = options.summary;
  const simulation = await simulateStream(stream, {
    layers: options.layers ?? [AUTO],
    model: MODEL,
    ...(summaryText
      ? {
          summarize: async (): Promise<BandSummary> => ({
            text: summaryText,
            model: "stub",
            latency_ms: 0,
          }),
        }
      : {}),
  });
  return { stream, turns: splitTurns(stream), firings: simulation.firings };
}

export const bandsOf = (bands: Awaited<ReturnType<Stack["autoBands"]>>) =>
  bands.map((b) => ({
    turn: b.after_turn,
    from: b.compaction.from_turn,
    to: b.compaction.to_turn,
  }));
export const firingsOf = (firings: { turn: number; from_turn: number; to_turn: number }[]) =>
  firings.map((f) => ({ turn: f.turn, from: f.from_turn, to: f.to_turn }));
