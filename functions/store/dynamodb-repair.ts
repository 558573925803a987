/**
 * The verify repair on DynamoDB: one UpdateItem of the HEAD that sets its
 * counters, conditional on the head still holding exactly the counters the
 * caller read (head-condition.ts `repairHeadCondition`: a field the item
 * lacks holds its default, as `toHead` reads it), and on no delete being
 * under way.
 */
import { ConditionFailedError } from "../errors.ts";
import { type ConversationStore, HEAD_COUNTERS } from "../ports.ts";
import { isConditionFailure } from "./dynamodb-conflicts.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { partitionKey } from "./dynamodb-keys.ts";
import type { DynamoTarget } from "./dynamodb-target.ts";
import { repairHeadCondition } from "./head-condition.ts";

/** The port's `repairHead` on `target`; throws {@link ConditionFailedError} when the condition fails. */
export async function repairHead(
  target: DynamoTarget,
  ...[ref, expected, counters]: Parameters<ConversationStore["repairHead"]>
): Promise<void> {
  const update = new UpdateExpressionBuilder();
  for (const field of HEAD_COUNTERS) update.set(field, counters[field]);
  const condition = update.condition(repairHeadCondition(expected));
  const pk = partitionKey(ref);
  try {
    await target.retryConflicts("RepairHead", () =>
      target.client.send(update.headCommand(target.table, pk, condition)),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    throw new ConditionFailedError(
      "the head changed since it was read (or is gone, or being deleted)",
      { cause: error },
    );
  }
}
