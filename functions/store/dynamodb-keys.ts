/**
 * The key codec of the DynamoDB conversation store: how a conversation and
 * its items map to `pk` and `sk` strings. Every key of the table's layout
 * (see functions/store/dynamodb.ts) is spelled here and nowhere else, so a
 * change of the format is a change of this file.
 */

import { InvalidInputError } from "../../core/errors.ts";
import { MAX_TURN } from "../../core/turns.ts";
import type { ConversationRef } from "../ports.ts";

/** Turn numbers are stored zero-padded to this many digits so keys sort numerically. */
const TURN_DIGITS = 9;
// A longer turn number would sort before shorter ones: the bound must fit the keys.
if (String(MAX_TURN).length > TURN_DIGITS) {
  throw new RangeError(`MAX_TURN ${MAX_TURN} does not fit ${TURN_DIGITS}-digit turn keys`);
}
/** Hex characters of the events blob's SHA-256 used in chunk keys. */
const HASH_PREFIX = 32;

// With the `u` flag a well-formed pair is one code point, so this matches lone surrogates only.
const LONE_SURROGATE = /\p{Cs}/u;

function escapeId(id: string, what: string): string {
  // A lone surrogate cannot be encoded as UTF-8: DynamoDB would store a
  // replacement character and two ids would share one key.
  if (LONE_SURROGATE.test(id))
    throw new InvalidInputError(`${what} id contains a lone UTF-16 surrogate`);
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

/**
 * The list index's partition key of a tenant (the HEAD items' `list_pk`,
 * see table-definition.ts `listIndex`): escaped as in {@link partitionKey}.
 */
export function listPartitionKey(tenant: string): string {
  return `T#${escapeId(tenant, "tenant")}`;
}

/** True for the turn numbers a key can hold: integers in [0, {@link MAX_TURN}]. */
export function isTurnNumber(turn: number): boolean {
  return Number.isInteger(turn) && turn >= 0 && turn <= MAX_TURN;
}

function padTurn(turn: number): string {
  if (!isTurnNumber(turn)) {
    throw new InvalidInputError(`turn must be an integer in [0, ${MAX_TURN}], got ${turn}`);
  }
  return String(turn).padStart(TURN_DIGITS, "0");
}

/** The sort key of the head item. */
export const HEAD_SK = "HEAD";
/** The sort key of the conversation's last failed evaluation (dynamodb-failures.ts). */
export const FAILURE_SK = "FAILURE";
/** The prefix of every TURN item's sort key. */
export const TURN_SK_PREFIX = "TURN#";
/** The prefix of every compaction item's sort key. */
export const COMPACTION_SK_PREFIX = "CMP#";

/** The sort key of turn `turn`'s commit marker. */
export function turnSk(turn: number): string {
  return `${TURN_SK_PREFIX}${padTurn(turn)}`;
}

/** The common prefix of the chunk keys of one events blob (turn and blob hash). */
export function chunkPrefix(turn: number, hash: string): string {
  return `EVT#${padTurn(turn)}#${hash.slice(0, HASH_PREFIX)}#`;
}

/** The sort key of chunk `chunk` of the events blob `hash` of turn `turn`. */
export function chunkSk(turn: number, hash: string, chunk: number): string {
  return `${chunkPrefix(turn, hash)}c${String(chunk).padStart(4, "0")}`;
}

/** The {@link chunkPrefix} a chunk's sort key starts with (everything up to its last `#`). */
export function chunkPrefixOf(sk: string): string {
  return sk.slice(0, sk.lastIndexOf("#") + 1);
}

/**
 * The sort-key range holding every chunk of turns `first..last`, whatever
 * their blob hashes: `~` sorts after every hex digit.
 */
export function chunkRange(first: number, last: number): { low: string; high: string } {
  return { low: `EVT#${padTurn(first)}#`, high: `EVT#${padTurn(last)}#~` };
}

/** The prefix of every materialized band's sort key (dynamodb-materialized.ts). */
export const MATERIALIZED_SK_PREFIX = "MAT#";

/** The sort key of the materialized form of the band stored under `key`. */
export function materializedSk(key: string): string {
  return `${MATERIALIZED_SK_PREFIX}${key}`;
}

/** The sort key of the compaction stored under `key`. */
export function compactionSk(key: string): string {
  return `${COMPACTION_SK_PREFIX}${key}`;
}

/** The sort key of the conversation's record of `Idempotency-Key` `key` (dynamodb-idempotency.ts). */
export function idempotencySk(key: string): string {
  return `IDEM#${escapeId(key, "Idempotency-Key")}`;
}
