/**
 * The reads of the DynamoDB conversation store (the port's `getTurn`,
 * `listTurnSizes`, `getTurnSizes`, `readTurns`, `listCompactions` and `listConversations`):
 * strongly consistent, following every page. A turn's events are read from
 * the chunks its committed TURN item names, never from any other.
 */
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import { MAX_TURN } from "../../core/turns.ts";
import type {
  ConversationPage,
  ConversationRef,
  ConversationStore,
  StoredCompaction,
  StoredTurn,
  TurnSizeRecord,
} from "../ports.ts";
import { decodeListCursor, encodeListCursor, listedConversation } from "./conversation-list.ts";
import { decodeEvents } from "./dynamodb-chunks.ts";
import {
  fromCompactionItem,
  type Item,
  type TurnRecord,
  toHead,
  toTurnRecord,
} from "./dynamodb-items.ts";
import {
  COMPACTION_SK_PREFIX,
  chunkPrefix,
  chunkPrefixOf,
  chunkRange,
  HEAD_SK,
  isTurnNumber,
  listPartitionKey,
  parsePartitionKey,
  partitionKey,
  TURN_SK_PREFIX,
  turnSk,
} from "./dynamodb-keys.ts";
import { type DynamoTarget, getItem, queryPartition } from "./dynamodb-target.ts";
import { byStreamOrder } from "./stream-order.ts";
import { tableDefinition } from "./table-definition.ts";

/** The port's `getTurn` on `target`. */
export async function getTurn(
  target: DynamoTarget,
  ...[ref, turn]: Parameters<ConversationStore["getTurn"]>
): Promise<StoredTurn | undefined> {
  if (!isTurnNumber(turn)) return undefined;
  const item = await getItem(target, ref, turnSk(turn));
  if (!item) return undefined;
  const record = toTurnRecord(item);
  return assemble(record, await withPrefix(target, ref, chunkPrefix(turn, record.storage.hash)));
}

/** The port's `listTurnSizes` on `target`. */
export async function listTurnSizes(
  target: DynamoTarget,
  ...[ref]: Parameters<ConversationStore["listTurnSizes"]>
): Promise<TurnSizeRecord[]> {
  const items = await withPrefix(target, ref, TURN_SK_PREFIX);
  return items.map((item) => toTurnRecord(item).summary);
}

/** The port's `getTurnSizes` on `target`: one consistent GetItem per turn, in parallel. */
export async function getTurnSizes(
  target: DynamoTarget,
  ...[ref, turns]: Parameters<ConversationStore["getTurnSizes"]>
): Promise<TurnSizeRecord[]> {
  const wanted = [...new Set(turns)].filter(isTurnNumber).sort((a, b) => a - b);
  const items = await Promise.all(wanted.map((turn) => getItem(target, ref, turnSk(turn))));
  return items.flatMap((item) => (item ? [toTurnRecord(item).summary] : []));
}

/** The port's `readTurns` on `target`. */
export async function readTurns(
  target: DynamoTarget,
  ...[ref, from = 0, to = Number.MAX_SAFE_INTEGER]: Parameters<ConversationStore["readTurns"]>
): Promise<StoredTurn[]> {
  const low = Math.max(0, Math.ceil(from));
  const high = Math.min(MAX_TURN, Math.floor(to));
  if (!(low <= high)) return [];
  // Turns first: a turn committed after this query is left out, and the
  // chunks of every turn it returns were written before that turn committed.
  const records = (await between(target, ref, turnSk(low), turnSk(high))).map(toTurnRecord);
  const first = records[0];
  const last = records.at(-1);
  if (!first || !last) return [];
  // One range query for every chunk of those turns: orphans and racers'
  // chunks come along and are dropped by their blob hash below.
  const range = chunkRange(first.summary.turn, last.summary.turn);
  const chunks = await between(target, ref, range.low, range.high);
  const byPrefix = new Map<string, Item[]>();
  for (const chunk of chunks) {
    const prefix = chunkPrefixOf(chunk.sk?.S ?? "");
    const group = byPrefix.get(prefix);
    if (group) group.push(chunk);
    else byPrefix.set(prefix, [chunk]);
  }
  return Promise.all(
    records.map((record) =>
      assemble(record, byPrefix.get(chunkPrefix(record.summary.turn, record.storage.hash)) ?? []),
    ),
  );
}

/** The port's `listCompactions` on `target`. */
export async function listCompactions(
  target: DynamoTarget,
  ...[ref]: Parameters<ConversationStore["listCompactions"]>
): Promise<StoredCompaction[]> {
  const items = await withPrefix(target, ref, COMPACTION_SK_PREFIX);
  const compactions = await Promise.all(items.map(fromCompactionItem));
  return compactions.sort(byStreamOrder);
}

/** The port's `listConversations` on `target`: a Query of the list index, newest activity first. */
export async function listConversations(
  target: DynamoTarget,
  ...[tenant, page]: Parameters<ConversationStore["listConversations"]>
): Promise<ConversationPage> {
  const index = tableDefinition.listIndex;
  const listPk = listPartitionKey(tenant);
  let start: Item | undefined;
  if (page.cursor !== undefined) {
    const after = decodeListCursor(page.cursor);
    start = {
      pk: { S: partitionKey({ tenant, conversation: after.conversation }) },
      sk: { S: HEAD_SK },
      [index.partitionKey.name]: { S: listPk },
      [index.sortKey.name]: { N: String(after.active_at) },
    };
  }
  const conversations: ConversationPage["conversations"][number][] = [];
  let last: Item | undefined;
  // Tombstones are filtered out after the limit: read on until the page is full.
  do {
    const { Items = [], LastEvaluatedKey } = await target.client.send(
      new QueryCommand({
        TableName: target.table,
        IndexName: index.name,
        KeyConditionExpression: "#list_pk = :list_pk",
        FilterExpression: "attribute_not_exists(#deleting)",
        ExpressionAttributeNames: {
          "#list_pk": index.partitionKey.name,
          "#deleting": "deleting",
        },
        ExpressionAttributeValues: { ":list_pk": { S: listPk } },
        ScanIndexForward: false,
        Limit: page.limit - conversations.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of Items) {
      const conversation = parsePartitionKey(item.pk?.S ?? "")?.conversation ?? "";
      conversations.push(listedConversation(conversation, toHead(item)));
    }
    start = LastEvaluatedKey;
    last = LastEvaluatedKey;
  } while (start !== undefined && conversations.length < page.limit);
  const position = last && {
    active_at: Number(last[index.sortKey.name]?.N),
    conversation: parsePartitionKey(last.pk?.S ?? "")?.conversation ?? "",
  };
  return { conversations, ...(position ? { next_cursor: encodeListCursor(position) } : {}) };
}

/** Every item of the conversation whose sort key starts with `prefix`. */
function withPrefix(target: DynamoTarget, ref: ConversationRef, prefix: string): Promise<Item[]> {
  return queryPartition(target, ref, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":prefix": { S: prefix } },
  });
}

/** Every item of the conversation whose sort key is in `low..high` (inclusive). */
function between(
  target: DynamoTarget,
  ref: ConversationRef,
  low: string,
  high: string,
): Promise<Item[]> {
  return queryPartition(target, ref, {
    KeyConditionExpression: "pk = :pk AND sk BETWEEN :low AND :high",
    ExpressionAttributeValues: { ":low": { S: low }, ":high": { S: high } },
  });
}

/** The stored turn of a TURN item's record and the chunks of its events. */
async function assemble(record: TurnRecord, chunks: readonly Item[]): Promise<StoredTurn> {
  const { turn, evaluation: _evaluation, ...rest } = record.summary;
  const events = await decodeEvents(turn, record.storage, chunks);
  return { turn, events, ...rest };
}
