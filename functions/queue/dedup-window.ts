/**
 * The deduplication window of the in-process queue, as SQS FIFO keeps one: a
 * message whose deduplication id was sent within the last 5 minutes (the
 * default) is accepted and dropped, whether the first message is still queued,
 * deleted or dead-lettered. The window runs from the first send, and a
 * dropped duplicate does not extend it.
 */

/** SQS FIFO's deduplication interval. */
export const DEDUPLICATION_WINDOW_MS = 5 * 60_000;

/** Deduplication ids sent recently, and until when each one drops a duplicate. */
export class DeduplicationWindow {
  readonly #windowMs: number;
  /** Deduplication id → when it may be sent again. */
  readonly #until = new Map<string, number>();

  constructor(windowMs: number = DEDUPLICATION_WINDOW_MS) {
    this.#windowMs = windowMs;
  }

  /** True when `id` was sent less than the window before `now`; forgets the ids that expired. */
  seen(id: string, now: number): boolean {
    for (const [sent, until] of this.#until) if (until <= now) this.#until.delete(sent);
    return this.#until.has(id);
  }

  /**
   * Records `id` as sent at `sentAt` (when the window is not over by `now`:
   * a message restored from the journal); returns the end of its window, which
   * {@link withdraw} takes.
   */
  record(id: string, sentAt: number, now: number = sentAt): number {
    const until = sentAt + this.#windowMs;
    if (until > now) this.#until.set(id, until);
    return until;
  }

  /** Forgets `id` if its window is still the one that ended at `until` (a send that did not stick). */
  withdraw(id: string, until: number): void {
    if (this.#until.get(id) === until) this.#until.delete(id);
  }
}
