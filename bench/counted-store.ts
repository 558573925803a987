/**
 * The setting of the benchmarks that count what an evaluation reads: DynamoDB
 * Local with a table `bench`, the store on it, a counter of the bytes every
 * read returns, and one tenant `t`.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { localClientConfig, startDynamoDbLocal } from "../functions/local/dynamodb-local.ts";
import { DynamoConversationStore } from "../functions/store/dynamodb.ts";
import { createTable } from "../functions/store/dynamodb-table.ts";
import { StaticTenantDirectory } from "../functions/store/tenants-memory.ts";

/**
 * The bytes of `items` as JSON, a Binary attribute counted as its own bytes
 * (as DynamoDB sizes it; `JSON.stringify` would spell a Uint8Array as an
 * object of its indices, several times its size).
 */
function itemBytes(items: unknown): number {
  let binary = 0;
  const json = JSON.stringify(items, (_key, value) => {
    if (!(value instanceof Uint8Array)) return value;
    binary += value.byteLength;
    return "";
  });
  return Buffer.byteLength(json) + binary;
}

/** Counts the bytes of items every DynamoDB read returns. */
export function countReadBytes(client: DynamoDBClient): { bytes: number; requests: number } {
  const counter = { bytes: 0, requests: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const output = result.output as { Item?: unknown; Items?: unknown; Responses?: unknown };
      const items = output.Item ?? output.Items ?? output.Responses;
      if (items !== undefined) {
        counter.requests++;
        counter.bytes += itemBytes(items);
      }
      return result;
    },
    { step: "initialize", name: "countReadBytes" },
  );
  return counter;
}

/** Runs `bench` on a fresh DynamoDB Local (stopped after, whatever happens). */
export async function withCountedStore<T>(
  bench: (setting: {
    readonly store: DynamoConversationStore;
    readonly counter: { bytes: number; requests: number };
    readonly tenants: StaticTenantDirectory;
  }) => Promise<T>,
): Promise<T> {
  const dynamo = await startDynamoDbLocal({});
  const client = new DynamoDBClient(localClientConfig(dynamo));
  try {
    await createTable(client, "bench");
    return await bench({
      store: new DynamoConversationStore(client, "bench"),
      counter: countReadBytes(client),
      tenants: new StaticTenantDirectory([{ id: "t", key_hashes: [] }]),
    });
  } finally {
    client.destroy();
    await dynamo.stop();
  }
}
