/**
 * The evaluation queue of the local runtime: SQS FIFO and a Lambda event
 * source mapping, in process (docs/architecture.md §11).
 *
 * - At-least-once: a received message is hidden for the visibility timeout;
 *   it is deleted only when the handler reports it done, and becomes visible
 *   again when the timeout passes otherwise (failed, or the handler is slow).
 * - Redrive: a message received `maxReceiveCount` times (default 5) that is
 *   still not done moves to the dead-letter list instead of being delivered
 *   again.
 * - FIFO groups: only the oldest message of a group can be delivered, and
 *   only while no message of that group is hidden, so a group never has two
 *   messages out at once and keeps its order; a failing message blocks its
 *   group until it succeeds or is dead-lettered. Other groups keep flowing.
 * - Pollers: up to `concurrency` batches are handled at once, as an event
 *   source mapping's concurrent invocations. The groups ready at a pass are
 *   shared evenly among the pollers free then (20 groups and 10 free pollers:
 *   10 batches of 2), so a burst over many conversations has many of them in
 *   flight instead of queueing behind one batch's records, handled one after
 *   another.
 * - Deduplication: a message whose deduplication id was sent within the
 *   last 5 minutes is accepted and dropped (dedup-window.ts).
 * - Partial batch responses: the handler gets an `SQSEvent` (and a context
 *   whose remaining time runs out with the visibility timeout, as a Lambda's
 *   with its timeout) and answers like
 *   a Lambda with `ReportBatchItemFailures` (no answer: all done; a throw or
 *   an unknown item identifier: the whole batch failed). A batch holds at most
 *   one message per group, so a failed record holds back its own group only:
 *   the group's later messages are not out, and the other records of the
 *   batch are done or failed on their own. (A Lambda batch may hold several
 *   messages of a group; the compactor's handler fails a failed record alone
 *   there too, docs/architecture.md §2.)
 * - Optional journal: every change is appended to it (file-journal.ts:
 *   append-only, group commits, compacted when it grows), a send before
 *   `enqueue` resolves, so a process killed at any moment restarts with
 *   every message it had not deleted; messages that were out are visible
 *   again at once (their consumer died with the process).
 */
import { randomUUID } from "node:crypto";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { QueueError } from "../errors.ts";
import { type Clock, type EvaluationMessage, systemClock, type TurnQueue } from "../ports.ts";
import { DEDUPLICATION_WINDOW_MS, DeduplicationWindow } from "./dedup-window.ts";
import type { DeadLetter, JournalChange, QueuedMessage, QueueJournal } from "./file-journal.ts";
import { failedRecordIds, sqsRecord } from "./lambda-event.ts";
import { encodeMessageBody, messageDeduplicationId, messageGroupId } from "./message.ts";

/**
 * What a batch handler is told about its invocation, as a Lambda context
 * tells it: the milliseconds left before the batch's messages become visible
 * again (the visibility timeout, by the queue's clock), after which another
 * delivery may start. The compactor's handler derives its per-record
 * deadlines from it.
 */
export interface BatchContext {
  getRemainingTimeInMillis(): number;
}

/** A batch handler with Lambda's partial batch response contract. */
export type QueueBatchHandler = (
  event: SQSEvent,
  context: BatchContext,
) => Promise<SQSBatchResponse | undefined>;

export interface InProcessQueueOptions {
  /** How long a received message stays hidden (default 30 s). */
  readonly visibilityTimeoutMs?: number;
  /** Receives after which a message that is still not done is dead-lettered (default 5). */
  readonly maxReceiveCount?: number;
  /** Messages per batch (default 10, as a Lambda FIFO event source). */
  readonly batchSize?: number;
  /** Batches handled at the same time (default 1). */
  readonly concurrency?: number;
  /** Deduplication window (default 5 minutes, as SQS FIFO). */
  readonly deduplicationWindowMs?: number;
  readonly journal?: QueueJournal;
  readonly clock?: Clock;
  /** Queue name used in the records' `eventSourceARN`. */
  readonly name?: string;
  /** Called with errors nobody awaits: journal appends of the consumer loop, handler throws. */
  readonly onError?: (error: QueueError) => void;
  /** Called when a message is moved to the dead-letter list. */
  readonly onDeadLetter?: (message: DeadLetter) => void;
}

/** What `send` did with a message. */
export type SendResult =
  | { readonly duplicate: false; readonly messageId: string }
  | { readonly duplicate: true };

/** Counts of messages not yet deleted or dead-lettered. */
export interface PendingCounts {
  /** Receivable now, or waiting behind an earlier message of their group. */
  readonly visible: number;
  /** Received and hidden (being handled, or failed and waiting for the visibility timeout). */
  readonly inFlight: number;
}

/** SQS's rules for `MessageGroupId` and `MessageDeduplicationId`. */
const FIFO_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

interface Slot {
  readonly id: string;
  readonly body: string;
  readonly group: string;
  readonly dedup: string;
  readonly sequence: number;
  readonly sentAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  /** Hidden until this time; 0 when never received or restored from the journal. */
  visibleAt: number;
  /** The receipt of the latest receive; only it can delete the message. */
  receipt: string | undefined;
}

interface Delivery {
  readonly slot: Slot;
  readonly receipt: string;
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

const defaultOnError = (error: QueueError) => {
  console.error(`[in-process queue] ${error.message}`);
};

export class InProcessQueue implements TurnQueue {
  readonly #visibilityTimeoutMs: number;
  readonly #maxReceiveCount: number;
  readonly #batchSize: number;
  readonly #concurrency: number;
  readonly #journal: QueueJournal | undefined;
  readonly #clock: Clock;
  readonly #arn: string;
  readonly #onError: (error: QueueError) => void;
  readonly #onDeadLetter: ((message: DeadLetter) => void) | undefined;

  /** Pending messages in sending order. */
  readonly #messages = new Map<string, Slot>();
  readonly #dead: DeadLetter[] = [];
  readonly #dedup: DeduplicationWindow;
  #nextSequence = 1;

  readonly #loaded: Promise<void>;
  #loadError: unknown;

  /** Settles once every append made so far has (the journal writes them in order). */
  #saving: Promise<void> = Promise.resolve();

  #running = false;
  #loop: Promise<void> | undefined;
  readonly #active = new Set<Promise<void>>();
  #wakePending = false;
  #wakeUp: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #drainWaiters: Waiter[] = [];

  constructor(options: InProcessQueueOptions = {}) {
    this.#visibilityTimeoutMs = positive(
      options.visibilityTimeoutMs ?? 30_000,
      "visibilityTimeoutMs",
    );
    this.#maxReceiveCount = positiveInteger(options.maxReceiveCount ?? 5, "maxReceiveCount");
    this.#batchSize = positiveInteger(options.batchSize ?? 10, "batchSize");
    this.#concurrency = positiveInteger(options.concurrency ?? 1, "concurrency");
    this.#dedup = new DeduplicationWindow(options.deduplicationWindowMs ?? DEDUPLICATION_WINDOW_MS);
    this.#journal = options.journal;
    this.#clock = options.clock ?? systemClock;
    this.#arn = `arn:aws:sqs:local:000000000000:${options.name ?? "autocompact-evaluations.fifo"}`;
    this.#onError = options.onError ?? defaultOnError;
    this.#onDeadLetter = options.onDeadLetter;
    this.#loaded = this.#load().catch((error: unknown) => {
      this.#loadError = error;
    });
  }

  /** Resolves once the journal is loaded; rejects when it cannot be. */
  async ready(): Promise<void> {
    await this.#loaded;
    if (this.#loadError !== undefined) {
      throw new QueueError("could not load the queue journal", { cause: this.#loadError });
    }
  }

  /** Sends an evaluation message: group per conversation, deduplicated per turn. */
  async enqueue(message: EvaluationMessage): Promise<void> {
    await this.send(encodeMessageBody(message), {
      groupId: messageGroupId(message),
      deduplicationId: messageDeduplicationId(message),
    });
  }

  /** Sends any body (tests use it for malformed messages). Resolves once the journal has it. */
  async send(
    body: string,
    // `delayMs`: hidden until then, as SQS's `DelaySeconds` (the idle timers, functions/queue/idle-timers.ts).
    options: {
      readonly groupId: string;
      readonly deduplicationId: string;
      readonly delayMs?: number;
    },
  ): Promise<SendResult> {
    for (const [what, value] of [
      ["group id", options.groupId],
      ["deduplication id", options.deduplicationId],
    ] as const) {
      if (!FIFO_ID.test(value)) {
        throw new QueueError(
          `invalid message ${what} ${JSON.stringify(value)}: 1 to 128 letters, digits or punctuation`,
        );
      }
    }
    await this.ready();
    const now = this.#clock.nowMillis();
    if (this.#dedup.seen(options.deduplicationId, now)) return { duplicate: true };
    const slot = this.#push(body, options.groupId, options.deduplicationId, now);
    if (options.delayMs) slot.visibleAt = now + options.delayMs;
    const until = this.#dedup.record(slot.dedup, now);
    try {
      await this.#append([{ op: "send", message: toQueued(slot) }]);
    } catch (error) {
      // Not durable: let a retry through (the message may already be out,
      // so it stays; a duplicate delivery is within at-least-once).
      this.#dedup.withdraw(slot.dedup, until);
      throw new QueueError("could not save the message to the queue journal", { cause: error });
    }
    return { duplicate: false, messageId: slot.id };
  }

  /**
   * Starts the consumer loop: receives batches and hands them to `handler`,
   * up to `concurrency` batches at a time, until {@link stop}.
   */
  start(handler: QueueBatchHandler): void {
    if (this.#running) throw new QueueError("the queue consumer is already running");
    this.#running = true;
    this.#loop = this.#run(handler);
  }

  /**
   * Stops receiving, waits for the batches being handled and the journal.
   * Messages not done stay pending (and in the journal). A pending
   * {@link drain} rejects.
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake();
    await this.#loop;
    this.#loop = undefined;
    await Promise.allSettled([...this.#active]);
    await this.#saving;
    this.#clearTimer();
    this.#checkDrained();
  }

  /**
   * Resolves when every message is deleted or dead-lettered and no batch is
   * being handled. Rejects when the consumer is not running (or stops) with
   * messages pending, rather than waiting forever.
   */
  async drain(): Promise<void> {
    await this.ready();
    while (!this.#isDrained()) {
      if (!this.#running) throw this.#notDrainingError();
      await new Promise<void>((resolve, reject) => this.#drainWaiters.push({ resolve, reject }));
    }
    await this.#saving;
  }

  /** How many messages are pending. */
  pending(): PendingCounts {
    const now = this.#clock.nowMillis();
    let inFlight = 0;
    for (const slot of this.#messages.values()) if (slot.visibleAt > now) inFlight++;
    return { visible: this.#messages.size - inFlight, inFlight };
  }

  /** The dead-letter list, oldest first. */
  deadLetters(): DeadLetter[] {
    return this.#dead.map((message) => ({ ...message }));
  }

  /**
   * Moves every dead letter back, oldest first, as SQS's redrive: new messages (receive
   * count 0, same group) after those waiting. Resolves with how many, once journaled.
   */
  async redrive(): Promise<number> {
    await this.ready();
    const moved = this.#dead.splice(0);
    const now = this.#clock.nowMillis();
    const changes = moved.flatMap((dead): JournalChange[] => [
      { op: "delete", id: dead.id },
      {
        op: "send",
        message: toQueued(this.#push(dead.body, dead.group_id, dead.deduplication_id, now)),
      },
    ]);
    if (changes.length > 0) await this.#append(changes);
    return moved.length;
  }

  /** Adds a new message at the end of the queue and wakes the consumer. */
  #push(body: string, group: string, dedup: string, now: number): Slot {
    const slot: Slot = {
      ...{ id: randomUUID(), body, group, dedup, sequence: this.#nextSequence++, sentAt: now },
      ...{ receiveCount: 0, firstReceivedAt: undefined, visibleAt: 0, receipt: undefined },
    };
    this.#messages.set(slot.id, slot);
    this.#wake();
    return slot;
  }

  // -- consumer -------------------------------------------------------------

  async #run(handler: QueueBatchHandler): Promise<void> {
    try {
      await this.ready();
    } catch (error) {
      this.#onError(error as QueueError);
      this.#running = false;
      this.#checkDrained();
      return;
    }
    while (this.#running) {
      this.#wakePending = false;
      // One reading of the clock per pass, shared by #receive and #idle (see #idle).
      const now = this.#clock.nowMillis();
      const free = this.#concurrency - this.#active.size;
      if (free > 0) {
        const changes: JournalChange[] = [];
        const heads = this.#heads(now, free * this.#batchSize, changes);
        // The ready groups shared evenly among the free pollers, at most batchSize each.
        const size = Math.min(this.#batchSize, Math.ceil(heads.length / free));
        for (let i = 0; i < heads.length && this.#running; i += size) {
          const batch = heads.slice(i, i + size);
          this.#dispatch(
            handler,
            batch.map((slot) => this.#receive(slot, now, changes)),
          );
        }
        if (changes.length > 0) this.#appendQuietly(changes);
      }
      this.#checkDrained();
      await this.#idle(now);
    }
  }

  /**
   * The oldest visible message of each group not out, in sending order, at
   * most `limit`; a message received `maxReceiveCount` times on the way is
   * dead-lettered (and its group's next message may be the head).
   */
  #heads(now: number, limit: number, changes: JournalChange[]): Slot[] {
    const heads: Slot[] = [];
    const blocked = new Set<string>();
    for (const slot of this.#messages.values()) {
      if (heads.length >= limit) break;
      if (blocked.has(slot.group)) continue;
      if (slot.visibleAt > now) {
        blocked.add(slot.group);
        continue;
      }
      if (slot.receiveCount >= this.#maxReceiveCount) {
        this.#deadLetter(slot, now);
        changes.push({ op: "dead_letter", id: slot.id, dead_lettered_at: now });
        continue;
      }
      blocked.add(slot.group);
      heads.push(slot);
    }
    return heads;
  }

  /** Receives a message: hidden for the visibility timeout, under a new receipt. */
  #receive(slot: Slot, now: number, changes: JournalChange[]): Delivery {
    slot.receiveCount++;
    slot.firstReceivedAt ??= now;
    slot.visibleAt = now + this.#visibilityTimeoutMs;
    slot.receipt = randomUUID();
    changes.push({
      op: "receive",
      id: slot.id,
      receive_count: slot.receiveCount,
      first_received_at: slot.firstReceivedAt,
    });
    return { slot, receipt: slot.receipt };
  }

  #dispatch(handler: QueueBatchHandler, deliveries: readonly Delivery[]): void {
    const records = deliveries.map(({ slot, receipt }) =>
      sqsRecord({ ...slot, receipt }, this.#arn),
    );
    const visibleAt = Math.min(...deliveries.map(({ slot }) => slot.visibleAt));
    const context: BatchContext = {
      getRemainingTimeInMillis: () => Math.max(0, visibleAt - this.#clock.nowMillis()),
    };
    const invocation = (async () => {
      const failed = await this.#invoke(handler, records, context);
      const deleted: JournalChange[] = [];
      for (const { slot, receipt } of deliveries) {
        if (failed.has(slot.id)) continue;
        // A receipt from before the message was received again deletes nothing.
        if (this.#messages.get(slot.id)?.receipt === receipt) {
          this.#messages.delete(slot.id);
          deleted.push({ op: "delete", id: slot.id });
        }
      }
      if (deleted.length > 0) this.#appendQuietly(deleted);
    })();
    this.#active.add(invocation);
    void invocation.finally(() => {
      this.#active.delete(invocation);
      this.#wake();
      this.#checkDrained();
    });
  }

  /** Calls the handler; returns the ids of the messages that are not done. */
  async #invoke(
    handler: QueueBatchHandler,
    records: readonly SQSRecord[],
    context: BatchContext,
  ): Promise<Set<string>> {
    const all = new Set(records.map((record) => record.messageId));
    let response: unknown;
    try {
      response = await handler({ Records: [...records] }, context);
    } catch (error) {
      this.#onError(
        new QueueError(`the batch handler threw; all ${records.length} messages will be retried`, {
          cause: error,
        }),
      );
      return all;
    }
    const failed = failedRecordIds(response, all);
    if (!failed) {
      this.#onError(
        new QueueError(
          `the batch handler answered ${JSON.stringify(response)}: not a partial batch response for this batch, so the whole batch is retried`,
        ),
      );
      return all;
    }
    return failed;
  }

  #deadLetter(slot: Slot, now: number): void {
    this.#messages.delete(slot.id);
    const dead: DeadLetter = { ...toQueued(slot), dead_lettered_at: now };
    this.#dead.push(dead);
    try {
      this.#onDeadLetter?.({ ...dead });
    } catch (error) {
      this.#onError(new QueueError("the dead-letter callback threw", { cause: error }));
    }
  }

  /**
   * Waits until something happens or the next hidden message becomes visible.
   *
   * `receivedAt` is the time the pass received at. Every message hidden then
   * gets a timer, even one that has become visible since (the clock moved on
   * between the two: a slow pass, a process descheduled under load, or a
   * timer that fired a millisecond early by `Date.now()`, which Node's
   * monotonic timers do). Picking them by a fresh reading instead left such a
   * message with no timer and the loop asleep for good, `drain` with it.
   */
  #idle(receivedAt: number): Promise<void> {
    if (this.#wakePending || !this.#running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#wakeUp = resolve;
      let next = Number.POSITIVE_INFINITY;
      for (const slot of this.#messages.values()) {
        if (slot.visibleAt > receivedAt && slot.visibleAt < next) next = slot.visibleAt;
      }
      if (next !== Number.POSITIVE_INFINITY) {
        const delay = Math.max(0, next - this.#clock.nowMillis());
        this.#timer = setTimeout(() => this.#wake(), delay);
      }
    });
  }

  #wake(): void {
    this.#wakePending = true;
    this.#clearTimer();
    const wakeUp = this.#wakeUp;
    this.#wakeUp = undefined;
    wakeUp?.();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #isDrained(): boolean {
    return this.#messages.size === 0 && this.#active.size === 0;
  }

  #notDrainingError(): QueueError {
    return new QueueError(
      `the queue consumer is not running and ${this.#messages.size} message(s) are pending`,
    );
  }

  #checkDrained(): void {
    if (this.#drainWaiters.length === 0) return;
    const drained = this.#isDrained();
    if (!drained && this.#running) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    const error = drained ? undefined : this.#notDrainingError();
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }

  // -- journal --------------------------------------------------------------

  async #load(): Promise<void> {
    if (!this.#journal) return;
    const saved = [...(await this.#journal.load())].sort((a, b) => a.sequence - b.sequence);
    const now = this.#clock.nowMillis();
    for (const message of saved) {
      this.#nextSequence = Math.max(this.#nextSequence, message.sequence + 1);
      this.#dedup.record(message.deduplication_id, message.sent_at, now);
      if (message.dead_lettered_at !== undefined) {
        this.#dead.push({ ...message, dead_lettered_at: message.dead_lettered_at });
        continue;
      }
      this.#messages.set(message.id, {
        id: message.id,
        body: message.body,
        group: message.group_id,
        dedup: message.deduplication_id,
        sequence: message.sequence,
        sentAt: message.sent_at,
        receiveCount: message.receive_count,
        firstReceivedAt: message.first_received_at,
        // A delay survives a restart; a message that was out is visible again at once.
        visibleAt: message.receive_count === 0 ? (message.visible_at ?? 0) : 0,
        receipt: undefined,
      });
    }
  }

  /**
   * Appends changes to the journal, called in the same step as the changes
   * themselves so the journal has them in their order.
   */
  #append(changes: readonly JournalChange[]): Promise<void> {
    const journal = this.#journal;
    if (!journal) return Promise.resolve();
    const appended = journal.append(changes);
    this.#saving = appended.catch(() => undefined);
    return appended;
  }

  #appendQuietly(changes: readonly JournalChange[]): void {
    this.#append(changes).catch((error: unknown) => {
      this.#onError(new QueueError("could not save the queue journal", { cause: error }));
    });
  }
}

function toQueued(slot: Slot): QueuedMessage {
  return {
    id: slot.id,
    body: slot.body,
    group_id: slot.group,
    deduplication_id: slot.dedup,
    sequence: slot.sequence,
    sent_at: slot.sentAt,
    receive_count: slot.receiveCount,
    ...(slot.firstReceivedAt === undefined ? {} : { first_received_at: slot.firstReceivedAt }),
    ...(slot.receiveCount === 0 && slot.visibleAt > 0 ? { visible_at: slot.visibleAt } : {}),
  };
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a positive number of milliseconds (got ${value})`);
  }
  return value;
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a whole number of at least 1 (got ${value})`);
  }
  return value;
}
