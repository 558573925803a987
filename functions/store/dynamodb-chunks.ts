/**
 * How the DynamoDB conversation store keeps a turn's events: their JSON,
 * gzip-compressed, split into Binary `EVT#` items small enough for
 * DynamoDB's 400 KB item limit, and described by the `storage` map of the
 * turn's TURN item. Reading verifies the reassembled bytes against that map,
 * so a missing or altered chunk is reported instead of returning wrong
 * events.
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip as gunzipCallback, gzip as gzipCallback, gzipSync } from "node:zlib";
import {
  type AttributeValue,
  type DynamoDBClient,
  PutItemCommand,
  type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { CorruptDataError } from "../errors.ts";
import type { StoredTurn } from "../ports.ts";
import { type ConflictRetry, isConditionFailure } from "./dynamodb-conflicts.ts";
import { chunkSk } from "./dynamodb-keys.ts";
import { tableDefinition } from "./table-definition.ts";

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

type Item = Record<string, AttributeValue>;

/** Largest Binary payload of one event chunk item (DynamoDB items are limited to 400 KB). */
export const DEFAULT_CHUNK_BYTES = 350 * 1024;
/** The `encoding` of every events blob written so far. */
const EVENTS_ENCODING = "json+gzip";
/** Below this size a turn is gzipped synchronously (well under a millisecond). */
const SYNC_GZIP_BYTES = 256 * 1024;

/** Where a turn's events are: the TURN item's `storage` map. */
export interface EventStorage {
  /** How the blob is encoded: always `json+gzip` so far. */
  readonly encoding: string;
  /** SHA-256 (hex) of the compressed bytes. */
  readonly hash: string;
  /** How many chunk items hold the blob. */
  readonly chunks: number;
  /** Compressed bytes. */
  readonly bytes: number;
  /** Bytes of the JSON before compression. */
  readonly json_bytes: number;
}

/** A turn's events ready to write: the chunk items and the `storage` map naming them. */
export interface EncodedEvents {
  /** The compressed bytes, whole (their size decides whether one transaction can carry them). */
  readonly blob: Buffer;
  /** The `EVT#` items, in chunk order. */
  readonly items: Item[];
  /** The TURN item's `storage` map. */
  readonly storage: EventStorage;
}

/**
 * Compresses `events` and splits them into chunk items of at most
 * `chunkBytes` each, keyed by the SHA-256 of the compressed bytes (not by the
 * caller's digest, which hashes canonical content): two writers of the same
 * key always write the same bytes.
 */
export async function encodeEvents(
  pk: string,
  turn: number,
  events: StoredTurn["events"],
  chunkBytes: number,
): Promise<EncodedEvents> {
  const json = Buffer.from(JSON.stringify(events), "utf8");
  // Small turns compress faster inline than through the thread pool's queue.
  const blob = json.length <= SYNC_GZIP_BYTES ? gzipSync(json) : await gzip(json);
  const hash = createHash("sha256").update(blob).digest("hex");
  const chunks = split(blob, chunkBytes);
  return {
    blob,
    items: chunks.map((data, index) => ({
      pk: { S: pk },
      sk: { S: chunkSk(turn, hash, index) },
      chunk: { N: String(index) },
      data: { B: data },
    })),
    storage: {
      encoding: EVENTS_ENCODING,
      hash,
      chunks: chunks.length,
      bytes: blob.length,
      json_bytes: json.length,
    },
  };
}

/**
 * How long the chunks of a turn written before its commit live uncommitted:
 * far beyond any writer's lifetime (a Lambda runs 15 minutes at most), so
 * only a crashed writer's chunks ever expire.
 */
export const PENDING_CHUNK_TTL_SECONDS = 24 * 60 * 60;
const EXPIRES_AT = tableDefinition.timeToLiveAttribute;

/*
 * The chunks of a turn too big for one transaction are written before the
 * transaction that commits the turn, so a writer that crashes in between
 * leaves them behind. They are written pending (`expires_at` = now + 24 h,
 * the table's TTL) and the committing transaction itself REMOVEs
 * `expires_at` from every one of them (conditional on the chunk still
 * existing): a turn commits if and only if its chunks become permanent, in
 * the same atomic step. Chunks are content-addressed (turn, blob hash,
 * index), so a late writer of the same content would put the very chunks a
 * committed turn reads: its put is conditional on the chunk being absent or
 * still pending, so it can never make a committed chunk pending again.
 */

/**
 * Writes a chunk before its turn commits, pending (see above); a chunk
 * already committed (no `expires_at`: the same bytes, a committed turn's) is
 * left as it is.
 */
export async function putPendingChunk(
  client: DynamoDBClient,
  table: string,
  item: Item,
  nowMillis: number,
  retryConflicts: ConflictRetry,
): Promise<void> {
  const expiresAt = Math.floor(nowMillis / 1000) + PENDING_CHUNK_TTL_SECONDS;
  const put = new PutItemCommand({
    TableName: table,
    Item: { ...item, [EXPIRES_AT]: { N: String(expiresAt) } },
    ConditionExpression: "attribute_not_exists(pk) OR attribute_exists(#expires_at)",
    ExpressionAttributeNames: { "#expires_at": EXPIRES_AT },
  });
  try {
    await retryConflicts("PutItem", () => client.send(put));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** The committing transaction's item making a pending chunk permanent (it must still exist). */
export function commitChunk(table: string, item: Item): TransactWriteItem {
  return {
    Update: {
      TableName: table,
      Key: { pk: item.pk as AttributeValue, sk: item.sk as AttributeValue },
      UpdateExpression: "REMOVE #expires_at",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: { "#expires_at": EXPIRES_AT },
    },
  };
}

/** `blob` in pieces of at most `size` bytes; an empty blob is still one (empty) chunk. */
function split(blob: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < blob.length; offset += size) {
    chunks.push(blob.subarray(offset, offset + size));
  }
  if (chunks.length === 0) chunks.push(blob);
  return chunks;
}

/**
 * The events of turn `turn` from its chunk items (in any order), checked
 * against the `storage` map its TURN item recorded. Throws
 * {@link CorruptDataError} when chunks are missing, altered or undecodable.
 */
export async function decodeEvents(
  turn: number,
  storage: EventStorage,
  chunks: readonly Item[],
): Promise<StoredTurn["events"]> {
  const where = `turn ${turn}`;
  if (storage.encoding !== EVENTS_ENCODING) {
    throw new CorruptDataError(`${where}: unknown events encoding ${storage.encoding}`);
  }
  const ordered = [...chunks].sort((a, b) => Number(a.chunk?.N) - Number(b.chunk?.N));
  if (ordered.length !== storage.chunks) {
    throw new CorruptDataError(
      `${where}: ${ordered.length} of ${storage.chunks} event chunks found`,
    );
  }
  const blob = Buffer.concat(ordered.map((chunk) => chunk.data?.B ?? new Uint8Array()));
  const hash = createHash("sha256").update(blob).digest("hex");
  if (blob.length !== storage.bytes || hash !== storage.hash) {
    throw new CorruptDataError(`${where}: event chunks do not match their recorded hash`);
  }
  try {
    return JSON.parse((await gunzip(blob)).toString("utf8"));
  } catch (error) {
    throw new CorruptDataError(`${where}: events cannot be decoded`, { cause: error });
  }
}
