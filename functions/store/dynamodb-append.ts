/**
 * Appending a turn to the DynamoDB conversation store (the port's
 * `appendTurn`), conditional on the head as head-condition.ts states it.
 *
 * A turn whose compressed events fit in one transaction (the usual case)
 * writes chunks + TURN (if absent) + HEAD (if the condition holds) in one
 * TransactWriteItems. Bigger turns first write their chunks (idempotent
 * puts, pending: `expires_at` = now + 24 h, the table's TTL), then commit
 * TURN + HEAD in a transaction that also REMOVEs `expires_at` from each of
 * their chunks (at most 98: with 350 KB chunks 34 MB compressed, far above
 * the API's 5 MiB bodies; bigger turns are refused): a committed turn's
 * chunks never expire, and a crashed writer's do (dynamodb-chunks.ts). A
 * loser of that race deletes its own chunks when the winner's differ; a
 * retry of the same turn rewrites them in place.
 */
import { DeleteItemCommand, type TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { PROBLEM_VARIANTS, UnprocessableError } from "../../core/errors.ts";
import { ConditionFailedError } from "../errors.ts";
import type { ConversationRef, ConversationStore } from "../ports.ts";
import { commitChunk, encodeEvents, putPendingChunk } from "./dynamodb-chunks.ts";
import { type CancellationReason, failedHead } from "./dynamodb-conflicts.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { toHead, toTurnItem, toTurnRecord } from "./dynamodb-items.ts";
import { chunkSk, HEAD_SK, listPartitionKey, partitionKey, turnSk } from "./dynamodb-keys.ts";
import {
  type DynamoTarget,
  getItem,
  MAX_TRANSACTION_ITEMS,
  transactWrite,
} from "./dynamodb-target.ts";
import { appendHeadCondition, describeHead, headConflict } from "./head-condition.ts";

/** Parallel PutItem/DeleteItem calls when chunks are written outside a transaction. */
const WRITE_CONCURRENCY = 4;

/** The table, and how a turn's events are laid out in it. */
export interface AppendTarget extends DynamoTarget {
  /** Largest Binary payload per event chunk item. */
  readonly chunkBytes: number;
  /** Events compressed to at most this many bytes commit in one transaction with their turn. */
  readonly maxTransactionBytes: number;
}

/** Runs `run` on every item, at most `limit` at a time (the functions are granted no BatchWriteItem). */
async function mapLimit<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The port's `appendTurn` on `target` (see the module comment). */
export async function appendTurn(
  target: AppendTarget,
  ...[ref, turn, condition, head]: Parameters<ConversationStore["appendTurn"]>
): Promise<void> {
  const pk = partitionKey(ref);
  const n = turn.turn;
  const uncompacted = "uncompacted" in condition;
  const headCondition = appendHeadCondition(n, condition);
  const encoded = await encodeEvents(pk, n, turn.events, target.chunkBytes);
  const chunkItems = encoded.items;

  const update = new UpdateExpressionBuilder()
    .set("turn_count", n + 1)
    .active(listPartitionKey(ref.tenant), target.now());
  if (uncompacted) update.increment("projected_chars", condition.add_projected_chars);
  update.head(head, uncompacted ? ["projected_chars"] : []).defaults();
  const commit: TransactWriteItem[] = [
    {
      Put: {
        TableName: target.table,
        Item: toTurnItem(pk, turn, encoded.storage),
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    {
      Update: {
        TableName: target.table,
        Key: { pk: { S: pk }, sk: { S: HEAD_SK } },
        UpdateExpression: update.expression,
        ConditionExpression: update.condition(headCondition),
        ExpressionAttributeNames: update.names,
        ExpressionAttributeValues: update.values,
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    },
  ];
  const describe = ([turnReason, headReason]: readonly (CancellationReason | undefined)[]) =>
    headReason?.Code !== "ConditionalCheckFailed" && turnReason?.Code === "ConditionalCheckFailed"
      ? `turn ${n} is already stored`
      : describeHead(headCondition, failedHead(headReason));

  const oneTransaction =
    encoded.blob.length <= target.maxTransactionBytes &&
    chunkItems.length + commit.length <= MAX_TRANSACTION_ITEMS;
  if (oneTransaction) {
    const puts: TransactWriteItem[] = chunkItems.map((Item) => ({
      Put: { TableName: target.table, Item },
    }));
    await transactWrite(target, "AppendTurn", [...puts, ...commit], (reasons) =>
      describe(reasons.slice(-2)),
    );
    return;
  }

  // Too big for one transaction: fail fast when the head moved on, then
  // write the content-addressed chunks pending, then commit TURN + HEAD
  // and make the chunks permanent, in one transaction (so it must hold them).
  if (chunkItems.length + commit.length > MAX_TRANSACTION_ITEMS) {
    throw new UnprocessableError(
      `turn ${n}'s events need ${chunkItems.length} chunks: one DynamoDB transaction commits at most ${MAX_TRANSACTION_ITEMS - commit.length}`,
      PROBLEM_VARIANTS.tooLargeToStore,
    );
  }
  const current = await getItem(target, ref, HEAD_SK);
  const conflict = headConflict(headCondition, current && toHead(current));
  if (conflict !== undefined) throw new ConditionFailedError(conflict);
  const now = Date.now();
  await mapLimit(chunkItems, WRITE_CONCURRENCY, (item) =>
    putPendingChunk(target.client, target.table, item, now, target.retryConflicts),
  );
  const permanent = chunkItems.map((item) => commitChunk(target.table, item));
  try {
    await transactWrite(target, "AppendTurn", [...commit, ...permanent], (reasons) =>
      reasons.slice(commit.length).some((reason) => reason?.Code === "ConditionalCheckFailed")
        ? `turn ${n}'s event chunks are gone (expired) before it committed`
        : describe(reasons),
    );
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      await discardLosingChunks(target, ref, n, encoded.storage.hash, chunkItems.length);
    }
    throw error;
  }
}

/** A losing writer's chunks can be deleted once the winner's (different) chunks are committed. */
async function discardLosingChunks(
  target: DynamoTarget,
  ref: ConversationRef,
  n: number,
  hash: string,
  count: number,
) {
  try {
    const committed = await getItem(target, ref, turnSk(n));
    if (!committed || toTurnRecord(committed).storage.hash === hash) return;
    const pk = partitionKey(ref);
    const keys = Array.from({ length: count }, (_, index) => chunkSk(n, hash, index));
    await mapLimit(keys, WRITE_CONCURRENCY, async (sk) => {
      await target.retryConflicts("DeleteItem", () =>
        target.client.send(
          new DeleteItemCommand({
            TableName: target.table,
            Key: { pk: { S: pk }, sk: { S: sk } },
          }),
        ),
      );
    });
  } catch {
    // Best effort: orphan chunks are never read.
  }
}
