/**
 * The {@link ConversationStore} on DynamoDB: one table, `pk` + `sk` strings
 * (ARCHITECTURE §7). Every read is strongly consistent and follows
 * `LastEvaluatedKey`; every write is conditional on the head.
 *
 * Items of one conversation (`pk = T#<tenant>#C#<conversation>`, with `%`
 * and `#` in the ids escaped as `%25` and `%23` so ids can never collide):
 *
 * - `HEAD`: turn_count, evaluated_through, projected_chars,
 *   compactions_version, max_compacted_turn, and the optional config,
 *   stream_config and model (native maps).
 * - `TURN#<turn, 9 digits>`: the commit marker of a turn: turn, digest, size
 *   counts, model, and `storage` = {encoding, hash, chunks, bytes,
 *   json_bytes} telling where its events are. Never overwritten.
 * - `EVT#<turn>#<blob hash prefix>#c<chunk, 4 digits>`: the turn's events as
 *   gzip-compressed JSON, split into Binary chunks of at most
 *   {@link DEFAULT_CHUNK_BYTES}. Keyed by the SHA-256 of the compressed bytes
 *   (not by the caller's digest, which hashes canonical content): two
 *   writers of the same key always write the same bytes. Readers only follow
 *   the chunks that a committed TURN item names.
 * - `CMP#<compaction key>`: key, after_turn, seq, and the compaction as JSON.
 *
 * Appending a turn whose compressed events fit in one transaction (the usual
 * case) writes chunks + TURN (if absent) + HEAD (if turn_count and
 * compactions_version are still the expected ones) in one TransactWriteItems. Bigger turns first write their chunks (idempotent
 * puts), then commit TURN + HEAD in a transaction; a loser of that race
 * deletes its own chunks when the winner's differ. Only a crash between the
 * two steps leaves orphan chunks behind: nothing ever reads them, and a retry
 * of the same turn overwrites them in place.
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip as gunzipCallback, gzip as gzipCallback, gzipSync } from "node:zlib";
import {
  type AttributeValue,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteItemCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { convertToAttr, unmarshall } from "@aws-sdk/util-dynamodb";
import type { AutoConfigLayer } from "../../core/config.ts";
import { EMPTY_TURN_SIZE } from "../../core/sizes.ts";
import {
  type AppendCondition,
  ConditionFailedError,
  type ConversationHead,
  type ConversationRef,
  type ConversationStore,
  type HeadUpdate,
  type HeadVersion,
  type StoredCompaction,
  type StoredTurn,
  type TurnSummary,
} from "../ports.ts";
import {
  CorruptTurnError,
  InvalidKeyError,
  RetriesExhaustedError,
  WriteTooLargeError,
} from "./errors.ts";

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/** The key schema, shared by {@link createTable}, the CDK stack and the local runtime. */
export const tableDefinition = {
  partitionKey: { name: "pk", type: "S" },
  sortKey: { name: "sk", type: "S" },
  billingMode: "PAY_PER_REQUEST",
} as const;

/** Largest Binary payload of one event chunk item (DynamoDB items are limited to 400 KB). */
export const DEFAULT_CHUNK_BYTES = 350 * 1024;
/** Compressed events up to this size are written in the same transaction as their turn. */
export const DEFAULT_MAX_TRANSACTION_BYTES = 2 * 1024 * 1024;
/** DynamoDB's limit of items per TransactWriteItems. */
const MAX_TRANSACTION_ITEMS = 100;
/** Turn numbers are stored zero-padded to this many digits so keys sort numerically. */
const TURN_DIGITS = 9;
export const MAX_TURN = 10 ** TURN_DIGITS - 1;
/** Compaction JSON above this many bytes is stored gzip-compressed. */
const COMPACTION_INLINE_BYTES = 64 * 1024;
const COMPACTION_MAX_BYTES = 380 * 1024;
/** Hex characters of the blob's SHA-256 used in chunk keys. */
const HASH_PREFIX = 32;
/** Parallel PutItem/DeleteItem calls when chunks are written outside a transaction. */
const WRITE_CONCURRENCY = 4;
const EVENTS_ENCODING = "json+gzip";

/** Retry of conflicts and throttling: jittered exponential backoff, bounded. */
export interface RetryOptions {
  /** Sends per request, the first included (default 8). */
  readonly maxAttempts?: number;
  /** Upper bound of the first backoff (default 25 ms); doubles per attempt. */
  readonly baseDelayMs?: number;
  /** Cap of one backoff (default 1000 ms). */
  readonly maxDelayMs?: number;
  /** Injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Injectable for tests; in [0, 1). */
  readonly random?: () => number;
}

export interface DynamoStoreOptions {
  /** Largest Binary payload per event chunk item (default {@link DEFAULT_CHUNK_BYTES}). */
  readonly chunkBytes?: number;
  /** Events compressed to at most this many bytes commit in one transaction with their turn. */
  readonly maxTransactionBytes?: number;
  /** `Limit` of every Query page (default none: DynamoDB's 1 MB pages). Tests make it small. */
  readonly queryLimit?: number;
  readonly retry?: RetryOptions;
}

type Item = Record<string, AttributeValue>;

const RETRYABLE_ERRORS = new Set([
  "TransactionConflictException",
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
]);
const RETRYABLE_REASONS = new Set([
  "TransactionConflict",
  "ProvisionedThroughputExceeded",
  "ThrottlingError",
]);

interface CancellationReason {
  readonly Code?: string;
  readonly Message?: string;
  readonly Item?: Item;
}

function errorName(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "name" in error
    ? String((error as { name: unknown }).name)
    : undefined;
}

function cancellationReasons(error: unknown): readonly (CancellationReason | undefined)[] {
  if (errorName(error) !== "TransactionCanceledException") return [];
  const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons;
  return reasons ?? [];
}

/** True when a write's condition failed (plain or inside a transaction). */
export function isConditionFailure(error: unknown): boolean {
  return (
    errorName(error) === "ConditionalCheckFailedException" ||
    cancellationReasons(error).some((reason) => reason?.Code === "ConditionalCheckFailed")
  );
}

/** True for conflicts and throttling, which a later identical request may pass. */
export function isRetryable(error: unknown): boolean {
  const name = errorName(error);
  if (name !== undefined && RETRYABLE_ERRORS.has(name)) return true;
  if (isConditionFailure(error)) return false;
  return cancellationReasons(error).some(
    (reason) => reason?.Code !== undefined && RETRYABLE_REASONS.has(reason.Code),
  );
}

// ---------------------------------------------------------------- keys

// With the `u` flag a well-formed pair is one code point, so this matches lone surrogates only.
const LONE_SURROGATE = /\p{Cs}/u;

function escapeId(id: string, what: string): string {
  if (LONE_SURROGATE.test(id))
    throw new InvalidKeyError(`${what} id contains a lone UTF-16 surrogate`);
  return id.replaceAll("%", "%25").replaceAll("#", "%23");
}

function unescapeId(id: string): string {
  return id.replace(/%2[35]/g, (code) => (code === "%23" ? "#" : "%"));
}

/** The partition key of a conversation; `%` and `#` in ids are escaped so ids never collide. */
export function partitionKey(ref: ConversationRef): string {
  return `T#${escapeId(ref.tenant, "tenant")}#C#${escapeId(ref.conversation, "conversation")}`;
}

/** The conversation of a partition key written by {@link partitionKey}, if it is one. */
export function parsePartitionKey(pk: string): ConversationRef | undefined {
  const parts = pk.split("#");
  if (parts.length !== 4 || parts[0] !== "T" || parts[2] !== "C") return undefined;
  return { tenant: unescapeId(parts[1] as string), conversation: unescapeId(parts[3] as string) };
}

function isTurnNumber(turn: number): boolean {
  return Number.isInteger(turn) && turn >= 0 && turn <= MAX_TURN;
}

function pad(turn: number): string {
  if (!isTurnNumber(turn)) {
    throw new InvalidKeyError(`turn must be an integer in [0, ${MAX_TURN}], got ${turn}`);
  }
  return String(turn).padStart(TURN_DIGITS, "0");
}

const HEAD_SK = "HEAD";
const turnSk = (turn: number) => `TURN#${pad(turn)}`;
const chunkPrefix = (turn: number, hash: string) =>
  `EVT#${pad(turn)}#${hash.slice(0, HASH_PREFIX)}#`;
const chunkSk = (turn: number, hash: string, chunk: number) =>
  `${chunkPrefix(turn, hash)}c${String(chunk).padStart(4, "0")}`;
const compactionSk = (key: string) => `CMP#${key}`;

// ---------------------------------------------------------------- values

const attr = (value: unknown): AttributeValue =>
  convertToAttr(value, { removeUndefinedValues: true, convertEmptyValues: false });

const HEAD_DEFAULTS = {
  turn_count: 0,
  evaluated_through: -1,
  projected_chars: 0,
  compactions_version: 0,
  max_compacted_turn: -1,
} as const;

/** The head fields a {@link HeadUpdate} may set. */
const HEAD_UPDATE_FIELDS = [
  "evaluated_through",
  "projected_chars",
  "max_compacted_turn",
  "config",
  "stream_config",
  "model",
] as const satisfies readonly (keyof HeadUpdate)[];

/** Builds an UpdateExpression with its condition, sharing the placeholder maps. */
class Update {
  readonly #sets: string[] = [];
  readonly #removes: string[] = [];
  readonly names: Record<string, string> = {};
  readonly values: Record<string, AttributeValue> = {};
  #n = 0;

  name(field: string): string {
    const placeholder = `#${field}`;
    this.names[placeholder] = field;
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${this.#n++}`;
    this.values[placeholder] = attr(value);
    return placeholder;
  }

  /** SET, or REMOVE when the value is `undefined`. */
  set(field: string, value: unknown): this {
    if (value === undefined) this.#removes.push(this.name(field));
    else this.#sets.push(`${this.name(field)} = ${this.value(value)}`);
    return this;
  }

  setIfAbsent(field: string, value: unknown): this {
    const name = this.name(field);
    this.#sets.push(`${name} = if_not_exists(${name}, ${this.value(value)})`);
    return this;
  }

  /** SETs the fields a {@link HeadUpdate} carries, except `skip`. */
  head(update: HeadUpdate, skip: readonly string[] = []): this {
    for (const field of HEAD_UPDATE_FIELDS) {
      if (Object.hasOwn(update, field) && !skip.includes(field)) this.set(field, update[field]);
    }
    return this;
  }

  /** Fills the head fields no SET above touches with their defaults, if absent. */
  defaults(): this {
    for (const [field, value] of Object.entries(HEAD_DEFAULTS)) {
      if (!(`#${field}` in this.names)) this.setIfAbsent(field, value);
    }
    return this;
  }

  /** `field = if_not_exists(field, 0) + :delta` */
  increment(field: string, delta: number): this {
    const name = this.name(field);
    this.#sets.push(`${name} = if_not_exists(${name}, ${this.value(0)}) + ${this.value(delta)}`);
    return this;
  }

  /** `turn_count = :t AND max_compacted_turn < :t` (no compaction covers turn :t). */
  uncompactedCondition(turn: number): string {
    const value = this.value(turn);
    return `${this.name("turn_count")} = ${value} AND ${this.name("max_compacted_turn")} < ${value}`;
  }

  /** `turn_count = :t AND compactions_version = :v` */
  versionCondition(expected: HeadVersion): string {
    return [
      `${this.name("turn_count")} = ${this.value(expected.turn_count)}`,
      `${this.name("compactions_version")} = ${this.value(expected.compactions_version)}`,
    ].join(" AND ");
  }

  get expression(): string {
    const parts: string[] = [];
    if (this.#sets.length > 0) parts.push(`SET ${this.#sets.join(", ")}`);
    if (this.#removes.length > 0) parts.push(`REMOVE ${this.#removes.join(", ")}`);
    return parts.join(" ");
  }
}

/** TurnSize's and ModelInfo's fields in declaration order (DynamoDB maps do not keep key order). */
const SIZE_FIELDS = Object.keys(EMPTY_TURN_SIZE);
const MODEL_FIELDS = ["id", "context_window"];

/** `value` with the `order` keys first, so read-back objects serialize like the written ones. */
function inOrder<T extends object>(value: T, order: readonly string[]): T {
  const rank = (key: string) => {
    const index = order.indexOf(key);
    return index < 0 ? order.length : index;
  };
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => rank(a) - rank(b))) as T;
}

function toHead(item: Item): ConversationHead {
  const raw = unmarshall(item);
  const head: {
    -readonly [K in keyof ConversationHead]: ConversationHead[K];
  } = {
    turn_count: Number(raw.turn_count ?? HEAD_DEFAULTS.turn_count),
    evaluated_through: Number(raw.evaluated_through ?? HEAD_DEFAULTS.evaluated_through),
    projected_chars: Number(raw.projected_chars ?? HEAD_DEFAULTS.projected_chars),
    compactions_version: Number(raw.compactions_version ?? HEAD_DEFAULTS.compactions_version),
    max_compacted_turn: Number(raw.max_compacted_turn ?? HEAD_DEFAULTS.max_compacted_turn),
  };
  if (raw.config !== undefined) head.config = raw.config;
  if (raw.stream_config !== undefined) head.stream_config = raw.stream_config;
  if (raw.model !== undefined) head.model = inOrder(raw.model, MODEL_FIELDS);
  return head;
}

/** Where a turn's events are: the TURN item's `storage` map. */
interface EventStorage {
  readonly encoding: string;
  /** SHA-256 (hex) of the compressed bytes. */
  readonly hash: string;
  readonly chunks: number;
  /** Compressed bytes. */
  readonly bytes: number;
  /** Bytes of the JSON before compression. */
  readonly json_bytes: number;
}

interface TurnRecord {
  readonly summary: TurnSummary;
  readonly storage: EventStorage;
}

function toTurnRecord(item: Item): TurnRecord {
  const raw = unmarshall(item);
  const summary: TurnSummary = {
    turn: Number(raw.turn),
    size: inOrder(raw.size, SIZE_FIELDS),
    digest: String(raw.digest),
    ...(raw.model !== undefined ? { model: inOrder(raw.model, MODEL_FIELDS) } : {}),
  };
  return { summary, storage: raw.storage as EventStorage };
}

interface EncodedEvents {
  readonly blob: Buffer;
  readonly hash: string;
  readonly jsonBytes: number;
}

/** Below this size a turn is gzipped synchronously (well under a millisecond). */
const SYNC_GZIP_BYTES = 256 * 1024;

async function encodeEvents(events: StoredTurn["events"]): Promise<EncodedEvents> {
  const json = Buffer.from(JSON.stringify(events), "utf8");
  // Small turns compress faster inline than through the thread pool's queue.
  const blob = json.length <= SYNC_GZIP_BYTES ? gzipSync(json) : await gzip(json);
  return { blob, hash: createHash("sha256").update(blob).digest("hex"), jsonBytes: json.length };
}

function split(blob: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < blob.length; offset += size) {
    chunks.push(blob.subarray(offset, offset + size));
  }
  if (chunks.length === 0) chunks.push(blob);
  return chunks;
}

async function mapLimit<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- table

/** The CreateTable input for a store table (on-demand billing, `pk`/`sk` strings). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const { partitionKey: pk, sortKey: sk, billingMode } = tableDefinition;
  return {
    TableName: tableName,
    BillingMode: billingMode,
    KeySchema: [
      { AttributeName: pk.name, KeyType: "HASH" },
      { AttributeName: sk.name, KeyType: "RANGE" },
    ],
    AttributeDefinitions: [
      { AttributeName: pk.name, AttributeType: pk.type },
      { AttributeName: sk.name, AttributeType: sk.type },
    ],
  };
}

/**
 * Creates the table (or finds it already there) and waits until it is
 * ACTIVE. Table names need 3 to 255 characters of `[A-Za-z0-9_.-]`.
 */
export async function createTable(
  client: DynamoDBClient,
  tableName: string,
  { timeoutMs = 120_000 }: { timeoutMs?: number } = {},
): Promise<{ created: boolean }> {
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new RangeError(
      `DynamoDB table name ${JSON.stringify(tableName)} must be 3 to 255 characters of A-Z a-z 0-9 _ . -`,
    );
  }
  let created = true;
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (error) {
    if (errorName(error) !== "ResourceInUseException") throw error;
    created = false;
  }
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 2_000)) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === "ACTIVE") return { created };
    if (Date.now() > deadline) {
      throw new Error(`table ${tableName} is still ${Table?.TableStatus} after ${timeoutMs} ms`);
    }
    await defaultSleep(delay);
  }
}

// ---------------------------------------------------------------- store

export class DynamoConversationStore implements ConversationStore {
  readonly #client: DynamoDBClient;
  readonly #table: string;
  readonly #chunkBytes: number;
  readonly #maxTransactionBytes: number;
  readonly #queryLimit: number | undefined;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;

  constructor(client: DynamoDBClient, tableName: string, options: DynamoStoreOptions = {}) {
    this.#client = client;
    this.#table = tableName;
    this.#chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    this.#maxTransactionBytes = options.maxTransactionBytes ?? DEFAULT_MAX_TRANSACTION_BYTES;
    this.#queryLimit = options.queryLimit;
    this.#maxAttempts = Math.max(1, options.retry?.maxAttempts ?? 8);
    this.#baseDelayMs = options.retry?.baseDelayMs ?? 25;
    this.#maxDelayMs = options.retry?.maxDelayMs ?? 1_000;
    this.#sleep = options.retry?.sleep ?? defaultSleep;
    this.#random = options.retry?.random ?? Math.random;
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

  async listTurnSummaries(ref: ConversationRef): Promise<TurnSummary[]> {
    const items = await this.#query(ref, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":prefix": { S: "TURN#" } },
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
    const chunks = await this.#query(ref, {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :low AND :high",
      ExpressionAttributeValues: {
        ":low": { S: `EVT#${pad(first.summary.turn)}#` },
        ":high": { S: `EVT#${pad(last.summary.turn)}#~` },
      },
    });
    const byPrefix = new Map<string, Item[]>();
    for (const chunk of chunks) {
      const sk = chunk.sk?.S ?? "";
      const prefix = sk.slice(0, sk.lastIndexOf("#") + 1);
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
      ExpressionAttributeValues: { ":prefix": { S: "CMP#" } },
    });
    const compactions = await Promise.all(
      items.map(async (item): Promise<StoredCompaction> => {
        const json =
          item.compaction_gz?.B !== undefined
            ? (await gunzip(item.compaction_gz.B)).toString("utf8")
            : (item.compaction?.S ?? "null");
        return {
          key: item.key?.S ?? "",
          after_turn: Number(item.after_turn?.N),
          seq: Number(item.seq?.N),
          compaction: JSON.parse(json),
        };
      }),
    );
    return compactions.sort(
      (a, b) =>
        a.after_turn - b.after_turn ||
        a.seq - b.seq ||
        (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
  }

  /**
   * Every conversation whose latest turn has not been evaluated yet, with
   * that turn. A Scan of the whole table: for the local runtime's recovery
   * after a restart (in AWS the queue keeps pending evaluations), not for
   * request paths.
   */
  async listUnevaluated(): Promise<(ConversationRef & { readonly turn: number })[]> {
    const pending: (ConversationRef & { turn: number })[] = [];
    let start: Item | undefined;
    do {
      const page = await this.#send("Scan", () =>
        this.#client.send(
          new ScanCommand({
            TableName: this.#table,
            ConsistentRead: true,
            FilterExpression: "sk = :head AND begins_with(pk, :prefix)",
            ProjectionExpression: "pk, turn_count, evaluated_through",
            ExpressionAttributeValues: { ":head": { S: HEAD_SK }, ":prefix": { S: "T#" } },
            ExclusiveStartKey: start,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        const turnCount = Number(item.turn_count?.N ?? 0);
        const evaluated = Number(item.evaluated_through?.N ?? -1);
        const ref = parsePartitionKey(item.pk?.S ?? "");
        if (ref && evaluated < turnCount - 1) pending.push({ ...ref, turn: turnCount - 1 });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return pending;
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
    const encoded = await encodeEvents(turn.events);
    const chunks = split(encoded.blob, this.#chunkBytes);
    const chunkItems: Item[] = chunks.map((data, index) => ({
      pk: { S: pk },
      sk: { S: chunkSk(n, encoded.hash, index) },
      chunk: { N: String(index) },
      data: { B: data },
    }));
    const storage: EventStorage = {
      encoding: EVENTS_ENCODING,
      hash: encoded.hash,
      chunks: chunks.length,
      bytes: encoded.blob.length,
      json_bytes: encoded.jsonBytes,
    };
    const turnItem: Item = {
      pk: { S: pk },
      sk: { S: turnSk(n) },
      turn: attr(n),
      digest: attr(turn.digest),
      size: attr(turn.size),
      storage: attr(storage),
      committed_at: attr(Date.now()),
    };
    if (turn.model !== undefined) turnItem.model = attr(turn.model);

    const update = new Update().set("turn_count", n + 1);
    if (uncompacted) update.increment("projected_chars", condition.add_projected_chars);
    update.head(head, uncompacted ? ["projected_chars"] : []).defaults();
    // A missing head counts as turn_count 0, compactions_version 0, no compaction.
    const headCondition = uncompacted
      ? update.uncompactedCondition(n)
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
    // write the content-addressed chunks, then commit TURN + HEAD.
    const current = await this.#get(ref, HEAD_SK);
    const headMovedOn = uncompacted
      ? (current?.turn_count?.N ?? "0") !== String(n) ||
        Number(current?.max_compacted_turn?.N ?? "-1") >= n
      : (current?.turn_count?.N ?? "0") !== String(n) ||
        (current?.compactions_version?.N ?? "0") !== String(expectedCompactionsVersion);
    if (headMovedOn) {
      throw new ConditionFailedError(headConflict(expected, { Item: current ?? {} }));
    }
    await mapLimit(chunkItems, WRITE_CONCURRENCY, async (Item) => {
      await this.#send("PutItem", () =>
        this.#client.send(new PutItemCommand({ TableName: this.#table, Item })),
      );
    });
    try {
      await this.#transact("AppendTurn", commit, describe);
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        await this.#discardLosingChunks(ref, n, encoded.hash, chunkItems.length);
      }
      throw error;
    }
  }

  async addCompaction(
    ref: ConversationRef,
    compaction: StoredCompaction,
    expected: HeadVersion,
    head: HeadUpdate,
  ): Promise<void> {
    const pk = partitionKey(ref);
    const item: Item = {
      pk: { S: pk },
      sk: { S: compactionSk(compaction.key) },
      key: attr(compaction.key),
      after_turn: attr(compaction.after_turn),
      seq: attr(compaction.seq),
    };
    const json = Buffer.from(JSON.stringify(compaction.compaction), "utf8");
    if (json.length <= COMPACTION_INLINE_BYTES) {
      item.compaction = { S: json.toString("utf8") };
    } else {
      const packed = await gzip(json);
      if (packed.length > COMPACTION_MAX_BYTES) {
        throw new WriteTooLargeError(
          `compaction ${compaction.key} is ${json.length} bytes of JSON (${packed.length} compressed); at most ${COMPACTION_MAX_BYTES} compressed bytes fit in an item`,
        );
      }
      item.compaction_gz = { B: packed };
    }
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
        this.#versionedHeadUpdate(pk, expected, head),
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
      throw new WriteTooLargeError(
        `cannot remove ${unique.length} compactions atomically: one DynamoDB transaction holds at most ${MAX_TRANSACTION_ITEMS - 1} deletes and the head`,
      );
    }
    const deletes: TransactWriteItem[] = unique.map((key) => ({
      Delete: { TableName: this.#table, Key: { pk: { S: pk }, sk: { S: compactionSk(key) } } },
    }));
    await this.#transact(
      "RemoveCompactions",
      [...deletes, this.#versionedHeadUpdate(pk, expected, head)],
      (reasons) => headConflict(expected, reasons.at(-1)),
    );
  }

  async putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void> {
    const update = new Update().set("config", config).defaults();
    await this.#send("PutConfig", () =>
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: { pk: { S: partitionKey(ref) }, sk: { S: HEAD_SK } },
          UpdateExpression: update.expression,
          ExpressionAttributeNames: update.names,
          ExpressionAttributeValues: update.values,
        }),
      ),
    );
  }

  async markEvaluated(ref: ConversationRef, turn: number): Promise<void> {
    const update = new Update().set("evaluated_through", turn);
    const condition = `attribute_exists(pk) AND ${update.name("evaluated_through")} < ${update.value(turn)}`;
    try {
      await this.#send("MarkEvaluated", () =>
        this.#client.send(
          new UpdateItemCommand({
            TableName: this.#table,
            Key: { pk: { S: partitionKey(ref) }, sk: { S: HEAD_SK } },
            UpdateExpression: update.expression,
            ConditionExpression: condition,
            ExpressionAttributeNames: update.names,
            ExpressionAttributeValues: update.values,
          }),
        ),
      );
    } catch (error) {
      // Already evaluated this far (or no such conversation): nothing to do.
      if (!isConditionFailure(error)) throw error;
    }
  }

  // ---------------------------------------------------------------- helpers

  /** The head update of a compaction change: bumps the version if the head is still at `expected`. */
  #versionedHeadUpdate(pk: string, expected: HeadVersion, head: HeadUpdate): TransactWriteItem {
    const update = new Update()
      .set("compactions_version", expected.compactions_version + 1)
      .head(head, ["compactions_version"]);
    return {
      Update: {
        TableName: this.#table,
        Key: { pk: { S: pk }, sk: { S: HEAD_SK } },
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
        await this.#send("DeleteItem", () =>
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
    const { summary, storage } = record;
    const where = `turn ${summary.turn}`;
    if (storage.encoding !== EVENTS_ENCODING) {
      throw new CorruptTurnError(`${where}: unknown events encoding ${storage.encoding}`);
    }
    const ordered = [...chunks].sort((a, b) => Number(a.chunk?.N) - Number(b.chunk?.N));
    if (ordered.length !== storage.chunks) {
      throw new CorruptTurnError(
        `${where}: ${ordered.length} of ${storage.chunks} event chunks found`,
      );
    }
    const blob = Buffer.concat(ordered.map((chunk) => chunk.data?.B ?? new Uint8Array()));
    const hash = createHash("sha256").update(blob).digest("hex");
    if (blob.length !== storage.bytes || hash !== storage.hash) {
      throw new CorruptTurnError(`${where}: event chunks do not match their recorded hash`);
    }
    let events: StoredTurn["events"];
    try {
      events = JSON.parse((await gunzip(blob)).toString("utf8"));
    } catch (error) {
      throw new CorruptTurnError(`${where}: events cannot be decoded`, { cause: error });
    }
    const { turn, ...rest } = summary;
    return { turn, events, ...rest };
  }

  async #get(ref: ConversationRef, sk: string): Promise<Item | undefined> {
    const { Item } = await this.#send("GetItem", () =>
      this.#client.send(
        new GetItemCommand({
          TableName: this.#table,
          Key: { pk: { S: partitionKey(ref) }, sk: { S: sk } },
          ConsistentRead: true,
        }),
      ),
    );
    return Item;
  }

  /** Every item of a Query on the conversation's partition, all pages. */
  async #query(
    ref: ConversationRef,
    input: Pick<QueryCommandInput, "KeyConditionExpression" | "ExpressionAttributeValues">,
  ): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.#send("Query", () =>
        this.#client.send(
          new QueryCommand({
            TableName: this.#table,
            ConsistentRead: true,
            KeyConditionExpression: input.KeyConditionExpression,
            ExpressionAttributeValues: {
              ...input.ExpressionAttributeValues,
              ":pk": { S: partitionKey(ref) },
            },
            ExclusiveStartKey: start,
            Limit: this.#queryLimit,
          }),
        ),
      );
      for (const item of page.Items ?? []) items.push(item);
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** One TransactWriteItems; a failed condition becomes {@link ConditionFailedError}. */
  async #transact(
    operation: string,
    items: TransactWriteItem[],
    describe: (reasons: readonly (CancellationReason | undefined)[]) => string,
  ): Promise<void> {
    try {
      await this.#send(operation, () =>
        this.#client.send(new TransactWriteItemsCommand({ TransactItems: items })),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new ConditionFailedError(describe(cancellationReasons(error)), { cause: error });
      }
      throw error;
    }
  }

  /**
   * Sends a request, retrying conflicts and throttling with full-jitter
   * exponential backoff. Each attempt is a fresh request (a transaction gets a
   * fresh ClientRequestToken): it is only retried when DynamoDB said it was
   * not applied.
   */
  async #send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (!isRetryable(error)) throw error;
        if (attempt >= this.#maxAttempts) {
          throw new RetriesExhaustedError(operation, attempt, { cause: error });
        }
        const cap = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempt - 1));
        await this.#sleep(Math.floor(this.#random() * cap));
      }
    }
  }
}

/** Why a head condition failed, from the old head DynamoDB returned (if any). */
function headConflict(expected: HeadVersion, reason: CancellationReason | undefined): string {
  const item = reason?.Item;
  const wanted = `expected ${expected.turn_count}, ${expected.compactions_version}`;
  if (!item?.turn_count) return `no conversation head; ${wanted}`;
  return `head is at turn_count ${item.turn_count.N}, compactions_version ${item.compactions_version?.N}; ${wanted}`;
}
