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
 *   requires it absent. The tenant's list index (table-definition.ts
 *   `listIndex`) is kept on it: `list_pk` and `active_at`, set by every
 *   append, compaction change and config; `bands` and `last_fired_at` are
 *   what the list shows.
 * - `TURN#<turn, 9 digits>`: the commit marker of a turn: turn, digest, size
 *   counts and their running totals (`totals`, absent on turns stored before
 *   them), model, and `storage` = {encoding, hash, chunks, bytes,
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
 * - `MAT#<compaction key>`: the band's materialized form (its turns as the
 *   projection reduces them, gzipped; dynamodb-materialized.ts).
 * - `FAILURE`: the last failed evaluation (dynamodb-failures.ts).
 * - `IDEM#<Idempotency-Key>`: a manual compaction's request digest and
 *   answer, expiring (dynamodb-idempotency.ts).
 *
 * Each part of the port is a module of its own: the reads
 * (dynamodb-reads.ts), appending a turn (dynamodb-append.ts), the
 * compaction writes (dynamodb-compactions.ts), the verify repair
 * (dynamodb-repair.ts), deletes (dynamodb-delete.ts) and failures
 * (dynamodb-failures.ts); every head condition is stated once, in
 * head-condition.ts, which the memory store reads too.
 *
 * Retries: the client's SDK retry strategy handles throttling and transient
 * errors, so the store expects a client built with `dynamoClientConfig`
 * (dynamodb-client.ts). The store itself retries only transaction conflicts,
 * which the SDK does not (dynamodb-conflicts.ts).
 */
import { type DynamoDBClient, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import type { AutoConfigLayer } from "../../core/config.ts";
import { ConditionFailedError } from "../errors.ts";
import type {
  ConversationHead,
  ConversationPage,
  ConversationRef,
  ConversationStore,
  EvaluationFailure,
  IdempotencyClaim,
  StoredCompaction,
  StoredTurn,
  TurnSizeRecord,
} from "../ports.ts";
import { type AppendTarget, appendTurn } from "./dynamodb-append.ts";
import { DEFAULT_CHUNK_BYTES } from "./dynamodb-chunks.ts";
import { addCompaction, recordEvaluation, removeCompactions } from "./dynamodb-compactions.ts";
import {
  type ConflictRetryOptions,
  conflictRetry,
  isConditionFailure,
} from "./dynamodb-conflicts.ts";
import { DynamoConversationDeleter } from "./dynamodb-delete.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import { getFailure, putFailure } from "./dynamodb-failures.ts";
import {
  claimIdempotencyKey,
  finishIdempotencyKey,
  releaseIdempotencyKey,
} from "./dynamodb-idempotency.ts";
import { toHead } from "./dynamodb-items.ts";
import { HEAD_SK, listPartitionKey, partitionKey } from "./dynamodb-keys.ts";
import { addMaterialized, listMaterialized } from "./dynamodb-materialized.ts";
import {
  getTurn,
  getTurnSizes,
  listCompactions,
  listConversations,
  listTurnSizes,
  readTurns,
} from "./dynamodb-reads.ts";
import { repairHead } from "./dynamodb-repair.ts";
import { getItem } from "./dynamodb-target.ts";
import { BEING_DELETED } from "./head-condition.ts";

/** Compressed events up to this size are written in the same transaction as their turn. */
export const DEFAULT_MAX_TRANSACTION_BYTES = 2 * 1024 * 1024;

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

/**
 * The {@link ConversationStore} on one DynamoDB table (see the module comment
 * for the layout). A method that another module implements takes the port's
 * own parameters and passes them on.
 */
export class DynamoConversationStore implements ConversationStore {
  readonly #target: AppendTarget;
  readonly #deleter: DynamoConversationDeleter;

  /**
   * @param client a client configured with `dynamoClientConfig` (its SDK
   *   retry strategy is the store's only retry of throttling)
   */
  constructor(client: DynamoDBClient, tableName: string, options: DynamoStoreOptions = {}) {
    this.#target = {
      client,
      table: tableName,
      chunkBytes: options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
      maxTransactionBytes: options.maxTransactionBytes ?? DEFAULT_MAX_TRANSACTION_BYTES,
      queryLimit: options.queryLimit,
      retryConflicts: conflictRetry(options.conflictRetry),
      now: options.now ?? Date.now,
    };
    this.#deleter = new DynamoConversationDeleter(this.#target);
    const { chunkBytes, maxTransactionBytes } = this.#target;
    if (!(chunkBytes > 0 && chunkBytes <= DEFAULT_CHUNK_BYTES)) {
      throw new RangeError(`chunkBytes must be in (0, ${DEFAULT_CHUNK_BYTES}]`);
    }
    // A transaction carries at most 4 MB: keep room for keys and the head.
    if (!(maxTransactionBytes >= 0 && maxTransactionBytes <= 3.5 * 1024 * 1024)) {
      throw new RangeError("maxTransactionBytes must be in [0, 3.5 MiB]");
    }
  }

  // ---------------------------------------------------------------- reads

  async getHead(ref: ConversationRef): Promise<ConversationHead | undefined> {
    const item = await getItem(this.#target, ref, HEAD_SK);
    return item ? toHead(item) : undefined;
  }

  getTurn(...args: Parameters<ConversationStore["getTurn"]>): Promise<StoredTurn | undefined> {
    return getTurn(this.#target, ...args);
  }

  listTurnSizes(
    ...args: Parameters<ConversationStore["listTurnSizes"]>
  ): Promise<TurnSizeRecord[]> {
    return listTurnSizes(this.#target, ...args);
  }

  getTurnSizes(...args: Parameters<ConversationStore["getTurnSizes"]>): Promise<TurnSizeRecord[]> {
    return getTurnSizes(this.#target, ...args);
  }

  readTurns(...args: Parameters<ConversationStore["readTurns"]>): Promise<StoredTurn[]> {
    return readTurns(this.#target, ...args);
  }

  listCompactions(
    ...args: Parameters<ConversationStore["listCompactions"]>
  ): Promise<StoredCompaction[]> {
    return listCompactions(this.#target, ...args);
  }

  listConversations(
    ...args: Parameters<ConversationStore["listConversations"]>
  ): Promise<ConversationPage> {
    return listConversations(this.#target, ...args);
  }

  lastFailure(ref: ConversationRef): Promise<EvaluationFailure | undefined> {
    return getFailure(this.#target.client, this.#target.table, ref);
  }

  // ---------------------------------------------------------------- writes

  appendTurn(...args: Parameters<ConversationStore["appendTurn"]>): Promise<void> {
    return appendTurn(this.#target, ...args);
  }

  addCompaction(...args: Parameters<ConversationStore["addCompaction"]>): Promise<void> {
    return addCompaction(this.#target, ...args);
  }

  addMaterialized(...args: Parameters<ConversationStore["addMaterialized"]>) {
    return addMaterialized(this.#target, ...args);
  }

  listMaterialized(...args: Parameters<ConversationStore["listMaterialized"]>) {
    return listMaterialized(this.#target, ...args);
  }

  removeCompactions(...args: Parameters<ConversationStore["removeCompactions"]>): Promise<void> {
    return removeCompactions(this.#target, ...args);
  }

  repairHead(...args: Parameters<ConversationStore["repairHead"]>): Promise<void> {
    return repairHead(this.#target, ...args);
  }

  async putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void> {
    const { client, table, retryConflicts, now } = this.#target;
    const update = new UpdateExpressionBuilder()
      .set("config", config)
      .active(listPartitionKey(ref.tenant), now())
      .defaults();
    try {
      await retryConflicts("PutConfig", () =>
        client.send(update.headCommand(table, partitionKey(ref), update.live())),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new ConditionFailedError(BEING_DELETED, { cause: error });
    }
  }

  async markEvaluated(
    ...[ref, turn, decision, measures]: Parameters<ConversationStore["markEvaluated"]>
  ): Promise<void> {
    const { client, table, retryConflicts } = this.#target;
    const pk = partitionKey(ref);
    const update = new UpdateExpressionBuilder().set("evaluated_through", turn);
    if (decision) update.head({ decided_through: decision.turn, last_decision: decision });
    const life =
      ref.incarnation === undefined
        ? ""
        : ` AND ${update.name("incarnation")} = ${update.value(ref.incarnation)}`;
    const condition = `attribute_exists(pk) AND ${update.name("evaluated_through")} < ${update.value(turn)}${life} AND ${update.live()}`;
    try {
      await retryConflicts("MarkEvaluated", () =>
        client.send(update.headCommand(table, pk, condition)),
      );
      // The turn's record, once the head took the mark: a second single-item
      // write (1 write unit) rather than a transaction with the head (2 per
      // item, and twice the no-fire latency on DynamoDB Local). A crash in
      // between leaves the record unknown, which the timeline reads as null.
      if (decision && measures) {
        const record = recordEvaluation(this.#target, pk, { ...decision, ...measures });
        await client.send(new UpdateItemCommand(record));
      }
    } catch (error) {
      // Already evaluated this far (or no such conversation, or being deleted,
      // or deleted since the mark, or another life of it): nothing to do.
      if (!isConditionFailure(error)) throw error;
    }
  }

  recordFailure(ref: ConversationRef, failure: EvaluationFailure): Promise<void> {
    return putFailure(this.#target.client, this.#target.table, ref, failure);
  }

  claimIdempotencyKey(
    ...args: Parameters<ConversationStore["claimIdempotencyKey"]>
  ): Promise<IdempotencyClaim> {
    return claimIdempotencyKey(this.#target, ...args);
  }

  finishIdempotencyKey(
    ...args: Parameters<ConversationStore["finishIdempotencyKey"]>
  ): Promise<void> {
    return finishIdempotencyKey(this.#target, ...args);
  }

  releaseIdempotencyKey(
    ...args: Parameters<ConversationStore["releaseIdempotencyKey"]>
  ): Promise<void> {
    return releaseIdempotencyKey(this.#target, ...args);
  }

  beginDelete(ref: ConversationRef): Promise<boolean> {
    return this.#deleter.begin(ref);
  }

  finishDelete(ref: ConversationRef): Promise<void> {
    return this.#deleter.finish(ref);
  }
}
