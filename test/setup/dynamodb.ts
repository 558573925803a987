/**
 * Vitest globalSetup: one in-memory DynamoDB Local for the whole run, its
 * endpoint handed to the tests through `provide`/`inject` (see
 * test/helpers/dynamodb.ts). `AUTOCOMPACT_TEST_DYNAMODB_ENDPOINT` points the
 * tests at an already running DynamoDB (Local) instead.
 *
 * Without Java the run goes on: tests that need DynamoDB fail with the
 * reason, the others still run.
 */
import type { TestProject } from "vitest/node";
import {
  type DynamoDbLocal,
  type LocalCredentials,
  startDynamoDbLocal,
} from "../../functions/local/dynamodb-local.ts";

/** What the tests receive: an endpoint and its database's credentials, or why there is none. */
export type DynamoDbTestEnvironment =
  | {
      readonly endpoint: string;
      readonly credentials: LocalCredentials;
      readonly error?: undefined;
    }
  | { readonly endpoint?: undefined; readonly credentials?: undefined; readonly error: string };

declare module "vitest" {
  export interface ProvidedContext {
    dynamodb: DynamoDbTestEnvironment;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The AWS SDK's Node 22 notice (docs/architecture.md §14); vitest.config.ts sets it for the workers.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const external = process.env.AUTOCOMPACT_TEST_DYNAMODB_ENDPOINT;
  if (external) {
    project.provide("dynamodb", {
      endpoint: external,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    return async () => {};
  }
  let local: DynamoDbLocal | undefined;
  try {
    local = await startDynamoDbLocal();
    project.provide("dynamodb", { endpoint: local.endpoint, credentials: local.credentials });
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    console.error(`[dynamodb setup] ${reason}`);
    project.provide("dynamodb", { error: reason });
  }
  return async () => {
    await local?.stop();
  };
}
