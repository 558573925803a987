/**
 * DynamoDB Local for tests: the endpoint started by test/setup/dynamodb.ts,
 * a client for it, and a fresh table per suite.
 */
import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { inject } from "vitest";
import { localClientConfig } from "../../functions/local/dynamodb-local.ts";
import { createTable } from "../../functions/store/dynamodb-table.ts";

/** The endpoint of the run's DynamoDB Local; throws the setup's reason when there is none. */
export function localEndpoint(): string {
  const environment = inject("dynamodb");
  if (environment?.endpoint === undefined) {
    throw new Error(
      `DynamoDB Local is not available for this test run: ${environment?.error ?? "test/setup/dynamodb.ts did not run (is it in vitest.config.ts globalSetup?)"}`,
    );
  }
  return environment.endpoint;
}

/** A new client for the run's DynamoDB Local (fake credentials, the service's SDK retry settings). */
export function localClient(): DynamoDBClient {
  return new DynamoDBClient(localClientConfig(localEndpoint()));
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
