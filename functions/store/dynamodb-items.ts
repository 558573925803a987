/**
 * The item codec of the DynamoDB conversation store: the attributes of the
 * HEAD, TURN and CMP items and how they map to the port's types. Event
 * chunks are in dynamodb-chunks.ts, keys in dynamodb-keys.ts.
 */
import { promisify } from "node:util";
import { gunzip as gunzipCallback, gzip as gzipCallback } from "node:zlib";
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { convertToAttr, unmarshall } from "@aws-sdk/util-dynamodb";
import { PROBLEM_VARIANTS, UnprocessableError } from "../../core/errors.ts";
import { EMPTY_TURN_SIZE, type RunningTotals, ZERO_TOTALS } from "../../core/sizes.ts";
import {
  type ConversationHead,
  EMPTY_HEAD,
  type StoredCompaction,
  type StoredTurn,
  type TurnSizeRecord,
} from "../ports.ts";
import type { EventStorage } from "./dynamodb-chunks.ts";
import { compactionSk, turnSk } from "./dynamodb-keys.ts";

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/** One DynamoDB item, in the SDK's low-level form. */
export type Item = Record<string, AttributeValue>;

/** Compaction JSON above this many bytes is stored gzip-compressed. */
const COMPACTION_INLINE_BYTES = 64 * 1024;
/** Room for a compressed compaction: the 400 KB item limit minus its keys and numbers. */
const COMPACTION_MAX_BYTES = 380 * 1024;

/**
 * `value` as an AttributeValue. Undefined map members are dropped (as JSON
 * would), and empty strings and sets stay as they are instead of being
 * turned into NULL, so values read back equal.
 */
export function attr(value: unknown): AttributeValue {
  return convertToAttr(value, { removeUndefinedValues: true, convertEmptyValues: false });
}

/** TurnSize's and ModelInfo's fields in declaration order (DynamoDB maps do not keep key order). */
const SIZE_FIELDS = Object.keys(EMPTY_TURN_SIZE);
const TOTAL_FIELDS = Object.keys(ZERO_TOTALS) as (keyof RunningTotals)[];

/** The running totals a TURN item keeps as a list (see {@link toTurnItem}). */
function totalsOf(list: readonly unknown[]): RunningTotals {
  return Object.fromEntries(
    TOTAL_FIELDS.map((field, i) => [field, Number(list[i])]),
  ) as unknown as RunningTotals;
}
const MODEL_FIELDS = ["id", "context_window"];
const USAGE_FIELDS = [
  "input_tokens",
  "output_tokens",
  "cached_input_tokens",
  "calls",
  "view_chars",
];
const BAND_FIELDS = ["auto", "manual"];

/** `value` with the `order` keys first, so read-back objects serialize like the written ones. */
function inOrder<T extends object>(value: T, order: readonly string[]): T {
  const rank = (key: string) => {
    const index = order.indexOf(key);
    return index < 0 ? order.length : index;
  };
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => rank(a) - rank(b))) as T;
}

/** The conversation head of a HEAD item. */
export function toHead(item: Item): ConversationHead {
  const raw = unmarshall(item);
  // A field the item lacks (a head created by a config alone) holds the empty head's value.
  const head: {
    -readonly [K in keyof ConversationHead]: ConversationHead[K];
  } = {
    turn_count: Number(raw.turn_count ?? EMPTY_HEAD.turn_count),
    evaluated_through: Number(raw.evaluated_through ?? EMPTY_HEAD.evaluated_through),
    projected_chars: Number(raw.projected_chars ?? EMPTY_HEAD.projected_chars),
    compactions_version: Number(raw.compactions_version ?? EMPTY_HEAD.compactions_version),
    max_compacted_turn: Number(raw.max_compacted_turn ?? EMPTY_HEAD.max_compacted_turn),
  };
  if (raw.config !== undefined) head.config = raw.config;
  if (raw.stream_config !== undefined) head.stream_config = raw.stream_config;
  if (raw.model !== undefined) head.model = inOrder(raw.model, MODEL_FIELDS);
  if (Array.isArray(raw.removing) && raw.removing.length > 0) head.removing = raw.removing;
  if (raw.latest_event_ms !== undefined) head.latest_event_ms = Number(raw.latest_event_ms);
  if (raw.decided_through !== undefined) head.decided_through = Number(raw.decided_through);
  if (raw.last_decision !== undefined) head.last_decision = raw.last_decision;
  if (raw.bands !== undefined) head.bands = inOrder(raw.bands, BAND_FIELDS);
  if (raw.last_fired_at !== undefined) head.last_fired_at = raw.last_fired_at;
  if (raw.latest_band_at !== undefined) head.latest_band_at = raw.latest_band_at;
  if (raw.calibration !== undefined) {
    head.calibration = {
      turns_with_usage: Number(raw.calibration.turns_with_usage),
      points: raw.calibration.points,
    };
  }
  if (raw.incarnation !== undefined) head.incarnation = String(raw.incarnation);
  // The tombstone's token (dynamodb-delete.ts) is the store's own business.
  if (raw.deleting !== undefined) head.deleting = true;
  return head;
}

/** A TURN item, decoded: the turn's counts and where its events are. */
export interface TurnRecord {
  /** The turn without its events. */
  readonly summary: TurnSizeRecord;
  /** The chunks holding its events. */
  readonly storage: EventStorage;
}

/** The item under `pk` and `sk` with `attributes` (those `undefined` left out). */
function keyedItem(pk: string, sk: string, attributes: Readonly<Record<string, unknown>>): Item {
  const item: Item = { pk: { S: pk }, sk: { S: sk } };
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) item[name] = attr(value);
  }
  return item;
}

/** The TURN item (commit marker) of `turn`, its events stored as `storage` says. */
export function toTurnItem(pk: string, turn: StoredTurn, storage: EventStorage): Item {
  return keyedItem(pk, turnSk(turn.turn), {
    turn: turn.turn,
    digest: turn.digest,
    size: turn.size,
    storage,
    // When the turn was committed (epoch ms): for whoever inspects the table; the store never reads it.
    committed_at: Date.now(),
    model: turn.model,
    usage: turn.usage,
    // A list in the order of ZERO_TOTALS's fields: the names would be most of its bytes.
    totals: turn.totals && TOTAL_FIELDS.map((field) => turn.totals?.[field]),
  });
}

/** The turn record of a TURN item. */
export function toTurnRecord(item: Item): TurnRecord {
  const raw = unmarshall(item);
  const summary: TurnSizeRecord = {
    turn: Number(raw.turn),
    size: inOrder(raw.size, SIZE_FIELDS),
    digest: String(raw.digest),
    ...(raw.model !== undefined ? { model: inOrder(raw.model, MODEL_FIELDS) } : {}),
    ...(raw.usage !== undefined ? { usage: inOrder(raw.usage, USAGE_FIELDS) } : {}),
    ...(Array.isArray(raw.totals) ? { totals: totalsOf(raw.totals) } : {}),
    // Set by the evaluation after the turn (dynamodb.ts `markEvaluated`, dynamodb-compactions.ts).
    ...(raw.evaluation !== undefined ? { evaluation: raw.evaluation } : {}),
  };
  return { summary, storage: raw.storage as EventStorage };
}

/**
 * The CMP item of a compaction: its JSON inline as a string, or gzipped as
 * Binary when above {@link COMPACTION_INLINE_BYTES} (a long summary). Throws
 * {@link UnprocessableError} (`too-large-to-store`) when even the compressed JSON cannot fit.
 */
export async function toCompactionItem(pk: string, compaction: StoredCompaction): Promise<Item> {
  const item = keyedItem(pk, compactionSk(compaction.key), {
    key: compaction.key,
    after_turn: compaction.after_turn,
    seq: compaction.seq,
  });
  const json = Buffer.from(JSON.stringify(compaction.compaction), "utf8");
  if (json.length <= COMPACTION_INLINE_BYTES) {
    item.compaction = { S: json.toString("utf8") };
  } else {
    const packed = await gzip(json);
    if (packed.length > COMPACTION_MAX_BYTES) {
      throw new UnprocessableError(
        `compaction ${compaction.key} is ${json.length} bytes of JSON (${packed.length} compressed); at most ${COMPACTION_MAX_BYTES} compressed bytes fit in an item`,
        PROBLEM_VARIANTS.tooLargeToStore,
      );
    }
    item.compaction_gz = { B: packed };
  }
  return item;
}

/** The stored compaction of a CMP item (either form). */
export async function fromCompactionItem(item: Item): Promise<StoredCompaction> {
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
}
