/**
 * The notifier Lambda's entry point (cold-start wiring): the tenants' table
 * (endpoints, their secrets opened with the stack's KMS key) and the
 * deployed URL rules (HTTPS, public addresses only). The handler itself is
 * {@link createNotifierHandler}.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KMSClient } from "@aws-sdk/client-kms";
import type { SQSHandler } from "aws-lambda";
import { readEnvironment } from "../env.ts";
import { SetupError } from "../errors.ts";
import { AWS_URL_POLICY } from "../notifications/url-safety.ts";
import { METRICS_NAMESPACE, SERVICE_NAMES } from "../observability.ts";
import { KmsSecretSealer } from "../secrets/kms.ts";
import { dynamoClientConfig } from "../store/dynamodb-client.ts";
import { DynamoTenantDirectory } from "../store/tenants-dynamodb.ts";
import { createNotifierHandler } from "./handler.ts";

type LogLevel = NonNullable<NonNullable<ConstructorParameters<typeof Logger>[0]>["logLevel"]>;

/** The `service` key of every log line and the `service` dimension of every metric. */
export const SERVICE_NAME = SERVICE_NAMES.notifier;

const env = readEnvironment(process.env);
if (!env.webhookSecretsKeyArn) {
  throw new SetupError("invalid environment: WEBHOOK_SECRETS_KEY_ARN: required by the notifier");
}

const logger = new Logger({ serviceName: SERVICE_NAME, logLevel: env.logLevel as LogLevel });
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
const endpoints = new DynamoTenantDirectory(
  new DynamoDBClient(dynamoClientConfig()),
  env.tableName,
  new KmsSecretSealer(new KMSClient({}), env.webhookSecretsKeyArn),
);

export const handler: SQSHandler = createNotifierHandler({
  endpoints,
  delivery: { policy: AWS_URL_POLICY },
  logger,
  metrics,
});
