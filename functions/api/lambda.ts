/**
 * The API Lambda's entry point (cold-start wiring): the environment is read
 * once, SDK clients are created once per instance, and the same Hono app as
 * the local runtime is served through `handle(app)`.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { KMSClient } from "@aws-sdk/client-kms";
import { SQSClient } from "@aws-sdk/client-sqs";
import { handle } from "hono/aws-lambda";
import { ConversationService } from "../conversations/service.ts";
import { DryRunCache, SummaryBudget } from "../conversations/summary-budget.ts";
import { readEnvironment } from "../env.ts";
import { SetupError } from "../errors.ts";
import { EventBridgePublisher } from "../notifications/eventbridge.ts";
import { AWS_URL_POLICY } from "../notifications/url-safety.ts";
import { METRICS_NAMESPACE, SERVICE_NAMES } from "../observability.ts";
import { systemClock } from "../ports.ts";
import { SqsTurnQueue } from "../queue/sqs.ts";
import { KmsSecretSealer } from "../secrets/kms.ts";
import { DynamoConversationStore } from "../store/dynamodb.ts";
import { dynamoClientConfig } from "../store/dynamodb-client.ts";
import { DynamoSummaryBudgets } from "../store/summary-budgets-dynamodb.ts";
import { CachedTenantDirectory } from "../store/tenants-cache.ts";
import { DynamoTenantDirectory } from "../store/tenants-dynamodb.ts";
import { DynamoWebhookReceipts } from "../store/webhook-receipts-dynamodb.ts";
import { summarizerFromEnvironment } from "../summarizers/from-env.ts";
import { createApp, serverErrorLogger } from "./app.ts";
import { TenantLimiter } from "./limits.ts";

type LogLevel = NonNullable<NonNullable<ConstructorParameters<typeof Logger>[0]>["logLevel"]>;

/** Manual summaries must answer within API Gateway's 30 s integration timeout. */
const API_SUMMARY_TIMEOUT_MS = 25_000;

/** The `service` key of every log line and the `service` dimension of every metric. */
export const SERVICE_NAME = SERVICE_NAMES.api;

const env = readEnvironment(process.env);
if (!env.queueUrl) throw new SetupError("invalid environment: QUEUE_URL: required by the API");
if (!env.webhookSecretsKeyArn) {
  throw new SetupError("invalid environment: WEBHOOK_SECRETS_KEY_ARN: required by the API");
}

const logger = new Logger({ serviceName: SERVICE_NAME, logLevel: env.logLevel as LogLevel });
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
const dynamodb = new DynamoDBClient(dynamoClientConfig());
const summarizer = await summarizerFromEnvironment(env, { timeoutMs: API_SUMMARY_TIMEOUT_MS });
const service = new ConversationService({
  store: new DynamoConversationStore(dynamodb, env.tableName),
  queue: new SqsTurnQueue(new SQSClient({}), env.queueUrl),
  settings: { config: env.serviceConfig, ...(env.catalog ? { catalog: env.catalog } : {}) },
  ...(summarizer ? { summarizer } : {}),
  summaryBudget: new SummaryBudget(
    new DynamoSummaryBudgets(dynamodb, env.tableName),
    env.limits.summary_tokens_per_day,
    systemClock,
  ),
  dryRuns: new DryRunCache(),
});

const tenants = new DynamoTenantDirectory(
  dynamodb,
  env.tableName,
  new KmsSecretSealer(new KMSClient({}), env.webhookSecretsKeyArn),
  {
    onPlaintextSecret: (tenant, count) =>
      logger.warn("tenant.webhook_secret_plaintext", {
        tenant,
        count,
        fix: "re-add the tenant's secrets (tenant add-secret / remove-secret) to seal them",
      }),
  },
);

export const handler = handle(
  createApp({
    service,
    // A key's tenant is kept up to 5 s per instance: its two reads (key, then
    // tenant) run once a key and 5 s, not per request (a revocation's delay,
    // docs/deploy.md).
    tenants: new CachedTenantDirectory(tenants),
    // Endpoints sit on the tenant item, their secrets sealed like the inbound ones.
    notifications: { endpoints: tenants, policy: AWS_URL_POLICY },
    ...(env.eventBusName
      ? { notifier: new EventBridgePublisher(new EventBridgeClient({}), env.eventBusName) }
      : {}),
    // A reset's notification that cannot be published is retried, then logged and counted.
    publishing: { logger, metrics },
    webhookReceipts: new DynamoWebhookReceipts(dynamodb, env.tableName),
    ...(env.bodyLimitBytes ? { bodyLimitBytes: env.bodyLimitBytes } : {}),
    // This instance's: see limits.ts for what that means on Lambda.
    limiter: new TenantLimiter(systemClock, env.limits),
    onServerError: serverErrorLogger(logger),
  }),
);
