/**
 * The conversation log: the one owner of a conversation head's invariants
 * and of the optimistic read → decide → write loop. Callers (the API's
 * operations, the compactor) read a {@link Snapshot}, decide, and hand back
 * one {@link LogWrite}; the log computes what the head must cache and makes
 * the write conditional on the head it was decided from. After every write
 * that lands:
 *
 * - `projected_chars` is the projected size of every stored turn under every
 *   compaction (core's `projectedCharsFromSizes`), so a trigger decision
 *   reads the head alone;
 * - `max_compacted_turn` is the largest `to_turn` of any compaction (-1 for
 *   none), so appending a turn no compaction covers needs no read;
 * - `bands` counts the compactions by source, for the tenant's list (set
 *   by every compaction write, so a head from before it gets it on the next);
 * - `evaluated_through` only rises (but for a repair that brings it back
 *   to the last turn);
 * - a band is written with its materialized form when the write carries its
 *   turns (a summary's) and they allow one (materialized.ts); otherwise the
 *   view's first read builds it, so a firing reads no turn for it.
 *
 * Those numbers are defined once, in counters.ts; a `repair_head` write
 * (verify's repair) sets them all from the stored turns and compactions.
 *
 * A reset of more compactions than one transaction holds lands in batches,
 * each a consistent step; the head records the keys still to remove
 * (`removing`) until the last, and a reset interrupted midway is finished by
 * the next write through {@link ConversationLog.update} (see `#remove`).
 *
 * A write that loses a race is decided again from a fresh read, after a
 * jittered backoff, for up to a few seconds; past that it is a
 * {@link ContentionError} (503 with `Retry-After`).
 *
 * A conversation being deleted (its head a tombstone) reads as absent: a
 * snapshot has no head and says `deleting`, and no write can land on it.
 */
import { addUsage, type TurnUsage } from "../../core/calibration.ts";
import type { ModelInfo } from "../../core/catalog.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import { PROBLEM_VARIANTS, UnprocessableError } from "../../core/errors.ts";
import type { Compaction } from "../../core/events.ts";
import type { TurnRange } from "../../core/rules.ts";
import {
  crossesTurns,
  type RunningTotals,
  runningTotals,
  runningTotalsOf,
  type TurnSize,
} from "../../core/sizes.ts";
import { type BackoffOptions, jitteredBackoff } from "../backoff.ts";
import { ConditionFailedError, ContentionError } from "../errors.ts";
import type {
  BandCounts,
  ConversationHead,
  ConversationRef,
  ConversationStore,
  EvaluationDecision,
  EvaluationMeasures,
  HeadUpdate,
  LifeRef,
  StoredCompaction,
  StoredTurn,
  TurnSizeRecord,
} from "../ports.ts";
import { addedCounts, charsWithBand, latestBandTimestamp, latestOf } from "./band-estimate.ts";
import {
  countersOf,
  expectedCounters,
  maxCompactedTurn,
  projectedChars,
  rawChars,
} from "./counters.ts";
import { LastTurns } from "./last-turns.ts";
import { materializeBand } from "./materialized.ts";

/** Compactions removed per transaction (DynamoDB allows 100 items, one is the head). */
const REMOVE_BATCH = 90;
/** The most compactions one reset removes: the head keeps the keys still to remove (400 KB items). */
const MAX_REMOVE = 10_000;

/** The head as one attempt read it, and the reads a decision may need (each made at most once). */
export interface Snapshot {
  /** `undefined` for a conversation that does not exist yet, or is being deleted. */
  readonly head: ConversationHead | undefined;
  /** True while the conversation is being deleted: it is gone, and any write fails. */
  readonly deleting: boolean;
  /** Every compaction, in stream order. */
  compactions(): Promise<readonly StoredCompaction[]>;
  /** Every stored turn's sizes, in turn order. */
  turnSizes(): Promise<readonly TurnSize[]>;
  /**
   * How to compute the projected characters with a band over `range`
   * added: when the band covers only turns no compaction covers (every
   * automatic band: its range starts after the furthest-compacted turn),
   * from the head's `projected_chars` and the size records at the band's
   * ends (core's `projectedCharsWithBand`, at most four records read); else,
   * or when one of those records has no running totals (stored before
   * them), from every size record and every compaction.
   */
  charsWithBand(range: TurnRange): Promise<(band: Compaction) => number>;
  /**
   * The latest timestamp of any compaction (`undefined` with none), which
   * a new band's must follow: the head's `latest_band_at`, or, on a head
   * written before it, from every compaction.
   */
  latestBandTimestamp(): Promise<string | undefined>;
}

/** One versioned write: what changes, never the numbers the head caches (the log computes those). */
export type LogWrite =
  | {
      readonly kind: "append_turn";
      readonly turn: StoredTurn;
      /** What the provider reported for the turn: kept on its size record with the view it saw. */
      readonly usage?: TurnUsage;
      /** The stream's config deltas merged so far, when this turn changes them. */
      readonly stream_config?: AutoConfigLayer;
      /** The head's latest event time with this turn's (see {@link ConversationHead.latest_event_ms}). */
      readonly latest_event_ms?: number;
    }
  | {
      readonly kind: "add_compaction";
      readonly compaction: StoredCompaction;
      /** Set by the compactor: the band's write also records its evaluation's decision. */
      readonly decision?: EvaluationDecision;
      /** With the decision: what the evaluation saw, kept on its turn's size record. */
      readonly measures?: EvaluationMeasures;
      /** The band's stored turns, when the writer read them (a summary's): its form is built from them. */
      readonly turns?: readonly StoredTurn[];
    }
  | { readonly kind: "remove_compactions"; readonly keys: readonly string[] }
  /** Verify's repair: the head gets the counters its stored turns and compactions say (counters.ts). */
  | { readonly kind: "repair_head" };

/** What a decision returns: its result, and the write that must land first when there is one. */
export type Decision<T> = { readonly result: T; readonly write?: LogWrite };

/** How long the log keeps retrying a write that loses races, and its backoff (default 10 ms doubling to 500 ms). */
export interface RetryPolicy extends BackoffOptions {
  /** Stop retrying once this much time has passed (default 3,000 ms; API Gateway gives up at 30 s). */
  readonly budgetMs?: number;
  /** Injectable for tests. */
  readonly now?: () => number;
}

/** The answer to a write on a conversation being deleted: retry once the delete has finished. */
export function deletingError(ref: ConversationRef, cause?: unknown): ContentionError {
  return new ContentionError(
    `conversation "${ref.conversation}" is being deleted: retry the request once the delete has finished`,
    cause === undefined ? {} : { cause },
  );
}

/** How many of `compactions` are automatic and manual (a compaction without `source` is manual). */
export function bandCounts(compactions: readonly StoredCompaction[]): BandCounts {
  const auto = compactions.filter((c) => c.compaction.source === "auto").length;
  return { auto, manual: compactions.length - auto };
}

/**
 * The life of a conversation whose head, as `head` read it, counts exactly
 * `turns` turns: the life an append of turn `turns` lands in if its
 * condition holds. Undefined when the read saw another count (it may then
 * predate or follow other writes), no head, or a head without a life.
 */
async function lifeAt(
  head: (() => Promise<ConversationHead | undefined>) | undefined,
  turns: number,
): Promise<string | undefined> {
  const read = await head?.();
  return read?.turn_count === turns && !read.deleting ? read.incarnation : undefined;
}

/** See the module comment. */
export class ConversationLog {
  readonly #store: ConversationStore;
  readonly #budgetMs: number;
  readonly #now: () => number;
  readonly #backoff: (retry: number) => Promise<void>;
  readonly #lastTurns = new LastTurns();

  constructor(store: ConversationStore, retry: RetryPolicy = {}) {
    this.#store = store;
    this.#budgetMs = retry.budgetMs ?? 3_000;
    this.#now = retry.now ?? Date.now;
    this.#backoff = jitteredBackoff(retry, { baseDelayMs: 10, maxDelayMs: 500 });
  }

  /**
   * Appends the next turn in one round trip when no compaction covers it
   * (`max_compacted_turn < turn`) and no stored event is later than
   * `latestEventMs` (the turn's latest event time): its characters then add
   * to the projected total whatever the compactions are, so the head need
   * not be read. False when a condition or the turn number does not hold,
   * or when a tool pair may cross into or out of the turn (it or the turn
   * before has calls it leaves unanswered, or it answers earlier calls:
   * whether those stay in the view depends on both turns and the policy of
   * the one with the call); then decide from a {@link Snapshot} with {@link update}.
   * The turn's running totals chain from the turn before: kept from this
   * instance's own append of it ({@link LastTurns}, no read), or read; then
   * `head` gives the caller's read of the head, started beside this one,
   * which names the life the next append may skip the read in.
   */
  async appendUncovered(
    ref: ConversationRef,
    turn: StoredTurn,
    latestEventMs = Number.NEGATIVE_INFINITY,
    head?: () => Promise<ConversationHead | undefined>,
  ): Promise<boolean> {
    const dated = Number.isFinite(latestEventMs);
    if (crossesTurns(turn.size)) return false;
    const kept = this.#lastTurns.before(ref, turn.turn);
    try {
      // Turn 0 reads nothing: its write starts at once, as before the totals.
      const { previous, totals } = kept
        ? { previous: kept, totals: runningTotals(kept, turn.size) }
        : turn.turn === 0
          ? { previous: undefined, totals: runningTotals(undefined, turn.size) }
          : await this.#totalsThrough(ref, turn);
      // The head read was started beside this one: waiting for it here costs nothing more.
      const life = kept
        ? kept.incarnation
        : turn.turn > 0
          ? await lifeAt(head, turn.turn)
          : undefined;
      if ((previous?.size.pending_calls ?? 0) > 0) return false;
      await this.#store.appendTurn(
        ref,
        totals ? { ...turn, totals } : turn,
        {
          uncompacted: true,
          add_projected_chars: rawChars(turn.size),
          ...(dated ? { latest_event_ms: latestEventMs } : {}),
          ...(life === undefined ? {} : { incarnation: life }),
        },
        {
          ...(turn.model ? { model: turn.model } : {}),
          ...(dated ? { latest_event_ms: latestEventMs } : {}),
        },
      );
      if (totals && life !== undefined) {
        this.#lastTurns.remember(ref, {
          turn: turn.turn,
          size: turn.size,
          totals,
          incarnation: life,
        });
      }
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        this.#lastTurns.forget(ref);
        return false;
      }
      throw error;
    }
  }

  /**
   * Reads the head, asks `decide`, and applies the write it returns,
   * conditional on that head; a lost race decides again from a fresh read.
   * `what` names the operation in the {@link ContentionError} that ends a
   * retry budget spent on lost races (after the first, which always
   * decides again).
   */
  async update<T>(
    ref: ConversationRef,
    what: string,
    decide: (snapshot: Snapshot) => Promise<Decision<T>>,
  ): Promise<T> {
    const started = this.#now();
    for (let attempt = 1; ; attempt++) {
      const read = await this.#finishRemoval(ref, await this.#store.getHead(ref));
      const snapshot = this.#snapshot(ref, read);
      const decision = await decide(snapshot);
      if (decision.write === undefined) return decision.result;
      try {
        await this.#apply(ref, snapshot, decision.write);
        return decision.result;
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        // The first loss always decides again: a decision that outlasted the
        // budget (a summary) may have lost to a change that needs no write.
        const spent = this.#now() - started >= this.#budgetMs;
        if (spent && attempt > 1) {
          throw new ContentionError(`${what}: too many concurrent writes, retry the request`, {
            attempts: attempt,
            cause: error,
          });
        }
        await this.#backoff(attempt);
      }
    }
  }

  /**
   * Records that turns through `turn` were evaluated without a band (never
   * lowers it); `measures` go on the turn's size record with the decision.
   * With `ref.incarnation`, only on that life of the conversation.
   */
  markEvaluated(
    ref: LifeRef,
    turn: number,
    decision?: EvaluationDecision,
    measures?: EvaluationMeasures,
  ): Promise<void> {
    return this.#store.markEvaluated(ref, turn, decision, measures);
  }

  /**
   * Sets the conversation's own config layer (no cached number depends on
   * it); a {@link ContentionError} while the conversation is being deleted.
   */
  async putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void> {
    try {
      await this.#store.putConfig(ref, config);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      throw deletingError(ref, error);
    }
  }

  /**
   * Deletes the conversation: tombstones its head, then removes every item
   * and the head (the store's `beginDelete` and `finishDelete`). Nothing for
   * a conversation that does not exist; a tombstone left by an earlier
   * attempt is finished.
   */
  async delete(ref: ConversationRef): Promise<void> {
    if (await this.#store.beginDelete(ref)) await this.#store.finishDelete(ref);
  }

  /**
   * The running totals through `turn` (core/sizes.ts), from the size record
   * of the turn before it (one read; none for turn 0). When that record has
   * none (stored before them) they are computed from every record, once:
   * the turns after this one chain from its totals. `undefined` when the
   * turn before is not stored (the append's condition then fails anyway).
   * With them, the record of the turn before.
   */
  async #totalsThrough(
    ref: ConversationRef,
    turn: StoredTurn,
  ): Promise<{ previous?: TurnSizeRecord; totals?: RunningTotals }> {
    if (turn.turn === 0) return { totals: runningTotals(undefined, turn.size) };
    const [previous] = await this.#store.getTurnSizes(ref, [turn.turn - 1]);
    if (!previous) return {};
    if (previous.totals) {
      const totals = runningTotals({ size: previous.size, totals: previous.totals }, turn.size);
      return { previous, totals };
    }
    const records = await this.#store.listTurnSizes(ref);
    if (records.length !== turn.turn) return { previous };
    return {
      previous,
      totals: runningTotalsOf([...records.map((r) => r.size), turn.size]).at(-1),
    };
  }

  #snapshot(ref: ConversationRef, read: ConversationHead | undefined): Snapshot {
    const store = this.#store;
    let compactions: Promise<StoredCompaction[]> | undefined;
    let sizes: Promise<TurnSize[]> | undefined;
    let latest: Promise<string | undefined> | undefined;
    const withBand = new Map<string, Promise<(band: Compaction) => number>>();
    const deleting = read?.deleting === true;
    const head = deleting ? undefined : read;
    const snapshot: Snapshot = {
      head,
      deleting,
      compactions: () => {
        compactions ??= store.listCompactions(ref);
        return compactions;
      },
      turnSizes: () => {
        sizes ??= store.listTurnSizes(ref).then((records) => records.map((r) => r.size));
        return sizes;
      },
      charsWithBand: (range) => {
        const key = `${range.from_turn}..${range.to_turn}`;
        let chars = withBand.get(key);
        if (!chars) {
          chars = charsWithBand(store, ref, head, snapshot, range);
          withBand.set(key, chars);
        }
        return chars;
      },
      latestBandTimestamp: () => {
        latest ??= latestBandTimestamp(head, snapshot);
        return latest;
      },
    };
    return snapshot;
  }

  async #apply(ref: ConversationRef, snapshot: Snapshot, write: LogWrite): Promise<void> {
    const head = snapshot.head;
    switch (write.kind) {
      case "append_turn": {
        const covered = write.turn.turn <= (head?.max_compacted_turn ?? -1);
        const through = covered ? {} : await this.#totalsThrough(ref, write.turn);
        // A tool pair crossing into or out of the turn (see appendUncovered): recomputed too.
        const crossing =
          crossesTurns(write.turn.size) || (through.previous?.size.pending_calls ?? 0) > 0;
        const before = covered || crossing ? await snapshot.turnSizes() : undefined;
        const totals = before
          ? runningTotalsOf([...before, write.turn.size]).at(-1)
          : through.totals;
        const turn = totals ? { ...write.turn, totals } : write.turn;
        const projected = before
          ? projectedChars([...before, turn.size], await snapshot.compactions())
          : (head?.projected_chars ?? 0) + rawChars(turn.size);
        // The turn's last call saw the projected view up to its answer: the calibration's point.
        const stored = write.usage
          ? { ...turn, usage: { ...write.usage, view_chars: projected } }
          : turn;
        const update: HeadUpdate = {
          projected_chars: projected,
          ...(write.usage
            ? { calibration: addUsage(head?.calibration, projected, write.usage) }
            : {}),
          ...(write.stream_config ? { stream_config: write.stream_config } : {}),
          ...(turn.model ? { model: turn.model as ModelInfo } : {}),
          ...(write.latest_event_ms === undefined
            ? {}
            : { latest_event_ms: write.latest_event_ms }),
        };
        await this.#store.appendTurn(
          ref,
          stored,
          { compactions_version: head?.compactions_version ?? 0 },
          update,
        );
        return;
      }
      case "add_compaction": {
        if (!head) throw new ConditionFailedError("no head to add a compaction to");
        const { decision, measures } = write;
        const added = write.compaction.compaction;
        const [withBand, latest, form] = await Promise.all([
          snapshot.charsWithBand(added),
          snapshot.latestBandTimestamp(),
          materializeBand(head, write.compaction, write.turns ?? [], () => snapshot.compactions()),
        ]);
        const bands = addedCounts(head, write.compaction);
        await this.#store.addCompaction(
          ref,
          write.compaction,
          head,
          {
            projected_chars: withBand(added),
            max_compacted_turn: Math.max(head.max_compacted_turn, added.to_turn),
            bands: bands ?? bandCounts([...(await snapshot.compactions()), write.compaction]),
            latest_band_at: latestOf(latest, added.timestamp),
            ...(added.source === "auto" ? { last_fired_at: added.timestamp } : {}),
            ...(decision === undefined
              ? {}
              : {
                  evaluated_through: decision.turn,
                  decided_through: decision.turn,
                  last_decision: decision,
                }),
          },
          decision && measures ? { ...decision, ...measures } : undefined,
          form,
        );
        return;
      }
      case "repair_head": {
        if (!head) throw new ConditionFailedError("no head to repair");
        const expected = countersOf(head);
        const sizes = await snapshot.turnSizes();
        await this.#store.repairHead(
          ref,
          expected,
          expectedCounters(expected, sizes, await snapshot.compactions()),
        );
        return;
      }
      case "remove_compactions": {
        if (!head) throw new ConditionFailedError("no head to remove compactions from");
        await this.#remove(ref, head, snapshot, write.keys);
        return;
      }
    }
  }

  /**
   * A reset: removes `keys` in one transaction when they fit, else in
   * batches whose first records on the head the keys still to remove
   * (`removing`). Once a batch landed the reset is finished here, whatever
   * races it meets, or, if it cannot be (a store failure, a retry budget
   * spent), reported as interrupted (503): the head's `removing` then makes
   * the next write through {@link update} (a retry of the reset, a turn, the
   * compactor's evaluation) finish it before deciding anything.
   */
  async #remove(
    ref: ConversationRef,
    head: ConversationHead,
    snapshot: Snapshot,
    keys: readonly string[],
  ): Promise<void> {
    if (keys.length > MAX_REMOVE) {
      throw new UnprocessableError(
        `cannot reset ${keys.length} compactions at once: at most ${MAX_REMOVE}; reset by source or position first`,
        PROBLEM_VARIANTS.tooLargeToStore,
      );
    }
    let removed = 0;
    try {
      await this.#removeInBatches(ref, head, snapshot, keys, (batch) => {
        removed += batch;
      });
    } catch (error) {
      if (removed === 0) throw error; // nothing landed: decided again, or the answer
      if (error instanceof ConditionFailedError) {
        await this.#finishRemoval(ref, await this.#store.getHead(ref));
        return;
      }
      throw new ContentionError(
        `reset interrupted after removing ${removed} of ${keys.length} compactions: the other ${keys.length - removed} are recorded on the conversation and removed by its next write; retry the request to finish the reset`,
        { cause: error },
      );
    }
  }

  /**
   * Finishes the reset a head records as interrupted (`removing`), with its
   * own retry budget; the head to decide from once no reset is pending.
   */
  async #finishRemoval(
    ref: ConversationRef,
    read: ConversationHead | undefined,
  ): Promise<ConversationHead | undefined> {
    if (read?.removing === undefined) return read;
    const started = this.#now();
    let head: ConversationHead | undefined = read;
    for (let attempt = 1; head?.removing !== undefined && !head.deleting; attempt++) {
      try {
        await this.#removeInBatches(ref, head, this.#snapshot(ref, head), head.removing);
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        if (this.#now() - started >= this.#budgetMs) {
          throw new ContentionError(
            `${head.removing.length} compactions of an interrupted reset are still to remove: too many concurrent writes, retry the request`,
            { attempts: attempt, cause: error },
          );
        }
        await this.#backoff(attempt);
      }
      head = await this.#store.getHead(ref);
    }
    return head;
  }

  /**
   * Removes compactions a batch at a time (one DynamoDB transaction holds at
   * most 100 items): every batch is one atomic step from one consistent head
   * to the next, so a concurrent reader or writer never sees a wrong estimate.
   * When there is more than one batch (or the head records a reset to
   * finish), each batch also sets `removing` to the keys after it (none
   * after the last).
   */
  async #removeInBatches(
    ref: ConversationRef,
    head: ConversationHead,
    snapshot: Snapshot,
    keys: readonly string[],
    landed: (batch: number) => void = () => {},
  ): Promise<void> {
    const sizes = await snapshot.turnSizes();
    let remaining = await snapshot.compactions();
    // The life the keys were read from, too (ports.ts HeadVersion).
    const life = head.incarnation === undefined ? {} : { incarnation: head.incarnation };
    let version = {
      turn_count: head.turn_count,
      compactions_version: head.compactions_version,
      ...life,
    };
    const recorded = keys.length > REMOVE_BATCH || head.removing !== undefined;
    for (let start = 0; start < keys.length; start += REMOVE_BATCH) {
      const batch = new Set(keys.slice(start, start + REMOVE_BATCH));
      remaining = remaining.filter((c) => !batch.has(c.key));
      const latest = remaining.reduce<string | undefined>(
        (at, c) => latestOf(at, c.compaction.timestamp),
        undefined,
      );
      await this.#store.removeCompactions(ref, [...batch], version, {
        projected_chars: projectedChars(sizes, remaining),
        max_compacted_turn: maxCompactedTurn(remaining),
        bands: bandCounts(remaining),
        // With no band left it stays behind: `max_compacted_turn` -1 says there is none.
        ...(latest === undefined ? {} : { latest_band_at: latest }),
        ...(recorded ? { removing: keys.slice(start + REMOVE_BATCH) } : {}),
      });
      landed(batch.size);
      version = { ...version, compactions_version: version.compactions_version + 1 };
    }
  }
}
