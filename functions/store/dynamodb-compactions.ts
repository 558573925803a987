/**
 * The compaction writes of the DynamoDB conversation store (the port's
 * `addCompaction` and `removeCompactions`): each one transaction of the CMP
 * items and a head update that bumps `compactions_version`, on the head
 * condition head-condition.ts states; a firing's transaction also keeps the
 * evaluation on its TURN item, and a band's its materialized form (MAT#).
 */
import type { TransactWriteItem, Update } from "@aws-sdk/client-dynamodb";
import { PROBLEM_VARIANTS, UnprocessableError } from "../../core/errors.ts";
import type {
  ConversationRef,
  ConversationStore,
  HeadUpdate,
  HeadVersion,
  TurnEvaluation,
} from "../ports.ts";
import { failedHead } from "./dynamodb-conflicts.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { attr, toCompactionItem } from "./dynamodb-items.ts";
import { compactionSk, HEAD_SK, listPartitionKey, partitionKey, turnSk } from "./dynamodb-keys.ts";
import { deleteMaterialized, putMaterialized } from "./dynamodb-materialized.ts";
import { type DynamoTarget, MAX_TRANSACTION_ITEMS, transactWrite } from "./dynamodb-target.ts";
import { compactionHeadCondition, describeHead } from "./head-condition.ts";

/** The port's `addCompaction` on `target`. */
export async function addCompaction(
  target: DynamoTarget,
  ...[ref, compaction, expected, head, evaluation, materialized]: Parameters<
    ConversationStore["addCompaction"]
  >
): Promise<void> {
  const pk = partitionKey(ref);
  const item = await toCompactionItem(pk, compaction);
  const form = materialized ? await putMaterialized(target, ref, materialized) : [];
  await transactWrite(
    target,
    "AddCompaction",
    [
      {
        Put: {
          TableName: target.table,
          Item: item,
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      versionedHeadUpdate(target, ref, expected, head),
      ...(evaluation ? [{ Update: recordEvaluation(target, pk, evaluation) }] : []),
      ...form,
    ],
    ([put, headReason]) =>
      put?.Code === "ConditionalCheckFailed"
        ? `compaction ${compaction.key} exists`
        : describeHead(compactionHeadCondition(expected), failedHead(headReason)),
  );
}

/** The port's `removeCompactions` on `target`: at most 99 keys, in one transaction with the head. */
export async function removeCompactions(
  target: DynamoTarget,
  ...[ref, keys, expected, head]: Parameters<ConversationStore["removeCompactions"]>
): Promise<void> {
  const pk = partitionKey(ref);
  const unique = [...new Set(keys)];
  if (unique.length + 1 > MAX_TRANSACTION_ITEMS) {
    throw new UnprocessableError(
      `cannot remove ${unique.length} compactions atomically: one DynamoDB transaction holds at most ${MAX_TRANSACTION_ITEMS - 1} deletes and the head`,
      PROBLEM_VARIANTS.tooLargeToStore,
    );
  }
  const deletes: TransactWriteItem[] = unique.map((key) => ({
    Delete: { TableName: target.table, Key: { pk: { S: pk }, sk: { S: compactionSk(key) } } },
  }));
  await transactWrite(
    target,
    "RemoveCompactions",
    [...deletes, versionedHeadUpdate(target, ref, expected, head)],
    (reasons) => describeHead(compactionHeadCondition(expected), failedHead(reasons.at(-1))),
  );
  await deleteMaterialized(target, ref, unique);
}

/** The write that keeps an evaluation on its turn's TURN item (which must exist). */
export function recordEvaluation(
  target: DynamoTarget,
  pk: string,
  evaluation: TurnEvaluation,
): Update {
  return {
    TableName: target.table,
    Key: { pk: { S: pk }, sk: { S: turnSk(evaluation.turn) } },
    UpdateExpression: "SET #evaluation = :evaluation",
    ConditionExpression: "attribute_exists(pk)",
    ExpressionAttributeNames: { "#evaluation": "evaluation" },
    ExpressionAttributeValues: { ":evaluation": attr(evaluation) },
  };
}

/** The head update of a compaction change: bumps the version if the head is still at `expected`. */
function versionedHeadUpdate(
  target: DynamoTarget,
  ref: ConversationRef,
  expected: HeadVersion,
  head: HeadUpdate,
): TransactWriteItem {
  const update = new UpdateExpressionBuilder()
    .set("compactions_version", expected.compactions_version + 1)
    .active(listPartitionKey(ref.tenant), target.now())
    .head(head, ["compactions_version"]);
  return {
    Update: {
      TableName: target.table,
      Key: { pk: { S: partitionKey(ref) }, sk: { S: HEAD_SK } },
      UpdateExpression: update.expression,
      ConditionExpression: update.condition(compactionHeadCondition(expected)),
      ExpressionAttributeNames: update.names,
      ExpressionAttributeValues: update.values,
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
  };
}
