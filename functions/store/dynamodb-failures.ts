/**
 * The last failed evaluation of a conversation in the DynamoDB store (the
 * port's `recordFailure` and `lastFailure`): one item, `sk = FAILURE`, in the
 * conversation's partition, replaced by every failure. SQS keeps no error
 * text, so `autocompact dlq list` reads it beside each dead letter.
 *
 * Unconditional (a failure is recorded whatever the head's state), so a
 * failure racing a delete may land after the purge: the item carries
 * `expires_at` (the table's TTL) 15 days on, past the DLQ's 14-day
 * retention, and a delete's keys-only Query of the partition removes it with
 * everything else.
 */
import { type DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { CorruptDataError } from "../errors.ts";
import type { ConversationRef, EvaluationFailure } from "../ports.ts";
import { FAILURE_SK, partitionKey } from "./dynamodb-keys.ts";
import { tableDefinition } from "./table-definition.ts";

/** How long a failure is kept: longer than a dead letter (the DLQ keeps messages 14 days). */
export const FAILURE_TTL_SECONDS = 15 * 24 * 60 * 60;

export async function putFailure(
  client: DynamoDBClient,
  table: string,
  ref: ConversationRef,
  failure: EvaluationFailure,
): Promise<void> {
  const expires = Math.floor(Date.parse(failure.at) / 1000) + FAILURE_TTL_SECONDS;
  await client.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        pk: { S: partitionKey(ref) },
        sk: { S: FAILURE_SK },
        turn: { N: String(failure.turn) },
        error: { S: failure.error },
        message: { S: failure.message },
        at: { S: failure.at },
        [tableDefinition.timeToLiveAttribute]: { N: String(expires) },
      },
    }),
  );
}

export async function getFailure(
  client: DynamoDBClient,
  table: string,
  ref: ConversationRef,
): Promise<EvaluationFailure | undefined> {
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: table,
      Key: { pk: { S: partitionKey(ref) }, sk: { S: FAILURE_SK } },
      ConsistentRead: true,
    }),
  );
  if (!Item) return undefined;
  const turn = Number(Item.turn?.N);
  const { error, message, at } = { error: Item.error?.S, message: Item.message?.S, at: Item.at?.S };
  if (!Number.isInteger(turn) || error === undefined || message === undefined || at === undefined) {
    throw new CorruptDataError(
      `the last failure of conversation ${JSON.stringify(ref.conversation)} (tenant ${JSON.stringify(ref.tenant)}) is not a failure item`,
    );
  }
  return { turn, error, message, at };
}
