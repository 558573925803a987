/**
 * Service benchmarks on DynamoDB Local (in memory), printed as JSON lines:
 * - the webhook (POST …/turns) median and p99, over HTTP on the local runtime
 *   (with the compactor evaluating every turn meanwhile) and as the handler
 *   alone (the same app in process, as on Lambda: tenants in DynamoDB behind
 *   the per-instance cache; also uncached, and with tenants in memory),
 *   interleaved with bare PutItems, as p50 ratios to the PutItem's (target:
 *   within 3×); the handler also with the same turns posted as OpenAI Chat
 *   messages, and as the checkout at `BENCH_WEBHOOK_BASELINE` (default
 *   cb0cb0e, before the append chained from the turns it kept; `none`
 *   skips it) runs it, interleaved in the same process (bench/baseline.ts);
 * - the evaluation latency at turn 10 and turn 200 of conversations with
 *   ~25 KB per turn, and the bytes of items the no-fire evaluation reads
 *   (target: the same at any length);
 * - read your evaluation (issue 12): 20 conversations × 30 turns of ~6 KB
 *   read with `after_turn=N&wait=25`, turn by turn and after posting back to
 *   back: the share of consistent reads, timeouts, the wait's p50/p99, the
 *   head reads (GetItem) per waiting read and the evaluation lag.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { DEFAULT_DEV_KEY } from "../cli/commands/serve.ts";
import { estimateView } from "../core/estimate.ts";
import type { Entry } from "../core/events.ts";
import { openaiChat } from "../core/formats/openai-chat.ts";
import { streamToTranscript } from "../core/formats/transcripts.ts";
import { splitTurns } from "../core/turns.ts";
import { createApp } from "../functions/api/app.ts";
import { evaluateTurn } from "../functions/compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../functions/compactor/handler.ts";
import { ConversationService } from "../functions/conversations/service.ts";
import { hashApiKey } from "../functions/keys.ts";
import { localClientConfig, startDynamoDbLocal } from "../functions/local/dynamodb-local.ts";
import { serveApp } from "../functions/local/http-server.ts";
import { DEV_TENANT, startLocalService } from "../functions/local/runtime.ts";
import { METRICS_NAMESPACE, SERVICE_NAMES } from "../functions/observability.ts";
import type { TenantDirectory, TenantSettings } from "../functions/ports.ts";
import { InProcessQueue } from "../functions/queue/in-process.ts";
import { DynamoConversationStore } from "../functions/store/dynamodb.ts";
import { HEAD_SK } from "../functions/store/dynamodb-keys.ts";
import { createTable } from "../functions/store/dynamodb-table.ts";
import { CachedTenantDirectory } from "../functions/store/tenants-cache.ts";
import { DynamoTenantDirectory, SECRETS_NOT_READ } from "../functions/store/tenants-dynamodb.ts";
import { StaticTenantDirectory } from "../functions/store/tenants-memory.ts";
import { MemoryWebhookReceipts } from "../functions/store/webhook-receipts-memory.ts";
import { prng, text } from "../test/helpers/conversation.ts";
import { memoryNotifications, RecordingQueue } from "../test/helpers/service.ts";
import { exportCheckout, type WebhookApp, webhookAppOf } from "./baseline.ts";
import { withCountedStore } from "./counted-store.ts";

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};
const round = (ms: number) => Number(ms.toFixed(2));

/** A turn of about `bytes` bytes: a request, reasoning, a tool call with a large result, a message. */
export function turnOfSize(turn: number, bytes: number, seed: number): Entry[] {
  const r = prng(seed * 1000 + turn);
  const at = (s: number) =>
    new Date(Date.UTC(2026, 10, 1) + turn * 60_000 + s * 1000).toISOString();
  const payload = text(r, Math.round(bytes / 7.5));
  return [
    { type: "turn_start", timestamp: at(0) },
    { type: "chat_request", timestamp: at(1), content: `step ${turn}: ${text(r, 12)}` },
    { type: "chat_response", timestamp: at(2), reasoning: text(r, 60) },
    {
      type: "tool_call_request",
      timestamp: at(3),
      id: `call_${turn}`,
      name: "fs_read_file",
      arguments: { path: `src/file_${turn}.ts` },
    },
    {
      type: "tool_call_response",
      timestamp: at(4),
      id: `call_${turn}`,
      content: payload,
      is_error: false,
    },
    { type: "chat_response", timestamp: at(5), message: text(r, 30) },
  ];
}

export async function benchWebhook(): Promise<Record<string, unknown>[]> {
  let old: string | undefined;
  const service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir: "",
    inMemory: true,
    devKey: DEFAULT_DEV_KEY,
  });
  try {
    const headers = {
      authorization: `Bearer ${DEFAULT_DEV_KEY}`,
      "content-type": "application/json",
    };
    const latencies: number[] = [];
    for (let c = 0; c < 10; c++) {
      for (let t = 0; t < 30; t++) {
        const body = JSON.stringify({
          turn: t,
          model: { context_window: 200_000 },
          events: turnOfSize(t, 4_000, c),
        });
        const start = performance.now();
        const response = await fetch(`${service.url}/v1/conversations/bench-${c}/turns`, {
          method: "POST",
          headers,
          body,
        });
        await response.arrayBuffer();
        latencies.push(performance.now() - start);
        if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
      }
    }
    const client = new DynamoDBClient(
      localClientConfig({
        endpoint: service.dynamoEndpoint,
        credentials: service.dynamoCredentials,
      }),
    );
    // The handler alone, as the Lambda runs it: the same app in process
    // (app.request), same DynamoDB Local, no HTTP hop and no compactor at work.
    // Three wirings, their posts interleaved with bare PutItems (each round in
    // another order) so the machine's load weighs on all alike: the Lambda's
    // tenants (DynamoDB behind the per-instance cache), the same uncached (the
    // Lambda before the cache: key then tenant read on every post), and
    // tenants in memory (no lookup at all: the write path's own floor).
    // The compactor first finishes the evaluations of the posts above.
    await service.queue.drain();
    const store = new DynamoConversationStore(client, "autocompact");
    const dynamoTenants = new DynamoTenantDirectory(client, "autocompact", SECRETS_NOT_READ);
    const appWith = (tenants: TenantDirectory & TenantSettings) =>
      createApp({
        webhookReceipts: new MemoryWebhookReceipts(),
        notifications: memoryNotifications(),
        service: new ConversationService({ store, queue: new RecordingQueue() }),
        tenants,
      });
    // The checkout before this one's webhook work, in the same run (none: skipped).
    const baseline = process.env.BENCH_WEBHOOK_BASELINE ?? "cb0cb0e";
    old = baseline === "none" ? undefined : await exportCheckout(baseline);
    const oldApp = old && (await webhookAppOf(old, client, "autocompact"));
    const apps = {
      cached: appWith(new CachedTenantDirectory(dynamoTenants)),
      uncached: appWith(dynamoTenants),
      static: appWith(
        new StaticTenantDirectory([{ id: DEV_TENANT, key_hashes: [hashApiKey(DEFAULT_DEV_KEY)] }]),
      ),
    };
    const model = { context_window: 200_000 };
    const post = async (app: WebhookApp, path: string, body: unknown) => {
      const text = JSON.stringify(body);
      const start = performance.now();
      const response = await app.request(path, { method: "POST", headers, body: text });
      await response.arrayBuffer();
      if (response.status !== 202) throw new Error(`handler answered ${response.status}`);
      return performance.now() - start;
    };
    const put = async (i: number) => {
      const start = performance.now();
      await client.send(
        new PutItemCommand({
          TableName: "autocompact",
          Item: { pk: { S: `bench#${i}` }, sk: { S: "x" }, data: { S: "y".repeat(4_000) } },
        }),
      );
      return performance.now() - start;
    };
    const samples = { put: [] as number[], cached: [] as number[], uncached: [] as number[] };
    const staticSamples: number[] = [];
    const oldSamples: number[] = [];
    for (let c = 0; c < 10; c++) {
      for (let t = 0; t < 30; t++) {
        const body = { turn: t, model, events: turnOfSize(t, 4_000, c) };
        const runs = [
          async () => samples.put.push(await put(c * 30 + t)),
          async () =>
            samples.cached.push(
              await post(apps.cached, `/v1/conversations/handler-${c}/turns`, body),
            ),
          async () =>
            samples.uncached.push(
              await post(apps.uncached, `/v1/conversations/uncached-${c}/turns`, body),
            ),
          async () =>
            staticSamples.push(
              await post(apps.static, `/v1/conversations/static-${c}/turns`, body),
            ),
          ...(oldApp
            ? [
                async () =>
                  oldSamples.push(await post(oldApp, `/v1/conversations/old-${c}/turns`, body)),
              ]
            : []),
        ];
        for (let i = 0; i < runs.length; i++) await runs[(c * 30 + t + i) % runs.length]?.();
      }
    }
    // The same turns posted as OpenAI Chat messages (Chat carries no reasoning).
    const chat: number[] = [];
    for (let c = 0; c < 10; c++) {
      for (let t = 0; t < 30; t++) {
        chat.push(
          await post(apps.cached, `/v1/conversations/chat-${c}/turns`, {
            turn: t,
            model,
            format: "openai-chat",
            messages: streamToTranscript(openaiChat, turnOfSize(t, 4_000, c))[0],
          }),
        );
      }
    }
    client.destroy();
    const p = (values: number[], at: number) => percentile(values.slice(20), at);
    const putP50 = p(samples.put, 50);
    const putP99 = p(samples.put, 99);
    const webhookP99 = p(latencies, 99);
    return [
      {
        bench: "service.webhook_latency",
        requests: latencies.length,
        turn_bytes: 4_000,
        webhook_http_median_ms: round(p(latencies, 50)),
        webhook_http_p99_ms: round(webhookP99),
        webhook_handler_median_ms: round(p(samples.cached, 50)),
        webhook_handler_p99_ms: round(p(samples.cached, 99)),
        webhook_handler_uncached_median_ms: round(p(samples.uncached, 50)),
        webhook_handler_uncached_p99_ms: round(p(samples.uncached, 99)),
        webhook_handler_static_tenants_median_ms: round(p(staticSamples, 50)),
        webhook_handler_openai_chat_median_ms: round(p(chat, 50)),
        webhook_handler_openai_chat_p99_ms: round(p(chat, 99)),
        put_item_median_ms: round(putP50),
        put_item_p99_ms: round(putP99),
        http_p99_ratio: round(webhookP99 / putP99),
        handler_p50_ratio: round(p(samples.cached, 50) / putP50),
        handler_uncached_p50_ratio: round(p(samples.uncached, 50) / putP50),
        handler_static_tenants_p50_ratio: round(p(staticSamples, 50) / putP50),
        handler_p99_ratio: round(p(samples.cached, 99) / putP99),
        ...(oldApp
          ? {
              baseline: process.env.BENCH_WEBHOOK_BASELINE ?? "cb0cb0e",
              webhook_handler_baseline_median_ms: round(p(oldSamples, 50)),
              handler_baseline_p50_ratio: round(p(oldSamples, 50) / putP50),
            }
          : {}),
        target_ratio: 3,
      },
    ];
  } finally {
    await service.stop();
    if (old) await rm(old, { recursive: true, force: true });
  }
}

async function benchEvaluation(): Promise<Record<string, unknown>[]> {
  return withCountedStore(async ({ store, counter, tenants }) => {
    const results: Record<string, unknown>[] = [];
    for (const [label, window] of [
      ["no_fire", 100_000_000],
      ["fire", 40_000],
    ] as const) {
      const settings = { config: { enabled: true, min_turns: 5 } };
      const service = new ConversationService({ store, queue: new RecordingQueue(), settings });
      for (const atTurn of [10, 200]) {
        const samples: number[] = [];
        const bytes: number[] = [];
        const conversations = atTurn === 10 ? 15 : 4;
        for (let c = 0; c < conversations; c++) {
          const id = `${label}-${atTurn}-${c}`;
          for (let t = 0; t <= atTurn; t++) {
            await service.appendTurn({ id: "t" }, id, {
              turn: t,
              events: turnOfSize(t, 25_000, c),
              model: { context_window: window },
            });
          }
          counter.bytes = 0;
          counter.requests = 0;
          const start = performance.now();
          const outcome = await evaluateTurn(
            { store, tenants, settings },
            { tenant: "t", conversation: id, turn: atTurn },
          );
          samples.push(performance.now() - start);
          bytes.push(counter.bytes);
          const expected = label === "fire" ? "fired" : "skipped";
          if (outcome.outcome !== expected)
            throw new Error(`expected ${expected} at turn ${atTurn}, got ${outcome.outcome}`);
        }
        results.push({
          bench: `service.evaluation_${label}`,
          turn: atTurn,
          turn_bytes: 25_000,
          samples: samples.length,
          median_ms: round(percentile(samples, 50)),
          max_ms: round(Math.max(...samples)),
          bytes_read_median: percentile(bytes, 50),
        });
      }
    }
    return results;
  });
}

/** Counts the GetItem calls on conversation heads, per request (an AsyncLocalStorage scope). */
function countHeadReads(client: DynamoDBClient, scope: AsyncLocalStorage<{ headReads: number }>) {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { sk?: { S?: string } } };
      const counter = scope.getStore();
      if (counter && context.commandName === "GetItemCommand" && input.Key?.sk?.S === HEAD_SK) {
        counter.headReads++;
      }
      return next(args);
    },
    { step: "initialize", name: "countHeadReads" },
  );
}

/**
 * Read your evaluation (issue 12), the scenario: 20 conversations
 * posting 30 turns of ~6 KB (window 16,000 tokens, `trigger_ratio` 0.5,
 * `min_turns` 3, `keep_first` 1, `keep_last` 2), every turn read with
 * `GET …/projection?after_turn=N&wait=25`, (a) turn by turn (each read before
 * the next post) and (b) back to back (all turns posted, then all 600 reads at
 * once). The local runtime's wiring (DynamoDB Local in memory, HTTP, the
 * in-process queue and the compactor handler), with the reads served by their
 * own store and client so a middleware can count each read's head GetItems.
 */
export async function benchReadYourEvaluation(): Promise<Record<string, unknown>[]> {
  const WINDOW = 16_000;
  const THRESHOLD = WINDOW * 0.5;
  const CONVERSATIONS = 20;
  const TURNS = 30;
  const TURN_BYTES = 6_000;
  const settings = {
    config: {
      enabled: true,
      trigger_ratio: 0.5,
      min_turns: 3,
      rule: { keep_first: 1, keep_last: 2, tool_calls: "strip" as const },
    },
  };
  const dynamo = await startDynamoDbLocal({ killOnSignals: false });
  const clients = Array.from({ length: 3 }, () => new DynamoDBClient(localClientConfig(dynamo)));
  const [postClient, readClient, compactorClient] = clients as [
    DynamoDBClient,
    DynamoDBClient,
    DynamoDBClient,
  ];
  const scope = new AsyncLocalStorage<{ headReads: number }>();
  countHeadReads(readClient, scope);
  const tenants = new StaticTenantDirectory([
    { id: "bench", key_hashes: [hashApiKey(DEFAULT_DEV_KEY)] },
  ]);
  const queue = new InProcessQueue({ name: "bench-ryev.fifo", onError: () => undefined });
  // The compactor's EMF lines would go to stdout with this benchmark's JSON
  // (Powertools reads the switch when it publishes, so it stays set throughout).
  const metricsDisabled = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = "true";
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: SERVICE_NAMES.compactor,
  });
  let server: ReturnType<typeof serveApp> | undefined;
  try {
    await createTable(postClient, "bench");
    const compactorStore = new DynamoConversationStore(compactorClient, "bench");
    // The evaluation lag as the compactor's EvaluationLagMs measures it (decided evaluations).
    let lags: number[] = [];
    queue.start(
      createCompactorHandler({
        evaluate: async (message, options) => {
          const outcome = await evaluateTurn(
            { store: compactorStore, tenants, settings },
            message,
            options,
          );
          if (outcome.decision && message.posted_at_ms !== undefined)
            lags.push(Date.now() - message.posted_at_ms);
          return outcome;
        },
        logger: new Logger({ serviceName: SERVICE_NAMES.compactor, logLevel: "ERROR" }),
        metrics,
      }),
    );
    const appOf = (client: DynamoDBClient) =>
      createApp({
        webhookReceipts: new MemoryWebhookReceipts(),
        notifications: memoryNotifications(),
        service: new ConversationService({
          store: new DynamoConversationStore(client, "bench"),
          queue,
          settings,
        }),
        tenants,
      });
    const postApp = appOf(postClient);
    const readApp = appOf(readClient);
    // Every GET's head reads (one counter per request, in arrival order).
    let readCounters: { headReads: number }[] = [];
    const listening = await new Promise<AddressInfo>((resolve) => {
      server = serveApp(
        {
          fetch: (request, env) => {
            if (request.method !== "GET") return postApp.fetch(request, env);
            const counter = { headReads: 0 };
            readCounters.push(counter);
            return scope.run(counter, () => readApp.fetch(request, env));
          },
          port: 0,
          hostname: "127.0.0.1",
        },
        resolve,
      );
    });
    const url = `http://127.0.0.1:${listening.port}`;
    const headers = {
      authorization: `Bearer ${DEFAULT_DEV_KEY}`,
      "content-type": "application/json",
    };

    const post = async (conversation: string, turn: number, seed: number) => {
      const response = await fetch(`${url}/v1/conversations/${conversation}/turns`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          turn,
          model: { context_window: WINDOW },
          events: turnOfSize(turn, TURN_BYTES, seed),
        }),
      });
      await response.arrayBuffer();
      if (response.status !== 202) throw new Error(`post answered ${response.status}`);
    };
    interface ReadResult {
      readonly status: number;
      readonly ms: number;
      readonly consistent: boolean;
      readonly estimatedTokens: number;
      /** The estimate of the view's turns 0..decided_through: the state the decision saw. */
      readonly decidedTokens: number;
    }
    const read = async (conversation: string, turn: number): Promise<ReadResult> => {
      const started = performance.now();
      const response = await fetch(
        `${url}/v1/conversations/${conversation}/projection?after_turn=${turn}&wait=25`,
        { headers },
      );
      const body = (await response.json()) as {
        events?: Entry[];
        estimated_tokens?: number;
        decided_through?: number | null;
      };
      const ms = performance.now() - started;
      const decided = body.decided_through ?? -1;
      return {
        status: response.status,
        ms,
        consistent: response.status === 200 && decided >= turn,
        estimatedTokens: body.estimated_tokens ?? 0,
        decidedTokens: estimateView(
          splitTurns(body.events ?? [])
            .slice(0, decided + 1)
            .flat(),
        ).estimated_tokens,
      };
    };
    // The head reads of the GETs `run` makes.
    const measured = async (run: () => Promise<ReadResult[]>) => {
      readCounters = [];
      const results = await run();
      const counts = readCounters.map((counter) => counter.headReads);
      return { results, counts };
    };

    const summary = (
      mode: string,
      results: ReadResult[],
      counts: number[],
      startedAt: number,
    ): Record<string, unknown> => {
      const waits = results.map((r) => r.ms);
      // A read that waited read the head more than once (its first read found N undecided).
      const waiting = counts.filter((count) => count > 1);
      const total = counts.reduce((a, b) => a + b, 0);
      return {
        bench: `service.read_your_evaluation_${mode}`,
        conversations: CONVERSATIONS,
        turns: TURNS,
        turn_bytes: TURN_BYTES,
        threshold_tokens: THRESHOLD,
        reads: results.length,
        consistent_share: results.filter((r) => r.consistent).length / results.length,
        timeouts: results.filter((r) => r.status !== 200).length,
        wait_p50_ms: round(percentile(waits, 50)),
        wait_p99_ms: round(percentile(waits, 99)),
        wait_max_ms: round(Math.max(...waits)),
        waiting_reads: waiting.length,
        head_reads_per_read: round(total / counts.length),
        head_reads_per_waiting_read: waiting.length
          ? round(waiting.reduce((a, b) => a + b, 0) / waiting.length)
          : 0,
        head_reads_max: Math.max(...counts),
        over_threshold_decided_turns: results.filter((r) => r.decidedTokens > THRESHOLD).length,
        over_threshold_whole_view: results.filter((r) => r.estimatedTokens > THRESHOLD).length,
        max_estimated_tokens: round(Math.max(...results.map((r) => r.estimatedTokens))),
        evaluation_lag_p50_ms: lags.length ? round(percentile(lags, 50)) : null,
        evaluation_lag_p99_ms: lags.length ? round(percentile(lags, 99)) : null,
        decided_evaluations: lags.length,
        duration_ms: round(performance.now() - startedAt),
      };
    };

    const ids = (mode: string) =>
      Array.from({ length: CONVERSATIONS }, (_, c) => `ryev-${mode}-${c}`);
    const out: Record<string, unknown>[] = [];

    // (a) Turn by turn: post N, read after_turn=N, post N + 1, …
    lags = [];
    let startedAt = performance.now();
    const a = await measured(async () =>
      (
        await Promise.all(
          ids("a").map(async (id, c) => {
            const mine: ReadResult[] = [];
            for (let turn = 0; turn < TURNS; turn++) {
              await post(id, turn, c);
              mine.push(await read(id, turn));
            }
            return mine;
          }),
        )
      ).flat(),
    );
    out.push(summary("turn_by_turn", a.results, a.counts, startedAt));

    // (b) Back to back: every turn posted, then every N read at once.
    await queue.drain();
    lags = [];
    startedAt = performance.now();
    await Promise.all(
      ids("b").map(async (id, c) => {
        for (let turn = 0; turn < TURNS; turn++) await post(id, turn, c);
      }),
    );
    const postedMs = performance.now() - startedAt;
    const b = await measured(async () =>
      Promise.all(
        ids("b").flatMap((id) => Array.from({ length: TURNS }, (_, turn) => read(id, turn))),
      ),
    );
    const backToBack = summary("back_to_back", b.results, b.counts, startedAt);
    // The same 600 reads again once every evaluation is done (none waits):
    // what the reads themselves cost at this concurrency, beside the waits above.
    await queue.drain();
    const again = await Promise.all(
      ids("b").flatMap((id) => Array.from({ length: TURNS }, (_, turn) => read(id, turn))),
    );
    const rereads = again.map((r) => r.ms);
    out.push({
      ...backToBack,
      posting_ms: round(postedMs),
      reread_when_decided_p50_ms: round(percentile(rereads, 50)),
      reread_when_decided_p99_ms: round(percentile(rereads, 99)),
    });
    return out;
  } finally {
    const closing = server;
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
    await queue.stop();
    for (const client of clients) client.destroy();
    await dynamo.stop();
    if (metricsDisabled === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = metricsDisabled;
  }
}

export async function benchService(): Promise<Record<string, unknown>[]> {
  return [
    ...(await benchWebhook()),
    ...(await benchEvaluation()),
    ...(await benchReadYourEvaluation()),
  ];
}
