/**
 * Deleting a conversation from the DynamoDB store (the port's `beginDelete`
 * and `finishDelete`), in steps that stay correct when turns, evaluations or
 * other deletes run at the same time, and when a step crashes:
 *
 * 1. The HEAD becomes a tombstone: `deleting` = a random token (kept if one
 *    is there already) and `compactions_version` + 1. Every head condition
 *    of the store requires `attribute_not_exists(deleting)`, and a band or
 *    reset computed from the old head also fails on the version: nothing
 *    can be written to the conversation from now on.
 * 2. Every other item of the partition (TURN, EVT chunks, CMP, FAILURE), listed by a
 *    keys-only Query over all pages, is deleted in transactions of
 *    {@link PURGE_BATCH} deletes plus a ConditionCheck that the HEAD still
 *    holds that token. Not BatchWriteItem: the functions are not granted it
 *    (infra/stack.ts), and it cannot be conditional. The condition matters:
 *    once another delete has finished, a fresh conversation may reuse the
 *    same keys (`TURN#000000000`), and a late purge must not touch them.
 * 3. The HEAD is deleted on the same condition.
 *
 * A crash leaves the tombstone, and whatever items step 2 had not reached:
 * the next `finishDelete` (a repeated DELETE) lists what is left and
 * finishes. A delete that finds its token gone stops: another finished the
 * job first.
 */
import { randomUUID } from "node:crypto";
import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  paginateQuery,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import type { ConversationRef } from "../ports.ts";
import { type ConflictRetry, isConditionFailure } from "./dynamodb-conflicts.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { HEAD_SK, partitionKey } from "./dynamodb-keys.ts";
import type { DynamoTarget } from "./dynamodb-target.ts";

/** Deletes per purge transaction: DynamoDB's 100 items, one of them the HEAD's ConditionCheck. */
export const PURGE_BATCH = 99;

/** The two steps of a delete on one table (see the module comment). */
export class DynamoConversationDeleter {
  readonly #client: DynamoDBClient;
  readonly #table: string;
  readonly #retryConflicts: ConflictRetry;
  readonly #queryLimit: number | undefined;

  constructor(options: DynamoTarget) {
    this.#client = options.client;
    this.#table = options.table;
    this.#retryConflicts = options.retryConflicts;
    this.#queryLimit = options.queryLimit;
  }

  /** Step 1: the tombstone. False when there is no HEAD. */
  async begin(ref: ConversationRef): Promise<boolean> {
    const update = new UpdateExpressionBuilder()
      .setIfAbsent("deleting", randomUUID())
      .increment("compactions_version", 1);
    try {
      await this.#retryConflicts("BeginDelete", () =>
        this.#client.send(
          update.headCommand(this.#table, partitionKey(ref), "attribute_exists(pk)"),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Steps 2 and 3, for the tombstone there now; nothing without one. */
  async finish(ref: ConversationRef): Promise<void> {
    const { Item: head } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#table,
        Key: this.#headKey(ref),
        ConsistentRead: true,
        ProjectionExpression: "#deleting",
        ExpressionAttributeNames: { "#deleting": "deleting" },
      }),
    );
    const token = head?.deleting?.S;
    if (token === undefined) return;
    const stillTombstone = {
      ConditionExpression: "#deleting = :token",
      ExpressionAttributeNames: { "#deleting": "deleting" },
      ExpressionAttributeValues: { ":token": { S: token } },
    };
    const pk = partitionKey(ref);
    const keys = await this.#otherKeys(pk);
    for (let start = 0; start < keys.length; start += PURGE_BATCH) {
      const items: TransactWriteItem[] = [
        { ConditionCheck: { TableName: this.#table, Key: this.#headKey(ref), ...stillTombstone } },
        ...keys.slice(start, start + PURGE_BATCH).map((sk) => ({
          Delete: { TableName: this.#table, Key: { pk: { S: pk }, sk: { S: sk } } },
        })),
      ];
      const purged = await this.#unlessFinished("PurgeConversation", () =>
        this.#client.send(new TransactWriteItemsCommand({ TransactItems: items })),
      );
      if (!purged) return;
    }
    await this.#unlessFinished("DeleteHead", () =>
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.#table,
          Key: this.#headKey(ref),
          ...stillTombstone,
        }),
      ),
    );
  }

  /** Runs a write conditional on the tombstone; false when another delete removed it first. */
  async #unlessFinished(operation: string, write: () => Promise<unknown>): Promise<boolean> {
    try {
      // A new command per attempt: each transaction gets its own ClientRequestToken.
      await this.#retryConflicts(operation, write);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** The sort key of every item of the partition but the HEAD (a keys-only Query, all pages). */
  async #otherKeys(pk: string): Promise<string[]> {
    const keys: string[] = [];
    const pages = paginateQuery(
      { client: this.#client, pageSize: this.#queryLimit },
      {
        TableName: this.#table,
        ConsistentRead: true,
        KeyConditionExpression: "pk = :pk",
        ProjectionExpression: "sk",
        ExpressionAttributeValues: { ":pk": { S: pk } },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        const sk = item.sk?.S;
        if (sk !== undefined && sk !== HEAD_SK) keys.push(sk);
      }
    }
    return keys;
  }

  #headKey(ref: ConversationRef) {
    return { pk: { S: partitionKey(ref) }, sk: { S: HEAD_SK } };
  }
}
