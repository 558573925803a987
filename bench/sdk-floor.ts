/**
 * The AWS SDK's part of a cold start, alone: the DynamoDB client with the
 * commands the conversation store sends (functions/store), constructed as
 * the composition roots construct it, and nothing of ours. No function that
 * stores conversations imports in less time than this module.
 *
 *   npx tsx infra/bundles.ts --entry ./bench/sdk-floor.ts
 *
 * bundles it with the api's esbuild options and prints its import time as
 * a ratio to an empty module's, beside the three functions' (issue 28's
 * import-time targets are ratios of the same kind).
 */
import {
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";

/** The client, as the functions' cold start creates it (creating one sends nothing). */
export const client = new DynamoDBClient({});

/** The commands the store sends, kept so the bundle holds what the functions' bundles hold. */
export const commands = [
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
];
