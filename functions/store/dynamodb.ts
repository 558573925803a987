/**
 * The {@link ConversationStore} on DynamoDB: one table, `pk` + `sk` strings
 * (docs/architecture.md §7). Every read is strongly consistent and follows every
 * page; every write is conditional on the head.
 *
 * Items of one conversation (`pk = T#<tenant>#C#<conversation>`, with `%`
 * and `#` in the ids escaped as `%25` and `%23` so ids can never collide;
 * keys in dynamodb-keys.ts, attributes in dynamodb-items.ts):
 *
 * - `HEAD`: turn_count, evaluated_through, projected_chars,
 *   compactions_version, max_compacted_turn, and the optional config,
 *   stream_config and model (native maps); `deleting` (a token) while a
 *   delete is under way (dynamodb-delete.ts): every head condition
 *   requires it absent. The tenant's list index (dynamodb-table.ts
 *   `listIndex`) is kept on it: `list_pk` and `active_at`, set by every
 *   append, compaction change and config; `bands` and `last_fired_at` are
 *   what the list shows.
 * - `TURN#<turn, 9 digits>`: the commit marker of a turn: turn, digest, size
 *   counts, model, and `storage` = {encoding, hash, chunks, bytes,
 *   json_bytes} telling where its events are. Never overwritten; only
 *   `evaluation` is added to it (below).
 * - `EVT#<turn>#<blob hash prefix>#c<chunk, 4 digits>`: the turn's events as
 *   gzip-compressed JSON in Binary chunks (dynamodb-chunks.ts). Readers only
 *   follow the chunks that a committed TURN item names.
 * - `TURN#…` also keeps, once the evaluation after the turn decided, that
 *   decision and what it saw (`evaluation`): in a firing's own transaction,
 *   or, for a skip, right after the head took the evaluated mark.
 * - `CMP#<compaction key>`: key, after_turn, seq, and the compaction as JSON
 *   (gzipped as Binary when large).
 * - `FAILURE`: the last failed evaluation (dynamodb-failures.ts).
 *
 * Appending a turn whose compressed events fit in one transaction (the usual
 * case) writes chunks + TURN (if absent) + HEAD (if turn_count and
 * compactions_version are still the expected ones) in one
 * TransactWriteItems. Bigger turns first write their chunks (idempotent
 * puts, pending: `expires_at` = now + 24 h, the table's TTL), then commit
 * TURN + HEAD in a transaction that also REMOVEs `expires_at` from each of
 * their chunks (at most 98: with 350 KB chunks 34 MB compressed, far above
 * the API's 5 MiB bodies; bigger turns are refused): a committed turn's
 * chunks never expire, and a crashed writer's do (dynamodb-chunks.ts). A
 * loser of that race deletes its own chunks when the winner's differ; a
 * retry of the same turn rewrites them in place.
 *
 * Retries: the client's SDK retry strategy handles throttling and transient
 * errors, so the store expects a client built with `dynamoClientConfig`
 * (dynamodb-client.ts). The store itself retries only transaction conflicts,
 * which the SDK does not (dynamodb-conflicts.ts).
 */
import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  paginateQuery,
  QueryCommand,
  type QueryCommandInput,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  type Update,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import type { AutoConfigLayer } from "../../core/config.ts";
import { PROBLEM_VARIANTS, UnprocessableError } from "../../core/errors.ts";
import { ConditionFailedError } from "../errors.ts";
import type {
  AppendCondition,
  ConversationHead,
  ConversationPage,
  ConversationRef,
  ConversationStore,
  EvaluationDecision,
  EvaluationFailure,
  EvaluationMeasures,
  HeadCounters,
  HeadUpdate,
  HeadVersion,
  StoredCompaction,
  StoredTurn,
  TurnEvaluation,
  TurnSizeRecord,
} from "../ports.ts";
import {
  commitChunk,
  DEFAULT_CHUNK_BYTES,
  decodeEvents,
  encodeEvents,
  putPendingChunk,
} from "./dynamodb-chunks.ts";
import {
  type CancellationReason,
  type ConflictRetry,
  type ConflictRetryOptions,
  cancellationReasons,
  conflictRetry,
  headConflict,
  isConditionFailure,
} from "./dynamodb-conflicts.ts";
import { DynamoConversationDeleter } from "./dynamodb-delete.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { getFailure, putFailure } from "./dynamodb-failures.ts";
import {
  attr,
  byStreamOrder,
  fromCompactionItem,
  type Item,
  type TurnRecord,
  toCompactionItem,
  toHead,
  toTurnItem,
  toTurnRecord,
} from "./dynamodb-items.ts";
import {
  COMPACTION_SK_PREFIX,
  chunkPrefix,
  chunkPrefixOf,
  chunkRange,
  chunkSk,
  compactionSk,
  HEAD_SK,
  isTurnNumber,
  listPartitionKey,
  MAX_TURN,
  parsePartitionKey,
  partitionKey,
  TURN_SK_PREFIX,
  turnSk,
} from "./dynamodb-keys.ts";
import { repairHead } from "./dynamodb-repair.ts";
import { tableDefinition } from "./dynamodb-table.ts";
import { decodeListCursor, encodeListCursor } from "./list-cursor.ts";

/** Compressed events up to this size are written in the same transaction as their turn. */
export const DEFAULT_MAX_TRANSACTION_BYTES = 2 * 1024 * 1024;
/** DynamoDB's limit of items per TransactWriteItems. */
const MAX_TRANSACTION_ITEMS = 100;
/** Parallel PutItem/DeleteItem calls when chunks are written outside a transaction. */
const WRITE_CONCURRENCY = 4;

/** Tuning of a {@link DynamoConversationStore}; the defaults are for production. */
export interface DynamoStoreOptions {
  /** Largest Binary payload per event chunk item (default {@link DEFAULT_CHUNK_BYTES}). */
  readonly chunkBytes?: number;
  /** Events compressed to at most this many bytes commit in one transaction with their turn. */
  readonly maxTransactionBytes?: number;
  /** `Limit` of every Query page (default none: DynamoDB's 1 MB pages). Tests make it small. */
  readonly queryLimit?: number;
  /** The retry of transaction conflicts (throttling is the SDK client's to retry). */
  readonly conflictRetry?: ConflictRetryOptions;
  /** The time of activity the list index orders by (default `Date.now`). */
  readonly now?: () => number;
}

/** Runs `run` on every item, at most `limit` at a time (the functions are granted no BatchWriteItem). */
async function mapLimit<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The {@link ConversationStore} on one DynamoDB table (see the module comment for the layout). */
export class DynamoConversationStore implements ConversationStore {
  readonly #client: DynamoDBClient;
  readonly #table: string;
  readonly #chunkBytes: number;
  readonly #maxTransactionBytes: number;
  readonly #queryLimit: number | undefined;
  readonly #retryConflicts: ConflictRetry;
  readonly #deleter: DynamoConversationDeleter;
  readonly #now: () => number;

  /**
   * @param client a client configured with `dynamoClientConfig` (its SDK
   *   retry strategy is the store's only retry of throttling)
   */
  constructor(client: DynamoDBClient, tableName: string, options: DynamoStoreOptions = {}) {
    this.#client = client;
    this.#table = tableName;
    this.#chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    this.#maxTransactionBytes = options.maxTransactionBytes ?? DEFAULT_MAX_TRANSACTION_BYTES;
    this.#queryLimit = options.queryLimit;
    this.#retryConflicts = conflictRetry(options.conflictRetry);
    this.#now = options.now ?? Date.now;
    this.#deleter = new DynamoConversationDeleter({
      client,
      table: tableName,
      retryConflicts: this.#retryConflicts,
      queryLimit: this.#queryLimit,
    });
    if (!(this.#chunkBytes > 0 && this.#chunkBytes <= DEFAULT_CHUNK_BYTES)) {
      throw new RangeError(`chunkBytes must be in (0, ${DEFAULT_CHUNK_BYTES}]`);
    }
    // A transaction carries at most 4 MB: keep room for keys and the head.
    if (!(this.#maxTransactionBytes >= 0 && this.#maxTransactionBytes <= 3.5 * 1024 * 1024)) {
      throw new RangeError("maxTransactionBytes must be in [0, 3.5 MiB]");
    }
  }

  // ---------------------------------------------------------------- reads

  async getHead(ref: ConversationRef): Promise<ConversationHead | undefined> {
    const item = await this.#get(ref, HEAD_SK);
    return item ? toHead(item) : undefined;
  }

  async getTurn(ref: ConversationRef, turn: number): Promise<StoredTurn | undefined> {
    if (!isTurnNumber(turn)) return undefined;
    const item = await this.#get(ref, turnSk(turn));
    if (!item) return undefined;
    const record = toTurnRecord(item);
    const chunks = await this.#query(ref, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: {
        ":prefix": { S: chunkPrefix(turn, record.storage.hash) },
      },
    });
    return this.#assemble(record, chunks);
  }

  async listTurnSizes(ref: ConversationRef): Promise<TurnSizeRecord[]> {
    const items = await this.#query(ref, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":prefix": { S: TURN_SK_PREFIX } },
    });
    return items.map((item) => toTurnRecord(item).summary);
  }

  async readTurns(
    ref: ConversationRef,
    from = 0,
    to = Number.MAX_SAFE_INTEGER,
  ): Promise<StoredTurn[]> {
    const low = Math.max(0, Math.ceil(from));
    const high = Math.min(MAX_TURN, Math.floor(to));
    if (!(low <= high)) return [];
    // Turns first: a turn committed after this query is left out, and the
    // chunks of every turn it returns were written before that turn committed.
    const records = (
      await this.#query(ref, {
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :low AND :high",
        ExpressionAttributeValues: { ":low": { S: turnSk(low) }, ":high": { S: turnSk(high) } },
      })
    ).map(toTurnRecord);
    const first = records[0];
    const last = records.at(-1);
    if (!first || !last) return [];
    // One range query for every chunk of those turns: orphans and racers'
    // chunks come along and are dropped by their blob hash below.
    const range = chunkRange(first.summary.turn, last.summary.turn);
    const chunks = await this.#query(ref, {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :low AND :high",
      ExpressionAttributeValues: { ":low": { S: range.low }, ":high": { S: range.high } },
    });
    const byPrefix = new Map<string, Item[]>();
    for (const chunk of chunks) {
      const prefix = chunkPrefixOf(chunk.sk?.S ?? "");
      const group = byPrefix.get(prefix);
      if (group) group.push(chunk);
      else byPrefix.set(prefix, [chunk]);
    }
    return Promise.all(
      records.map((record) =>
        this.#assemble(
          record,
          byPrefix.get(chunkPrefix(record.summary.turn, record.storage.hash)) ?? [],
        ),
      ),
    );
  }

  async listCompactions(ref: ConversationRef): Promise<StoredCompaction[]> {
    const items = await this.#query(ref, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":prefix": { S: COMPACTION_SK_PREFIX } },
    });
    const compactions = await Promise.all(items.map(fromCompactionItem));
    return compactions.sort(byStreamOrder);
  }

  // ---------------------------------------------------------------- writes

  async appendTurn(
    ref: ConversationRef,
    turn: StoredTurn,
    condition: AppendCondition,
    head: HeadUpdate,
  ): Promise<void> {
    const pk = partitionKey(ref);
    const n = turn.turn;
    const uncompacted = "uncompacted" in condition;
    const expectedCompactionsVersion = uncompacted ? 0 : condition.compactions_version;
    const expected: HeadVersion = {
      turn_count: n,
      compactions_version: expectedCompactionsVersion,
    };
    const encoded = await encodeEvents(pk, n, turn.events, this.#chunkBytes);
    const chunkItems = encoded.items;
    const turnItem = toTurnItem(pk, turn, encoded.storage);

    const update = new UpdateExpressionBuilder()
      .set("turn_count", n + 1)
      .active(listPartitionKey(ref.tenant), this.#now());
    if (uncompacted) update.increment("projected_chars", condition.add_projected_chars);
    update.head(head, uncompacted ? ["projected_chars"] : []).defaults();
    // A missing head counts as turn_count 0, compactions_version 0, no compaction.
    const headCondition = uncompacted
      ? update.uncompactedCondition(n, condition.latest_event_ms)
      : update.versionCondition(expected);
    const headExpression =
      n === 0 && expectedCompactionsVersion === 0
        ? `attribute_not_exists(pk) OR (${headCondition})`
        : headCondition;
    const commit: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.#table,
          Item: turnItem,
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      {
        Update: {
          TableName: this.#table,
          Key: { pk: { S: pk }, sk: { S: HEAD_SK } },
          UpdateExpression: update.expression,
          ConditionExpression: headExpression,
          ExpressionAttributeNames: update.names,
          ExpressionAttributeValues: update.values,
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
    ];
    const describe = ([turnReason, headReason]: readonly (CancellationReason | undefined)[]) =>
      headReason?.Code !== "ConditionalCheckFailed" && turnReason?.Code === "ConditionalCheckFailed"
        ? `turn ${n} is already stored`
        : uncompacted
          ? `${headConflict(expected, headReason).replace(/; expected.*$/, "")}; expected turn_count ${n} and no compaction covering it`
          : headConflict(expected, headReason);

    const oneTransaction =
      encoded.blob.length <= this.#maxTransactionBytes &&
      chunkItems.length + commit.length <= MAX_TRANSACTION_ITEMS;
    if (oneTransaction) {
      const puts: TransactWriteItem[] = chunkItems.map((Item) => ({
        Put: { TableName: this.#table, Item },
      }));
      await this.#transact("AppendTurn", [...puts, ...commit], (reasons) =>
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
    const current = await this.#get(ref, HEAD_SK);
    const headMovedOn =
      current?.deleting !== undefined ||
      (uncompacted
        ? (current?.turn_count?.N ?? "0") !== String(n) ||
          Number(current?.max_compacted_turn?.N ?? "-1") >= n ||
          (condition.latest_event_ms !== undefined &&
            Number(current?.latest_event_ms?.N ?? "-Infinity") > condition.latest_event_ms)
        : (current?.turn_count?.N ?? "0") !== String(n) ||
          (current?.compactions_version?.N ?? "0") !== String(expectedCompactionsVersion));
    if (headMovedOn) {
      throw new ConditionFailedError(headConflict(expected, { Item: current ?? {} }));
    }
    const now = Date.now();
    await mapLimit(chunkItems, WRITE_CONCURRENCY, (item) =>
      putPendingChunk(this.#client, this.#table, item, now, this.#retryConflicts),
    );
    const permanent = chunkItems.map((item) => commitChunk(this.#table, item));
    try {
      await this.#transact("AppendTurn", [...commit, ...permanent], (reasons) =>
        reasons.slice(commit.length).some((reason) => reason?.Code === "ConditionalCheckFailed")
          ? `turn ${n}'s event chunks are gone (expired) before it committed`
          : describe(reasons),
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        await this.#discardLosingChunks(ref, n, encoded.storage.hash, chunkItems.length);
      }
      throw error;
    }
  }

  async addCompaction(
    ref: ConversationRef,
    compaction: StoredCompaction,
    expected: HeadVersion,
    head: HeadUpdate,
    evaluation?: TurnEvaluation,
  ): Promise<void> {
    const pk = partitionKey(ref);
    const item = await toCompactionItem(pk, compaction);
    await this.#transact(
      "AddCompaction",
      [
        {
          Put: {
            TableName: this.#table,
            Item: item,
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        this.#versionedHeadUpdate(ref, expected, head),
        ...(evaluation ? [{ Update: this.#recordEvaluation(pk, evaluation) }] : []),
      ],
      ([put, headReason]) =>
        put?.Code === "ConditionalCheckFailed"
          ? `compaction ${compaction.key} exists`
          : headConflict(expected, headReason),
    );
  }

  async removeCompactions(
    ref: ConversationRef,
    keys: readonly string[],
    expected: HeadVersion,
    head: HeadUpdate,
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
      Delete: { TableName: this.#table, Key: { pk: { S: pk }, sk: { S: compactionSk(key) } } },
    }));
    await this.#transact(
      "RemoveCompactions",
      [...deletes, this.#versionedHeadUpdate(ref, expected, head)],
      (reasons) => headConflict(expected, reasons.at(-1)),
    );
  }

  async putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void> {
    const update = new UpdateExpressionBuilder()
      .set("config", config)
      .active(listPartitionKey(ref.tenant), this.#now())
      .defaults();
    try {
      await this.#retryConflicts("PutConfig", () =>
        this.#client.send(update.headCommand(this.#table, partitionKey(ref), update.live())),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new ConditionFailedError("the conversation is being deleted", { cause: error });
    }
  }

  async markEvaluated(
    ref: ConversationRef,
    turn: number,
    decision?: EvaluationDecision,
    measures?: EvaluationMeasures,
  ): Promise<void> {
    const pk = partitionKey(ref);
    const update = new UpdateExpressionBuilder().set("evaluated_through", turn);
    if (decision) update.head({ decided_through: decision.turn, last_decision: decision });
    const condition = `attribute_exists(pk) AND ${update.name("evaluated_through")} < ${update.value(turn)} AND ${update.live()}`;
    try {
      await this.#retryConflicts("MarkEvaluated", () =>
        this.#client.send(update.headCommand(this.#table, pk, condition)),
      );
      // The turn's record, once the head took the mark: a second single-item
      // write (1 write unit) rather than a transaction with the head (2 per
      // item, and twice the no-fire latency on DynamoDB Local). A crash in
      // between leaves the record unknown, which the timeline reads as null.
      if (decision && measures) {
        const record = this.#recordEvaluation(pk, { ...decision, ...measures });
        await this.#client.send(new UpdateItemCommand(record));
      }
    } catch (error) {
      // Already evaluated this far (or no such conversation, or being deleted,
      // or deleted since the mark): nothing to do.
      if (!isConditionFailure(error)) throw error;
    }
  }

  repairHead(ref: ConversationRef, expected: HeadCounters, counters: HeadCounters): Promise<void> {
    const target = {
      client: this.#client,
      table: this.#table,
      retryConflicts: this.#retryConflicts,
    };
    return repairHead(target, partitionKey(ref), expected, counters);
  }

  beginDelete(ref: ConversationRef): Promise<boolean> {
    return this.#deleter.begin(ref);
  }

  finishDelete(ref: ConversationRef): Promise<void> {
    return this.#deleter.finish(ref);
  }

  // ---------------------------------------------------------------- helpers

  async listConversations(
    tenant: string,
    page: { readonly limit: number; readonly cursor?: string },
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
      const { Items = [], LastEvaluatedKey } = await this.#client.send(
        new QueryCommand({
          TableName: this.#table,
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
        const head = toHead(item);
        conversations.push({
          conversation: parsePartitionKey(item.pk?.S ?? "")?.conversation ?? "",
          turn_count: head.turn_count,
          projected_chars: head.projected_chars,
          ...(head.model ? { model: head.model } : {}),
          ...(head.bands ? { bands: head.bands } : {}),
          ...(head.last_fired_at ? { last_fired_at: head.last_fired_at } : {}),
        });
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

  /** The write that keeps an evaluation on its turn's TURN item (which must exist). */
  #recordEvaluation(pk: string, evaluation: TurnEvaluation): Update {
    return {
      TableName: this.#table,
      Key: { pk: { S: pk }, sk: { S: turnSk(evaluation.turn) } },
      UpdateExpression: "SET #evaluation = :evaluation",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: { "#evaluation": "evaluation" },
      ExpressionAttributeValues: { ":evaluation": attr(evaluation) },
    };
  }

  /** The head update of a compaction change: bumps the version if the head is still at `expected`. */
  #versionedHeadUpdate(
    ref: ConversationRef,
    expected: HeadVersion,
    head: HeadUpdate,
  ): TransactWriteItem {
    const update = new UpdateExpressionBuilder()
      .set("compactions_version", expected.compactions_version + 1)
      .active(listPartitionKey(ref.tenant), this.#now())
      .head(head, ["compactions_version"]);
    return {
      Update: {
        TableName: this.#table,
        Key: { pk: { S: partitionKey(ref) }, sk: { S: HEAD_SK } },
        UpdateExpression: update.expression,
        ConditionExpression: update.versionCondition(expected),
        ExpressionAttributeNames: update.names,
        ExpressionAttributeValues: update.values,
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    };
  }

  /** A losing writer's chunks can be deleted once the winner's (different) chunks are committed. */
  async #discardLosingChunks(ref: ConversationRef, n: number, hash: string, count: number) {
    try {
      const committed = await this.#get(ref, turnSk(n));
      if (!committed || toTurnRecord(committed).storage.hash === hash) return;
      const pk = partitionKey(ref);
      const keys = Array.from({ length: count }, (_, index) => chunkSk(n, hash, index));
      await mapLimit(keys, WRITE_CONCURRENCY, async (sk) => {
        await this.#retryConflicts("DeleteItem", () =>
          this.#client.send(
            new DeleteItemCommand({
              TableName: this.#table,
              Key: { pk: { S: pk }, sk: { S: sk } },
            }),
          ),
        );
      });
    } catch {
      // Best effort: orphan chunks are never read.
    }
  }

  async #assemble(record: TurnRecord, chunks: readonly Item[]): Promise<StoredTurn> {
    const { turn, evaluation: _evaluation, ...rest } = record.summary;
    const events = await decodeEvents(turn, record.storage, chunks);
    return { turn, events, ...rest };
  }

  recordFailure(ref: ConversationRef, failure: EvaluationFailure): Promise<void> {
    return putFailure(this.#client, this.#table, ref, failure);
  }

  lastFailure(ref: ConversationRef): Promise<EvaluationFailure | undefined> {
    return getFailure(this.#client, this.#table, ref);
  }

  async #get(ref: ConversationRef, sk: string): Promise<Item | undefined> {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#table,
        Key: { pk: { S: partitionKey(ref) }, sk: { S: sk } },
        ConsistentRead: true,
      }),
    );
    return Item;
  }

  /** Every item of a Query on the conversation's partition, all pages. */
  async #query(
    ref: ConversationRef,
    input: Pick<QueryCommandInput, "KeyConditionExpression" | "ExpressionAttributeValues">,
  ): Promise<Item[]> {
    const items: Item[] = [];
    const pages = paginateQuery(
      { client: this.#client, pageSize: this.#queryLimit },
      {
        TableName: this.#table,
        ConsistentRead: true,
        KeyConditionExpression: input.KeyConditionExpression,
        ExpressionAttributeValues: {
          ...input.ExpressionAttributeValues,
          ":pk": { S: partitionKey(ref) },
        },
      },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    return items;
  }

  /**
   * One TransactWriteItems, retried on transaction conflicts; a failed
   * condition becomes {@link ConditionFailedError}, described by `describe`
   * from the per-item cancellation reasons.
   */
  async #transact(
    operation: string,
    items: TransactWriteItem[],
    describe: (reasons: readonly (CancellationReason | undefined)[]) => string,
  ): Promise<void> {
    try {
      // A new command per attempt: each gets its own ClientRequestToken, so
      // DynamoDB cannot mistake a retry after a cancellation for a replay.
      await this.#retryConflicts(operation, () =>
        this.#client.send(new TransactWriteItemsCommand({ TransactItems: items })),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new ConditionFailedError(describe(cancellationReasons(error)), { cause: error });
      }
      throw error;
    }
  }
}
