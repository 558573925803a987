/**
 * The local runtime's recovery after a restart: which conversations have a
 * latest turn that was stored but never evaluated (the in-process queue lost
 * its message, e.g. `npm start` was stopped in between). In AWS the SQS
 * queue keeps pending evaluations, so nothing there needs this.
 *
 * It is a Scan of the whole table, across tenants: kept out of the
 * ConversationStore (whose every read is one conversation's partition), and
 * the deployed functions are not granted `dynamodb:Scan` (infra/stack.ts).
 */
import { type DynamoDBClient, paginateScan } from "@aws-sdk/client-dynamodb";
import type { EvaluationMessage } from "../ports.ts";
import { HEAD_SK, parsePartitionKey } from "../store/dynamodb-keys.ts";

/**
 * Every conversation in `table` whose latest turn has not been evaluated yet,
 * with that turn: the evaluations to enqueue again.
 */
export async function listUnevaluatedConversations(
  client: DynamoDBClient,
  table: string,
): Promise<EvaluationMessage[]> {
  const pending: EvaluationMessage[] = [];
  const pages = paginateScan(
    { client },
    {
      TableName: table,
      ConsistentRead: true,
      // Conversation heads only: tenants' and keys' items have other pk prefixes.
      FilterExpression: "sk = :head AND begins_with(pk, :prefix)",
      ProjectionExpression: "pk, turn_count, evaluated_through, incarnation",
      ExpressionAttributeValues: { ":head": { S: HEAD_SK }, ":prefix": { S: "T#" } },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const turnCount = Number(item.turn_count?.N ?? 0);
      const evaluated = Number(item.evaluated_through?.N ?? -1);
      const ref = parsePartitionKey(item.pk?.S ?? "");
      // The head's life, so the message is not a duplicate of an earlier life's (ports.ts).
      const incarnation = item.incarnation?.S;
      if (ref && evaluated < turnCount - 1) {
        pending.push({ ...ref, turn: turnCount - 1, ...(incarnation ? { incarnation } : {}) });
      }
    }
  }
  return pending;
}
