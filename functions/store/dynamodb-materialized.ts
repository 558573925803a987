/**
 * The materialized forms of bands in the DynamoDB conversation store
 * (ports.ts `MaterializedBand`): one `MAT#<band key>` item each, its turns
 * as gzipped JSON, put in the band's own transaction or later, on a check
 * that the band is still stored, and deleted after the transaction that
 * removes the band. A form whose compressed turns would not
 * fit one item is not kept: the view then reads the band's raw turns.
 */
import { promisify } from "node:util";
import { gunzip as gunzipCallback, gzip as gzipCallback } from "node:zlib";
import { DeleteItemCommand, type TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { ConditionFailedError, CorruptDataError } from "../errors.ts";
import type { ConversationRef, MaterializedBand } from "../ports.ts";
import type { Item } from "./dynamodb-items.ts";
import {
  compactionSk,
  MATERIALIZED_SK_PREFIX,
  materializedSk,
  partitionKey,
} from "./dynamodb-keys.ts";
import { type DynamoTarget, queryPartition, transactWrite } from "./dynamodb-target.ts";

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/** The most compressed bytes of turns one MAT item holds (items are limited to 400 KB). */
export const MATERIALIZED_MAX_BYTES = 380 * 1024;

/** `form`'s MAT item, or none when its compressed turns are too large to keep. */
async function materializedItem(
  ref: ConversationRef,
  form: MaterializedBand,
): Promise<Item | undefined> {
  const data = await gzip(Buffer.from(JSON.stringify(form.turns), "utf8"));
  if (data.length > MATERIALIZED_MAX_BYTES) return undefined;
  return {
    pk: { S: partitionKey(ref) },
    sk: { S: materializedSk(form.key) },
    key: { S: form.key },
    from_turn: { N: String(form.from_turn) },
    to_turn: { N: String(form.to_turn) },
    covering: { L: form.covering.map((band) => ({ S: band })) },
    data: { B: data },
  };
}

/** The Put of `form`'s MAT item in its band's transaction, or none when it is too large to keep. */
export async function putMaterialized(
  target: DynamoTarget,
  ref: ConversationRef,
  form: MaterializedBand,
): Promise<TransactWriteItem[]> {
  const item = await materializedItem(ref, form);
  // A form left by a band removed under the same key is replaced: it no longer held.
  return item ? [{ Put: { TableName: target.table, Item: item } }] : [];
}

/**
 * The port's `addMaterialized` on `target`: the MAT item put in one
 * transaction with a check that the band's CMP item still has `seq`.
 */
export async function addMaterialized(
  target: DynamoTarget,
  ref: ConversationRef,
  seq: number,
  form: MaterializedBand,
): Promise<boolean> {
  const item = await materializedItem(ref, form);
  if (!item) return false;
  const check: TransactWriteItem = {
    ConditionCheck: {
      TableName: target.table,
      Key: { pk: { S: partitionKey(ref) }, sk: { S: compactionSk(form.key) } },
      ConditionExpression: "seq = :seq",
      ExpressionAttributeValues: { ":seq": { N: String(seq) } },
    },
  };
  try {
    await transactWrite(
      target,
      "AddMaterialized",
      [check, { Put: { TableName: target.table, Item: item } }],
      () => `band ${form.key}@${seq} is no longer stored`,
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/** The port's `listMaterialized` on `target`: one Query of the MAT items. */
export async function listMaterialized(
  target: DynamoTarget,
  ref: ConversationRef,
): Promise<MaterializedBand[]> {
  const items = await queryPartition(target, ref, {
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":prefix": { S: MATERIALIZED_SK_PREFIX } },
  });
  const forms = await Promise.all(items.map(fromMaterializedItem));
  return forms.sort((a, b) => a.from_turn - b.from_turn);
}

async function fromMaterializedItem(item: Item): Promise<MaterializedBand> {
  const key = item.key?.S ?? "";
  try {
    return {
      key,
      from_turn: Number(item.from_turn?.N),
      to_turn: Number(item.to_turn?.N),
      covering: (item.covering?.L ?? []).map((band) => band.S ?? ""),
      turns: JSON.parse((await gunzip(item.data?.B ?? new Uint8Array())).toString("utf8")),
    };
  } catch (error) {
    throw new CorruptDataError(`materialized band ${key} cannot be decoded`, { cause: error });
  }
}

/**
 * Deletes the forms of the bands `keys` (after the transaction that removed
 * them; one missed by a crash no longer holds, and goes with the conversation).
 */
export async function deleteMaterialized(
  target: DynamoTarget,
  ref: ConversationRef,
  keys: readonly string[],
): Promise<void> {
  await Promise.all(
    keys.map((key) =>
      target.client.send(
        new DeleteItemCommand({
          TableName: target.table,
          Key: { pk: { S: partitionKey(ref) }, sk: { S: materializedSk(key) } },
        }),
      ),
    ),
  );
}
