/** The ConversationStore contract against the in-memory fake and DynamoDB Local (never mocks). */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll } from "vitest";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { MemoryConversationStore } from "../../functions/store/memory.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { conversationStoreContract } from "./conversation-store.contract.ts";
import { idempotencyKeysContract } from "./idempotency-keys.contract.ts";
import { incarnationContract } from "./incarnation.contract.ts";
import { materializedBandsContract } from "./materialized-bands.contract.ts";

conversationStoreContract(
  "MemoryConversationStore",
  async (options) => new MemoryConversationStore(options),
);
idempotencyKeysContract("MemoryConversationStore", async () => new MemoryConversationStore());
incarnationContract("MemoryConversationStore", async () => new MemoryConversationStore());

let dynamo: Promise<{ client: DynamoDBClient; table: string }> | undefined;
/** One client and table for the suite; every test works on conversations of its own. */
function dynamoTable() {
  dynamo ??= (async () => {
    const client = localClient();
    return { client, table: await freshTable(client, "contract") };
  })();
  return dynamo;
}
afterAll(async () => (await dynamo)?.client.destroy());

conversationStoreContract(
  "DynamoConversationStore on DynamoDB Local",
  async (options) => {
    const { client, table } = await dynamoTable();
    return new DynamoConversationStore(client, table, options);
  },
  { concurrent: true },
);
idempotencyKeysContract(
  "DynamoConversationStore on DynamoDB Local",
  async () => {
    const { client, table } = await dynamoTable();
    return new DynamoConversationStore(client, table);
  },
  { concurrent: true },
);
incarnationContract(
  "DynamoConversationStore on DynamoDB Local",
  async () => {
    const { client, table } = await dynamoTable();
    return new DynamoConversationStore(client, table);
  },
  { concurrent: true },
);

// Tiny Query pages: every read must follow LastEvaluatedKey (the multi-megabyte
// cases already span several 1 MB pages above).
conversationStoreContract(
  "DynamoConversationStore, 2-item Query pages",
  async (options) => {
    const { client, table } = await dynamoTable();
    return new DynamoConversationStore(client, table, { ...options, queryLimit: 2 });
  },
  { large: false, concurrent: true },
);

materializedBandsContract("MemoryConversationStore", async () => new MemoryConversationStore());
materializedBandsContract(
  "DynamoConversationStore on DynamoDB Local",
  async () => {
    const { client, table } = await dynamoTable();
    return new DynamoConversationStore(client, table);
  },
  { runs: 12, concurrent: true },
);
