/**
 * The whole service on one machine (`npm start`): DynamoDB Local (data under
 * `.data/` unless in memory), the Hono app on node:http (`http-server.ts`),
 * and the compactor handler fed by the in-process queue with SQS semantics.
 * The same app, store and handler run on Lambda; only the wiring differs.
 *
 * Durability: a turn is acknowledged only after DynamoDB Local stored it; the
 * queue keeps a journal, and at start every conversation whose newest turn
 * has not been evaluated gets a message again, so a SIGKILL at any moment
 * loses no acknowledged turn and leaves no evaluation unfinished.
 *
 * Notifications (docs/architecture.md §16) are delivered by the runtime itself, with
 * retries, to endpoints that may be plain HTTP and on this machine.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { ModelCatalog } from "../../core/catalog.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import { createApp, serverErrorLogger } from "../api/app.ts";
import { problemHeaders, toProblem } from "../api/errors.ts";
import { TenantLimiter } from "../api/limits.ts";
import type { BackoffOptions } from "../backoff.ts";
import { evaluateTurn } from "../compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../compactor/handler.ts";
import { ConversationService } from "../conversations/service.ts";
import { DryRunCache, SummaryBudget } from "../conversations/summary-budget.ts";
import type { LimitDefaults } from "../env.ts";
import { ServiceStartingError } from "../errors.ts";
import { LocalNotificationDelivery } from "../notifications/local-delivery.ts";
import { LOCAL_URL_POLICY } from "../notifications/url-safety.ts";
import { METRICS_NAMESPACE, SERVICE_NAMES } from "../observability.ts";
import { type Summarizer, systemClock } from "../ports.ts";
import { FileQueueJournal } from "../queue/file-journal.ts";
import { QueueIdleTimers } from "../queue/idle-timers.ts";
import { InProcessQueue } from "../queue/in-process.ts";
import { dataDirSecretSealer, LocalSecretSealer } from "../secrets/local.ts";
import { DynamoConversationStore } from "../store/dynamodb.ts";
import { createTable } from "../store/dynamodb-table.ts";
import { DynamoSummaryBudgets } from "../store/summary-budgets-dynamodb.ts";
import { DynamoTenantDirectory } from "../store/tenants-dynamodb.ts";
import { DynamoWebhookReceipts } from "../store/webhook-receipts-dynamodb.ts";
import { localAdmin } from "./admin.ts";
import { answerClientError } from "./client-error.ts";
import {
  type DynamoDbLocal,
  LOCAL_TABLE,
  type LocalCredentials,
  localClientConfig,
  localDatabaseDir,
  startDynamoDbLocal,
} from "./dynamodb-local.ts";
import { type ServeAppOptions, serveApp } from "./http-server.ts";
import { listUnevaluatedConversations } from "./unevaluated-conversations.ts";

/** Options of {@link startLocalService}. */
export interface LocalServiceOptions {
  readonly port: number;
  readonly host: string;
  /** Where data lives; ignored with `inMemory`. */
  readonly dataDir: string;
  readonly inMemory: boolean;
  /** The dev tenant's API key. */
  readonly devKey: string;
  readonly logLevel?: string;
  readonly config?: AutoConfigLayer;
  readonly catalog?: ModelCatalog;
  readonly summarizer?: Summarizer;
  /** The default tenant limits (functions/env.ts `readLimitDefaults`); no limits without them. */
  readonly limits?: LimitDefaults;
  /** Queue visibility timeout (default 30 s). */
  readonly visibilityTimeoutMs?: number;
  /** The pause between notification attempts (full jitter, capped at 30 s); injectable for tests. */
  readonly notificationBackoff?: BackoffOptions;
  /**
   * A DynamoDB Local already running, and the credentials of the database to
   * use on it, instead of a server of the service's own: the tests share one
   * server (a Java start each costs seconds). The service neither starts nor
   * stops it; with fresh credentials the database is the service's alone.
   */
  readonly database?: Pick<DynamoDbLocal, "endpoint" | "credentials">;
}

/** A running local service. */
export interface LocalService {
  readonly url: string;
  readonly dynamoEndpoint: string;
  /** The credentials of its database (DynamoDB Local keeps one database per access key id). */
  readonly dynamoCredentials: LocalCredentials;
  readonly queue: InProcessQueue;
  /** Delivers notifications; `idle()` resolves once every one started is delivered or given up. */
  readonly notifications: LocalNotificationDelivery;
  /** Stops accepting requests, finishes in-flight evaluations, stops DynamoDB Local. */
  stop(): Promise<void>;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Batches the compactor handles at once: the deployed event source's default
 * `compactorMaxConcurrency` (docs/deploy.md), so a local burst spreads over
 * conversations as it does on SQS.
 */
const QUEUE_CONCURRENCY = 10;

/** The dev tenant's id. */
export const DEV_TENANT = "dev";

export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  // The API's name, as on AWS; the compactor logs under its own (see wire).
  const logger = new Logger({
    serviceName: SERVICE_NAMES.api,
    logLevel: (options.logLevel ?? "INFO") as "INFO",
  });
  // The port first: a busy one is reported at once, before seconds of Java.
  const listener = await listen(options);
  try {
    if (!options.inMemory) await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    const dataDir = options.inMemory ? undefined : localDatabaseDir(options.dataDir);
    const dynamo = options.database
      ? { ...options.database, stop: async () => {} }
      : await startDynamoDbLocal({ dataDir, killOnSignals: false });
    try {
      return await wire(options, logger, dynamo, listener);
    } catch (error) {
      // Nothing may outlive a failed start (a bad table, a journal it cannot read): no orphaned Java.
      await dynamo.stop();
      throw error;
    }
  } catch (error) {
    await listener.close();
    throw error;
  }
}

/** The HTTP listener, bound before anything else starts; it answers 503 until the service is wired. */
interface Listener {
  readonly url: string;
  serve(fetch: ServeAppOptions["fetch"]): void;
  close(): Promise<void>;
}

async function listen(options: Pick<LocalServiceOptions, "port" | "host">): Promise<Listener> {
  const starting = new ServiceStartingError();
  let handler: ServeAppOptions["fetch"] = () =>
    new Response(JSON.stringify(toProblem(starting)), {
      status: starting.status,
      headers: problemHeaders(starting),
    });
  const server = await new Promise<ReturnType<typeof serveApp>>((resolve, reject) => {
    const instance = serveApp(
      {
        fetch: (request, env) => handler(request, env),
        port: options.port,
        hostname: options.host,
      },
      () => resolve(instance),
    );
    instance.once("error", reject);
    instance.on("clientError", answerClientError);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`,
    serve(fetch) {
      handler = fetch;
    },
    close() {
      closing ??= new Promise<void>((resolve) => server.close(() => resolve()));
      return closing;
    },
  };
}

async function wire(
  options: LocalServiceOptions,
  logger: Logger,
  dynamo: Pick<DynamoDbLocal, "endpoint" | "credentials" | "stop">,
  listener: Listener,
): Promise<LocalService> {
  const client = new DynamoDBClient(localClientConfig(dynamo));
  await createTable(client, LOCAL_TABLE);
  const store = new DynamoConversationStore(client, LOCAL_TABLE);
  // Webhook secrets are sealed under the data directory's key file (0600), or a per-process key.
  const sealer = options.inMemory
    ? LocalSecretSealer.ephemeral()
    : dataDirSecretSealer(options.dataDir);
  const tenants = new DynamoTenantDirectory(client, LOCAL_TABLE, sealer, {
    onPlaintextSecret: (tenant, count) =>
      logger.warn("tenant.webhook_secret_plaintext", {
        tenant,
        count,
        fix: "re-add the tenant's secrets (tenant add-secret / remove-secret) to seal them",
      }),
  });
  await tenants.setDevKey(DEV_TENANT, options.devKey);
  const notifications = new LocalNotificationDelivery({
    endpoints: tenants,
    policy: LOCAL_URL_POLICY,
    ...options.notificationBackoff,
    logger: logger.createChild({ serviceName: SERVICE_NAMES.notifier }),
  });

  const settings = {
    ...(options.config ? { config: options.config } : {}),
    ...(options.catalog ? { catalog: options.catalog } : {}),
  };
  const queue = new InProcessQueue({
    ...(options.inMemory
      ? {}
      : { journal: new FileQueueJournal(join(options.dataDir, "queue.json")) }),
    ...(options.visibilityTimeoutMs ? { visibilityTimeoutMs: options.visibilityTimeoutMs } : {}),
    // Several conversations evaluated at once, as the deployed event source's invocations.
    concurrency: QUEUE_CONCURRENCY,
    name: "autocompact-local.fifo",
    onError: (error) => logger.error("queue.error", { error }),
    // Powertools reserves the `message` key: the dead letter goes under its own fields.
    onDeadLetter: (dead) =>
      logger.error("queue.dead_lettered", {
        message_id: dead.id,
        receive_count: dead.receive_count,
        body: safeJson(dead.body),
      }),
  });
  // The idle timers: delayed messages of a queue of their own, journaled beside the evaluation queue's.
  const timerQueue = new InProcessQueue({
    ...(options.inMemory
      ? {}
      : { journal: new FileQueueJournal(join(options.dataDir, "idle-timers.json")) }),
    name: "autocompact-local-idle-timers",
    onError: (error) => logger.error("queue.error", { error }),
  });
  await Promise.all([queue.ready(), timerQueue.ready()]);
  const timers = new QueueIdleTimers(timerQueue, systemClock);
  const service = new ConversationService({
    store,
    queue,
    settings,
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
    ...(options.limits
      ? {
          summaryBudget: new SummaryBudget(
            new DynamoSummaryBudgets(client, LOCAL_TABLE),
            options.limits.summary_tokens_per_day,
            systemClock,
          ),
        }
      : {}),
    dryRuns: new DryRunCache(),
  });
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: SERVICE_NAMES.compactor,
  });
  const compactorLogger = logger.createChild({ serviceName: SERVICE_NAMES.compactor });
  const handler = createCompactorHandler({
    evaluate: (message, evaluateOptions) =>
      evaluateTurn(
        {
          store,
          tenants,
          settings,
          timers,
          ...(options.summarizer ? { summarizer: options.summarizer } : {}),
        },
        message,
        evaluateOptions,
      ),
    logger: compactorLogger,
    metrics,
    recordFailure: (ref, failure) => store.recordFailure(ref, failure),
    notifier: notifications,
  });

  for (const message of await listUnevaluatedConversations(client, LOCAL_TABLE)) {
    await queue.enqueue(message);
  }
  queue.start(handler);
  timerQueue.start(handler);

  const app = createApp({
    service,
    tenants,
    webhookReceipts: new DynamoWebhookReceipts(client, LOCAL_TABLE),
    notifications: { endpoints: tenants, policy: LOCAL_URL_POLICY },
    notifier: notifications,
    ...(options.limits ? { limiter: new TenantLimiter(systemClock, options.limits) } : {}),
    onServerError: serverErrorLogger(logger),
  });
  const admin = localAdmin({ queue, store, devKey: options.devKey });
  // The dead letters' admin routes (this runtime's only), then the API.
  listener.serve((request, env) => admin(request) ?? app.fetch(request, env));

  let stopping: Promise<void> | undefined;
  return {
    url: listener.url,
    dynamoEndpoint: dynamo.endpoint,
    dynamoCredentials: dynamo.credentials,
    queue,
    notifications,
    stop() {
      stopping ??= (async () => {
        await listener.close();
        await Promise.all([queue.stop(), timerQueue.stop()]);
        notifications.stop();
        client.destroy();
        await dynamo.stop();
      })();
      return stopping;
    },
  };
}
