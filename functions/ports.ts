/**
 * The ports of the service: narrow interfaces the handlers depend on, with
 * adapters for AWS (DynamoDB, SQS, Bedrock) and for one machine (DynamoDB
 * Local, an in-process queue). Every implementation of a port passes the same
 * contract suite (test/contract/).
 */

import type { SkipReason } from "../core/auto-compaction.ts";
import type { CalibrationSample, TurnUsage } from "../core/calibration.ts";
import type { ModelInfo } from "../core/catalog.ts";
import type { AutoConfigLayer } from "../core/config.ts";
import type { Compaction, Entry } from "../core/events.ts";
import type { RunningTotals, TurnSize } from "../core/sizes.ts";

// The ports of signed webhooks in and notifications out, of tenants and of summarizers, in files of their own.
export * from "./summarizer-ports.ts";
export * from "./tenant-ports.ts";
export * from "./webhook-ports.ts";

/** A conversation, always scoped to its tenant. */
export interface ConversationRef {
  readonly tenant: string;
  readonly conversation: string;
}

/** A conversation, and which of its lives (ports.ts `ConversationHead.incarnation`) when it matters. */
export interface LifeRef extends ConversationRef {
  readonly incarnation?: string;
}

/** The head item: everything the no-fire evaluation needs, in one read. */
export interface ConversationHead {
  readonly turn_count: number;
  /** The latest turn whose evaluation finished (fired or skipped), -1 before any. */
  readonly evaluated_through: number;
  /** Characters of the current projected view (estimate = chars / 4). */
  readonly projected_chars: number;
  /** Bumped on every compaction added or removed: the "no band landed meanwhile" guard. */
  readonly compactions_version: number;
  /** The largest `to_turn` of any compaction, -1 without compactions. */
  readonly max_compacted_turn: number;
  /** The per-conversation auto config layer set through the API. */
  readonly config?: AutoConfigLayer;
  /** The auto config carried by the stream's config deltas, merged in stream order. */
  readonly stream_config?: AutoConfigLayer;
  /** The model of the latest turn. */
  readonly model?: ModelInfo;
  /**
   * The latest timestamp of any stored event, in milliseconds since the
   * epoch rounded up: the service stamps a format-posted turn no earlier.
   * Absent on heads written before it existed.
   */
  readonly latest_event_ms?: number;
  /**
   * The latest turn an evaluation decided on a stored state holding it,
   * fired or skipped; a stale skip is no decision (it defers to the newer
   * turn's evaluation). Absent before the first decision.
   */
  readonly decided_through?: number;
  /** What the evaluation of `decided_through` decided. */
  readonly last_decision?: EvaluationDecision;
  /**
   * The keys of compactions a reset too big for one write has still to
   * remove (never empty: a write setting `removing: []` clears it). Set and
   * cleared by {@link ConversationStore.removeCompactions}; the conversation
   * log finishes such a reset before it decides any other write.
   */
  readonly removing?: readonly string[];
  /**
   * Set while the conversation is being deleted (a tombstone, see
   * {@link ConversationStore.beginDelete}): every conditional write fails,
   * and callers treat the conversation as gone.
   */
  readonly deleting?: true;
  /**
   * How many compactions of each source the conversation has (the list's
   * `bands`). Set by every compaction write; absent on heads whose
   * compactions have not changed since before it existed.
   */
  readonly bands?: BandCounts;
  /** The timestamp of the latest automatic band written (kept after a reset). */
  readonly last_fired_at?: string;
  /** The latest compaction's timestamp, while `max_compacted_turn >= 0` (absent on older heads). */
  readonly latest_band_at?: string;
  /**
   * The calibration sample (core/calibration.ts): the latest turns' reported
   * usage against the view each saw, set by every append that carries usage,
   * so the calibrated estimate needs the head alone. Absent before the first.
   */
  readonly calibration?: CalibrationSample;
  /**
   * Which life of the conversation id this head is: a random id chosen by
   * the write that creates the head (its first turn, or a config), kept by
   * every later write and by the tombstone. A conversation deleted and
   * created again under the same id has a new one, so its evaluation
   * messages are told from the old life's (docs/architecture.md §7). Absent
   * on heads created before it existed, until their next turn or config.
   */
  readonly incarnation?: string;
}

/** Compactions by source. */
export interface BandCounts {
  readonly auto: number;
  readonly manual: number;
}

/** What an evaluation decided for the turn it ran after: the band it fired, or why it skipped. */
export type EvaluationDecision =
  | {
      readonly turn: number;
      readonly outcome: "fired";
      /** The band: its storage key and range. */
      readonly band: { readonly key: string; readonly from_turn: number; readonly to_turn: number };
    }
  | {
      readonly turn: number;
      readonly outcome: "skipped";
      readonly reason: SkipReason;
      /** With `low_gain`: what the band would have removed, in the estimator's tokens. */
      readonly gain_tokens?: number;
      /** With `deferred_until_idle`: when the idle re-evaluation is due (RFC 3339). */
      readonly deferred_until?: string;
    };

/** What an evaluation saw: the numbers the timeline shows beside its decision. */
export interface EvaluationMeasures {
  /** Characters of the projected view the evaluation decided on (before its own band). */
  readonly projected_chars: number;
  /** Its estimate in the estimator's tokens, as the trigger compared it (absent on records kept before). */
  readonly estimated_tokens?: number;
  /** `context_window * trigger_ratio`, `null` while the window is unknown. */
  readonly threshold: number | null;
}

/** An evaluation as its turn's size record keeps it (the timeline): its decision and what it saw. */
export type TurnEvaluation = EvaluationDecision & EvaluationMeasures;

/** A stored turn: its events, their size counts and the digest that makes replays idempotent. */
export interface StoredTurn {
  readonly turn: number;
  readonly events: Entry[];
  readonly size: TurnSize;
  /** SHA-256 (hex) of the turn's canonical content; equal digests are identical replays. */
  readonly digest: string;
  readonly model?: ModelInfo;
  /** What the provider reported for the turn's last call, when the post said. */
  readonly usage?: StoredUsage;
  /** Running totals of turns 0..turn's sizes (core/sizes.ts); absent on turns stored before them. */
  readonly totals?: RunningTotals;
}

/**
 * A turn's reported usage as its size record keeps it, with our own count of
 * what that call saw: the projected view's characters once the turn was
 * stored (core/calibration.ts's point).
 */
export type StoredUsage = TurnUsage & { readonly view_chars: number };

/** The head of a conversation that has none yet (what every store and caller assumes). */
export const EMPTY_HEAD: ConversationHead = Object.freeze({
  turn_count: 0,
  evaluated_through: -1,
  projected_chars: 0,
  compactions_version: 0,
  max_compacted_turn: -1,
});

/**
 * A turn's counts without its events (what the estimate needs), and what the
 * evaluation after it recorded (absent: not evaluated, skipped as stale, or
 * stored before evaluations were recorded).
 */
export type TurnSizeRecord = Omit<StoredTurn, "events"> & {
  readonly evaluation?: TurnEvaluation;
};

/** A conversation as the tenant's list shows it: what its head says, read from the list index. */
export interface ListedConversation {
  readonly conversation: string;
  readonly turn_count: number;
  readonly projected_chars: number;
  readonly model?: ModelInfo;
  /** Absent on heads whose compactions have not changed since before counts were kept. */
  readonly bands?: BandCounts;
  readonly last_fired_at?: string;
}

/** One page of a tenant's conversations, most recently active first. */
export interface ConversationPage {
  readonly conversations: readonly ListedConversation[];
  /** Where the next page starts (opaque); absent on the last page. */
  readonly next_cursor?: string;
}

/** The most conversations one page lists. */
export const MAX_LIST_LIMIT = 100;

/** A stored compaction and where it sits in the stream. */
export interface StoredCompaction {
  /** Storage key: `AUTO#<turn>` for automatic bands (one per triggering turn), `MAN#…` otherwise. */
  readonly key: string;
  /** The compaction sits after this turn in the stream (turn_count - 1 when it was written). */
  readonly after_turn: number;
  /** The compactions_version that wrote it: orders compactions after the same turn. */
  readonly seq: number;
  readonly compaction: Compaction;
}

/**
 * A band's materialized form (core/materialize.ts), written with the band:
 * its stored turns as the projection reduces them, so the view reads these
 * instead of the raw turns. It holds while the compactions covering
 * `from_turn..to_turn` are exactly `covering` (functions/conversations/materialized.ts).
 */
export interface MaterializedBand {
  /** The key of the band it was written with (removed with it). */
  readonly key: string;
  readonly from_turn: number;
  /** The band's last stored turn when it was written (inclusive). */
  readonly to_turn: number;
  /** `key@seq` of every compaction covering one of its turns then, sorted. */
  readonly covering: readonly string[];
  /** Turns `from_turn..to_turn`, each in its materialized form. */
  readonly turns: readonly (readonly Entry[])[];
}

/**
 * The head fields a write sets (the rest stay as they are). `turn_count` and
 * `compactions_version` are set only by the store itself; `evaluated_through`
 * is set by a band's write, whose condition guarantees it only rises.
 */
export type HeadUpdate = Partial<Omit<ConversationHead, "turn_count" | "compactions_version">>;

/**
 * The head state a write was computed from. Every write that changes the
 * projection is conditional on both numbers, so a turn and a compaction
 * computed from the same read can never both land and leave a wrong
 * `projected_chars` behind.
 */
export interface HeadVersion {
  readonly turn_count: number;
  readonly compactions_version: number;
  /**
   * The life of the conversation the numbers were read from (the head's
   * {@link ConversationHead.incarnation}): when given, the write fails on
   * another life too, one created under the id since, at the same numbers.
   */
  readonly incarnation?: string;
}

/**
 * The numbers a head caches about its turns and compactions: what
 * `verify` recomputes and {@link ConversationStore.repairHead} rewrites.
 */
export type HeadCounters = Pick<ConversationHead, (typeof HEAD_COUNTERS)[number]>;

/** The fields of {@link HeadCounters}, in the order verify reports them. */
export const HEAD_COUNTERS = [
  "turn_count",
  "projected_chars",
  "max_compacted_turn",
  "compactions_version",
  "evaluated_through",
] as const;

/**
 * What appending a turn is conditional on, besides `turn_count` still being
 * the turn's number. Either the exact compactions the caller read (and
 * `head.projected_chars` is the new total), or just that no compaction covers
 * the new turn (`max_compacted_turn < turn`): then the turn's characters are
 * independent of every compaction, so they are added to `projected_chars`
 * without reading the head first — the webhook's one-round-trip path.
 */
export type AppendCondition =
  | { readonly compactions_version: number }
  | {
      readonly uncompacted: true;
      readonly add_projected_chars: number;
      /**
       * When given, the head's `latest_event_ms` must be absent or not later
       * than this (the turn's events are no older than any stored one).
       */
      readonly latest_event_ms?: number;
      /**
       * When given, the head must be this life of the conversation: the
       * turn's totals were chained from a record of that life kept without
       * reading it (functions/conversations/last-turns.ts).
       */
      readonly incarnation?: string;
    };

/**
 * Storage of conversations. Every method is strongly consistent; every write
 * is conditional on the head state the caller read, so concurrent writers
 * never both succeed. A head with `deleting` set (a tombstone) fails every
 * write's condition: appends, compactions and config throw
 * {@link ConditionFailedError}, `markEvaluated` does nothing.
 */
export interface ConversationStore {
  /** The head, or `undefined` for a conversation that does not exist yet. */
  getHead(ref: ConversationRef): Promise<ConversationHead | undefined>;

  /**
   * Stores turn `turn.turn` and sets `turn_count = turn.turn + 1` and `head`,
   * on the condition that `turn_count` is still `turn.turn` (a missing head
   * counts as turn_count 0) and `condition` holds (a missing head counts as
   * compactions_version 0 and no compaction). Events of any size are stored
   * (chunked as needed) and read back byte-exact. Throws
   * {@link ConditionFailedError} when a condition fails.
   */
  appendTurn(
    ref: ConversationRef,
    turn: StoredTurn,
    condition: AppendCondition,
    head: HeadUpdate,
  ): Promise<void>;

  /** One stored turn with its events. */
  getTurn(ref: ConversationRef, turn: number): Promise<StoredTurn | undefined>;

  /** Every stored turn's counts, in turn order, without reading events. */
  listTurnSizes(ref: ConversationRef): Promise<TurnSizeRecord[]>;

  /** The counts of the turns `turns` that are stored, in turn order, without reading events. */
  getTurnSizes(ref: ConversationRef, turns: readonly number[]): Promise<TurnSizeRecord[]>;

  /** The events of turns `from..to` (inclusive; default all), in turn order. */
  readTurns(ref: ConversationRef, from?: number, to?: number): Promise<StoredTurn[]>;

  /** Every compaction, in stream order (`after_turn`, then `seq`). */
  listCompactions(ref: ConversationRef): Promise<StoredCompaction[]>;

  /**
   * Adds a compaction under `compaction.key` if that key is absent and the
   * head still has `expected.turn_count` and `expected.compactions_version`;
   * the head gets `compactions_version = expected.compactions_version + 1`
   * and `head`; with an `evaluation` (the compactor's), the size record of
   * turn `evaluation.turn` keeps it; `materialized` (the band's form, its
   * `key` the compaction's) is kept with it, or dropped when too large to
   * store (readers then read the raw turns). Atomic (one transaction).
   * Throws {@link ConditionFailedError} otherwise.
   */
  addCompaction(
    ref: ConversationRef,
    compaction: StoredCompaction,
    expected: HeadVersion,
    head: HeadUpdate,
    evaluation?: TurnEvaluation,
    materialized?: MaterializedBand,
  ): Promise<void>;

  /**
   * Keeps `form` (a band's materialized form built after its write, its
   * `key` the band's) only while the band is still stored under that key
   * with `seq`, atomically with that check; otherwise, or when too large to
   * store, keeps nothing. Returns whether it was kept.
   */
  addMaterialized(ref: ConversationRef, seq: number, form: MaterializedBand): Promise<boolean>;

  /** Every kept {@link MaterializedBand} (some may no longer hold), in `from_turn` order. */
  listMaterialized(ref: ConversationRef): Promise<MaterializedBand[]>;

  /**
   * Removes compactions by key under the same head condition, atomically,
   * bumping the version; their materialized forms go too (after it: a
   * form left behind no longer holds, as its band is gone).
   */
  removeCompactions(
    ref: ConversationRef,
    keys: readonly string[],
    expected: HeadVersion,
    head: HeadUpdate,
  ): Promise<void>;

  /**
   * Sets the per-conversation config layer (creating the head if needed).
   * Throws {@link ConditionFailedError} while the conversation is being deleted.
   */
  putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void>;

  /**
   * Raises `evaluated_through` to `turn` (never lowers it); with a
   * `decision` (for `turn`), also records it as `decided_through` and
   * `last_decision`, and with `measures` too, the size record of the turn
   * keeps both (a {@link TurnEvaluation}), all in one conditional write.
   * With `ref.incarnation`, on that life of the conversation only: a mark
   * decided on a head since deleted does nothing on one created under its id.
   */
  markEvaluated(
    ref: LifeRef,
    turn: number,
    decision?: EvaluationDecision,
    measures?: EvaluationMeasures,
  ): Promise<void>;

  /**
   * A page of `tenant`'s live conversations, most recently active first
   * (activity: a turn appended, a compaction added or removed, a config
   * set), from an index, never a scan. `cursor` is a page's `next_cursor`;
   * one that is not is an {@link InvalidInputError}.
   */
  listConversations(
    tenant: string,
    page: { readonly limit: number; readonly cursor?: string },
  ): Promise<ConversationPage>;

  /**
   * Overwrites the head's counters with `counters` (a verify repair), on the
   * condition that the head exists, is live, and still holds exactly
   * `expected` (all five counters), so any write that landed since the
   * caller read it makes this fail. Throws {@link ConditionFailedError}
   * otherwise.
   */
  repairHead(ref: ConversationRef, expected: HeadCounters, counters: HeadCounters): Promise<void>;

  /**
   * The first step of a delete: turns the head into a tombstone (`deleting`
   * set, `compactions_version` bumped, so no write computed from an earlier
   * head can land). An existing tombstone stays (its version is bumped
   * again). False when there is no head (nothing to delete).
   */
  beginDelete(ref: ConversationRef): Promise<boolean>;

  /**
   * The second step: removes every item of a tombstoned conversation
   * (turns, events, compactions), then the head, each step conditional on
   * the tombstone {@link beginDelete} left still being there. Does nothing
   * without a tombstone (no head, or a live one); a call after a crash
   * midway finishes the job, and a delete that another one finished first
   * stops without touching what came after (a fresh conversation).
   */
  finishDelete(ref: ConversationRef): Promise<void>;

  /**
   * Keeps `failure` as the conversation's last failed evaluation (replacing
   * any earlier one), for `autocompact dlq list`: SQS keeps no error text.
   * Written whatever the head's state; removed with the conversation.
   */
  recordFailure(ref: ConversationRef, failure: EvaluationFailure): Promise<void>;

  /** The last failure {@link recordFailure} kept, if any. */
  lastFailure(ref: ConversationRef): Promise<EvaluationFailure | undefined>;

  /**
   * Claims the conversation's `Idempotency-Key` `key` for a request whose
   * digest is `digest`: keeps a pending record until `expiresAtSeconds`
   * (Unix seconds) unless an unexpired one (expiry after `nowSeconds`) is
   * kept already, which is then answered as it is. Strongly consistent: of
   * concurrent claims of one key, exactly one is `claimed`. Records go with
   * the conversation's delete.
   */
  claimIdempotencyKey(
    ref: ConversationRef,
    key: string,
    digest: string,
    nowSeconds: number,
    expiresAtSeconds: number,
  ): Promise<IdempotencyClaim>;

  /**
   * Keeps `answer` on the pending record of `key` claimed with `digest`,
   * until `expiresAtSeconds`. Throws {@link ConditionFailedError} when that
   * claim is no longer there (it expired and another request took the key).
   */
  finishIdempotencyKey(
    ref: ConversationRef,
    key: string,
    digest: string,
    answer: IdempotentAnswer,
    expiresAtSeconds: number,
  ): Promise<void>;

  /** Removes the pending record of `key` claimed with `digest`, if it is still there (its request failed). */
  releaseIdempotencyKey(ref: ConversationRef, key: string, digest: string): Promise<void>;
}

/** An answer kept under an `Idempotency-Key`: its status and JSON body. */
export interface IdempotentAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** A request kept under an `Idempotency-Key`: its digest and, once it finished, its answer. */
export interface IdempotencyRecord {
  readonly digest: string;
  readonly answer?: IdempotentAnswer;
}

/** What {@link ConversationStore.claimIdempotencyKey} found: the key was free (now claimed), or its record. */
export type IdempotencyClaim =
  | { readonly claimed: true }
  | { readonly claimed: false; readonly record: IdempotencyRecord };

/** A failed evaluation of a conversation's turn, as the compactor records it. */
export interface EvaluationFailure {
  readonly turn: number;
  /** The error's class name (e.g. `SummaryTimeoutError`). */
  readonly error: string;
  /** Its message, at most {@link FAILURE_MESSAGE_MAX} characters. */
  readonly message: string;
  /** When it failed (ISO 8601). */
  readonly at: string;
}

/** The longest failure message kept (longer ones are cut, ending in `…`). */
export const FAILURE_MESSAGE_MAX = 1024;

/** A failure of `turn` from a thrown value: its class, its message cut to {@link FAILURE_MESSAGE_MAX}. */
export function evaluationFailure(turn: number, thrown: unknown, at: Date): EvaluationFailure {
  // `name`, not the constructor's: bundles are minified, and every error class sets its name.
  const error = thrown instanceof Error ? thrown.name : typeof thrown;
  const text = thrown instanceof Error ? thrown.message : String(thrown);
  const message =
    text.length > FAILURE_MESSAGE_MAX ? `${text.slice(0, FAILURE_MESSAGE_MAX - 1)}…` : text;
  return { turn, error, message, at: at.toISOString() };
}

/** A message asking the compactor to evaluate a conversation after a turn. */
export interface EvaluationMessage {
  readonly tenant: string;
  readonly conversation: string;
  readonly turn: number;
  /**
   * When the API stored (or re-enqueued) the turn, by its clock (Unix
   * milliseconds): the start of the evaluation lag the compactor reports
   * (`EvaluationLagMs`). Absent on messages enqueued before it existed.
   */
  readonly posted_at_ms?: number;
  /**
   * The conversation's {@link ConversationHead.incarnation} when the turn
   * was stored: the compactor skips the message as `stale` on a head of
   * another life, and it is part of the deduplication id, so a recreated
   * conversation's turns are not dropped as the old one's duplicates.
   * Absent on messages enqueued before it existed (or for a head without
   * one): those are evaluated against whatever life the conversation is in.
   */
  readonly incarnation?: string;
  /**
   * Set on an idle timer (issue 29): when the conversation's rest began (the
   * turn's `posted_at_ms`). The timer re-evaluates `turn` if it is still the
   * newest, with the rest measured from here.
   */
  readonly idle_from_ms?: number;
}

/** The evaluation queue (SQS FIFO in AWS, in-process locally). */
export interface TurnQueue {
  enqueue(message: EvaluationMessage): Promise<void>;
}

/**
 * The idle timers (docs/architecture.md §2, Idle timers): delivers `message`
 * (an {@link EvaluationMessage} with `idle_from_ms`) to the compactor at
 * `dueMillis` or later, at least once. A lost timer is replaced by the next
 * turn's evaluation; a doubled or late one is a no-op, so delivery needs no
 * more than that.
 */
export interface IdleTimers {
  schedule(message: EvaluationMessage, dueMillis: number): Promise<void>;
}

/** A source of time, injectable for tests. */
export interface Clock {
  nowMillis(): number;
}

/** The wall clock. */
export const systemClock: Clock = { nowMillis: () => Date.now() };
