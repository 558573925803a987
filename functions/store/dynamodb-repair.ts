/**
 * The verify repair on DynamoDB: one UpdateItem of the HEAD that sets its
 * counters, conditional on the head still holding exactly the counters the
 * caller read (a field the item lacks holds its default, as `toHead` reads
 * it), and on no delete being under way.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionFailedError } from "../errors.ts";
import { HEAD_COUNTERS, type HeadCounters } from "../ports.ts";
import { type ConflictRetry, isConditionFailure } from "./dynamodb-conflicts.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { HEAD_DEFAULTS } from "./dynamodb-items.ts";

/** Where the repair writes, and how it retries transaction conflicts. */
export interface RepairTarget {
  readonly client: DynamoDBClient;
  readonly table: string;
  readonly retryConflicts: ConflictRetry;
}

/** See the module comment; throws {@link ConditionFailedError} when the condition fails. */
export async function repairHead(
  target: RepairTarget,
  pk: string,
  expected: HeadCounters,
  counters: HeadCounters,
): Promise<void> {
  const update = new UpdateExpressionBuilder();
  for (const field of HEAD_COUNTERS) update.set(field, counters[field]);
  const holds = HEAD_COUNTERS.map((field) => {
    const equal = `${update.name(field)} = ${update.value(expected[field])}`;
    return expected[field] === HEAD_DEFAULTS[field]
      ? `(attribute_not_exists(${update.name(field)}) OR ${equal})`
      : equal;
  });
  const condition = ["attribute_exists(pk)", ...holds, update.live()].join(" AND ");
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
