/**
 * The compactor Lambda's entry point (cold-start wiring). This is the only
 * module of the compactor that reads `process.env` and creates SDK clients at
 * module scope: everything it builds is reused by every invocation of one
 * Lambda instance. The handler itself is {@link createCompactorHandler}.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { SQSHandler } from "aws-lambda";
import type { ServiceSettings } from "../conversations/state.ts";
import { readEnvironment } from "../env.ts";
import { EventBridgePublisher } from "../notifications/eventbridge.ts";
import { METRICS_NAMESPACE, SERVICE_NAMES } from "../observability.ts";
import { systemClock } from "../ports.ts";
import { SqsIdleTimers } from "../queue/idle-timers.ts";
import { DynamoConversationStore } from "../store/dynamodb.ts";
import { dynamoClientConfig } from "../store/dynamodb-client.ts";
import { DynamoTenantDirectory, SECRETS_NOT_READ } from "../store/tenants-dynamodb.ts";
import { summarizerFromEnvironment } from "../summarizers/from-env.ts";
import { evaluateTurn } from "./evaluate-turn.ts";
import { createCompactorHandler } from "./handler.ts";

type LogLevel = NonNullable<NonNullable<ConstructorParameters<typeof Logger>[0]>["logLevel"]>;

/** The `service` key of every log line and the `service` dimension of every metric. */
export const SERVICE_NAME = SERVICE_NAMES.compactor;

const env = readEnvironment(process.env);

const logger = new Logger({ serviceName: SERVICE_NAME, logLevel: env.logLevel as LogLevel });
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
const dynamodb = new DynamoDBClient(dynamoClientConfig());
const store = new DynamoConversationStore(dynamodb, env.tableName);
// The compactor reads tenants' config only: no webhook secrets, no KMS grant.
const tenants = new DynamoTenantDirectory(dynamodb, env.tableName, SECRETS_NOT_READ);
const settings: ServiceSettings = {
  config: env.serviceConfig,
  ...(env.catalog ? { catalog: env.catalog } : {}),
};

// Without a summarizer a summary rule fails its message, which is retried and
// ends in the DLQ: a summary is never faked.
const summarizer = await summarizerFromEnvironment(env);
// The idle timers' standard queue: its messages come back to this handler when due.
const timers =
  env.idleTimerQueueUrl === undefined
    ? undefined
    : new SqsIdleTimers(new SQSClient({}), env.idleTimerQueueUrl, systemClock);

export const handler: SQSHandler = createCompactorHandler({
  evaluate: (message, options) =>
    evaluateTurn(
      {
        store,
        tenants,
        settings,
        ...(summarizer ? { summarizer } : {}),
        ...(timers ? { timers } : {}),
      },
      message,
      options,
    ),
  logger,
  metrics,
  recordFailure: (ref, failure) => store.recordFailure(ref, failure),
  // Firings go onto the stack's bus; the notifier function delivers them.
  ...(env.eventBusName
    ? { notifier: new EventBridgePublisher(new EventBridgeClient({}), env.eventBusName) }
    : {}),
});
