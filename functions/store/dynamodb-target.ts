/**
 * What the modules of the DynamoDB conversation store share: the table they
 * work on, and the three requests they make of it in the same way (a
 * strongly consistent GetItem, a Query of a conversation's partition over
 * all pages, a TransactWriteItems retried on conflicts).
 */
import {
  type DynamoDBClient,
  GetItemCommand,
  paginateQuery,
  type QueryCommandInput,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import { ConditionFailedError } from "../errors.ts";
import type { ConversationRef } from "../ports.ts";
import {
  type CancellationReason,
  type ConflictRetry,
  cancellationReasons,
  isConditionFailure,
} from "./dynamodb-conflicts.ts";
import type { Item } from "./dynamodb-items.ts";
import { partitionKey } from "./dynamodb-keys.ts";

/** DynamoDB's limit of items per TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

/** The table of a store, and how the store reads and writes it. */
export interface DynamoTarget {
  /** A client configured with `dynamoClientConfig` (its SDK retry strategy retries throttling). */
  readonly client: DynamoDBClient;
  readonly table: string;
  /** The store's retry of transaction conflicts. */
  readonly retryConflicts: ConflictRetry;
  /** `Limit` of every Query page (none: DynamoDB's 1 MB pages). */
  readonly queryLimit?: number | undefined;
  /** The time of activity the list index orders by. */
  readonly now: () => number;
}

/** The item of the conversation under sort key `sk`, read strongly consistent. */
export async function getItem(
  target: DynamoTarget,
  ref: ConversationRef,
  sk: string,
): Promise<Item | undefined> {
  const { Item } = await target.client.send(
    new GetItemCommand({
      TableName: target.table,
      Key: { pk: { S: partitionKey(ref) }, sk: { S: sk } },
      ConsistentRead: true,
    }),
  );
  return Item;
}

/** Every item of a Query on the conversation's partition (`:pk`), all pages. */
export async function queryPartition(
  target: DynamoTarget,
  ref: ConversationRef,
  input: Pick<QueryCommandInput, "KeyConditionExpression" | "ExpressionAttributeValues">,
): Promise<Item[]> {
  const items: Item[] = [];
  const pages = paginateQuery(
    { client: target.client, pageSize: target.queryLimit },
    {
      TableName: target.table,
      ConsistentRead: true,
      KeyConditionExpression: input.KeyConditionExpression,
      ExpressionAttributeValues: {
        ...input.ExpressionAttributeValues,
        ":pk": { S: partitionKey(ref) },
      },
    },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}

/**
 * One TransactWriteItems, retried on transaction conflicts; a failed
 * condition becomes {@link ConditionFailedError}, described by `describe`
 * from the per-item cancellation reasons.
 */
export async function transactWrite(
  target: DynamoTarget,
  operation: string,
  items: TransactWriteItem[],
  describe: (reasons: readonly (CancellationReason | undefined)[]) => string,
): Promise<void> {
  try {
    // A new command per attempt: each gets its own ClientRequestToken, so
    // DynamoDB cannot mistake a retry after a cancellation for a replay.
    await target.retryConflicts(operation, () =>
      target.client.send(new TransactWriteItemsCommand({ TransactItems: items })),
    );
  } catch (error) {
    if (isConditionFailure(error)) {
      throw new ConditionFailedError(describe(cancellationReasons(error)), { cause: error });
    }
    throw error;
  }
}
