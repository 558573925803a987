/**
 * `Idempotency-Key` records in the DynamoDB store (the port's
 * `claimIdempotencyKey`, `finishIdempotencyKey`, `releaseIdempotencyKey`;
 * docs/architecture.md §7): one item per key in the conversation's
 * partition, `sk = IDEM#<key>` (escaped as ids are), holding the request's
 * `digest`, `expires_at` (the table's TTL) and, once the request finished,
 * its answer (`answer_status`, `answer_body` as gzip JSON in Binary). A
 * delete's keys-only Query of the partition removes them with the rest.
 *
 * The timeline each condition guards:
 *
 *     claim ─ pending (short expiry) ─ finish: answered (24 h) ─ TTL
 *                                    └ release: gone (the request failed)
 *
 * A claim is one conditional PutItem: it takes the key unless an unexpired
 * record is there (TTL deletes lazily, so an expired one still present counts
 * as absent); when the condition fails, the record comes back with the
 * failure (`ALL_OLD`). A finish and a release name the digest that claimed
 * the key and require no answer yet, so a request whose pending claim
 * expired (and was taken by another) never overwrites the other's record.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import {
  type AttributeValue,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { ConditionFailedError, CorruptDataError } from "../errors.ts";
import type {
  ConversationRef,
  ConversationStore,
  IdempotencyClaim,
  IdempotencyRecord,
} from "../ports.ts";
import { isConditionFailure } from "./dynamodb-conflicts.ts";
import { idempotencySk, partitionKey } from "./dynamodb-keys.ts";
import type { DynamoTarget } from "./dynamodb-target.ts";
import { tableDefinition } from "./table-definition.ts";

const TTL = tableDefinition.timeToLiveAttribute;

/** Pending and of this digest: what a finish and a release require. */
const OWN_PENDING = "digest = :digest AND attribute_not_exists(answer_status)";

function keyOf(ref: ConversationRef, key: string): Record<string, AttributeValue> {
  return { pk: { S: partitionKey(ref) }, sk: { S: idempotencySk(key) } };
}

function recordOf(item: Record<string, AttributeValue>, where: string): IdempotencyRecord {
  const digest = item.digest?.S;
  if (digest === undefined) throw new CorruptDataError(`${where} holds no digest`);
  if (item.answer_status?.N === undefined) return { digest };
  const bytes = item.answer_body?.B;
  if (bytes === undefined) throw new CorruptDataError(`${where} has a status but no body`);
  const text = gunzipSync(bytes).toString("utf8");
  return {
    digest,
    answer: {
      status: Number(item.answer_status.N),
      body: text === "" ? undefined : JSON.parse(text),
    },
  };
}

export async function claimIdempotencyKey(
  target: DynamoTarget,
  ...[ref, key, digest, nowSeconds, expiresAtSeconds]: Parameters<
    ConversationStore["claimIdempotencyKey"]
  >
): Promise<IdempotencyClaim> {
  const Key = keyOf(ref, key);
  try {
    await target.client.send(
      new PutItemCommand({
        TableName: target.table,
        Item: { ...Key, digest: { S: digest }, [TTL]: { N: String(expiresAtSeconds) } },
        ConditionExpression: "attribute_not_exists(pk) OR #expires <= :now",
        ExpressionAttributeNames: { "#expires": TTL },
        ExpressionAttributeValues: { ":now": { N: String(nowSeconds) } },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { claimed: true };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old =
      (error as { Item?: Record<string, AttributeValue> }).Item ??
      (
        await target.client.send(
          new GetItemCommand({ TableName: target.table, Key, ConsistentRead: true }),
        )
      ).Item;
    if (!old) throw new ConditionFailedError(`${Key.sk?.S} failed its claim but is not there`);
    return { claimed: false, record: recordOf(old, `${Key.pk?.S} ${Key.sk?.S}`) };
  }
}

export async function finishIdempotencyKey(
  target: DynamoTarget,
  ...[ref, key, digest, answer, expiresAtSeconds]: Parameters<
    ConversationStore["finishIdempotencyKey"]
  >
): Promise<void> {
  const body = gzipSync(answer.body === undefined ? "" : JSON.stringify(answer.body));
  try {
    await target.client.send(
      new UpdateItemCommand({
        TableName: target.table,
        Key: keyOf(ref, key),
        UpdateExpression: "SET answer_status = :status, answer_body = :body, #expires = :expires",
        ConditionExpression: OWN_PENDING,
        ExpressionAttributeNames: { "#expires": TTL },
        ExpressionAttributeValues: {
          ":status": { N: String(answer.status) },
          ":body": { B: body },
          ":expires": { N: String(expiresAtSeconds) },
          ":digest": { S: digest },
        },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    throw new ConditionFailedError(`the claim of Idempotency-Key ${JSON.stringify(key)} is gone`, {
      cause: error,
    });
  }
}

export async function releaseIdempotencyKey(
  target: DynamoTarget,
  ...[ref, key, digest]: Parameters<ConversationStore["releaseIdempotencyKey"]>
): Promise<void> {
  try {
    await target.client.send(
      new DeleteItemCommand({
        TableName: target.table,
        Key: keyOf(ref, key),
        ConditionExpression: OWN_PENDING,
        ExpressionAttributeValues: { ":digest": { S: digest } },
      }),
    );
  } catch (error) {
    // Not this digest's pending claim (answered, taken by another, or gone): nothing to release.
    if (!isConditionFailure(error)) throw error;
  }
}
