/**
 * DynamoDB Local for tests: the endpoint started by test/setup/dynamodb.ts,
 * a client for it, and a fresh table per suite.
 */
import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { inject } from "vitest";
import { type LocalCredentials, localClientConfig } from "../../functions/local/dynamodb-local.ts";
import { createTable } from "../../functions/store/dynamodb-table.ts";

/** The run's DynamoDB Local: endpoint and credentials; throws the setup's reason when there is none. */
export function localDynamo(): { endpoint: string; credentials: LocalCredentials } {
  const environment = inject("dynamodb");
  if (environment?.endpoint === undefined) {
    throw new Error(
      `DynamoDB Local is not available for this test run: ${environment?.error ?? "test/setup/dynamodb.ts did not run (is it in vitest.config.ts globalSetup?)"}`,
    );
  }
  return { endpoint: environment.endpoint, credentials: environment.credentials };
}

/** The endpoint of the run's DynamoDB Local. */
export function localEndpoint(): string {
  return localDynamo().endpoint;
}

/**
 * The environment a child process (the CLI) needs to reach the run's
 * DynamoDB Local with `--endpoint`: its credentials, as the AWS SDK reads them.
 */
export function localAwsEnv(): Record<string, string> {
  const { credentials } = localDynamo();
  return {
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_REGION: "local",
  };
}

/** A new client for the run's DynamoDB Local (its credentials, the service's SDK retry settings). */
export function localClient(): DynamoDBClient {
  return new DynamoDBClient(localClientConfig(localDynamo()));
}

/** Creates a uniquely named, empty table and returns its name. */
export async function freshTable(
  client: DynamoDBClient = localClient(),
  prefix = "test",
): Promise<string> {
  const name = `${prefix.replace(/[^A-Za-z0-9_.-]/g, "_")}-${randomUUID()}`;
  await createTable(client, name);
  return name;
}
