/**
 * The last turn this instance appended to each recent conversation: its size
 * and running totals, and the life (incarnation) it was written in. The next
 * turn's totals chain from them, so a platform posting turn after turn to one
 * API instance appends each in one round trip instead of reading the size
 * record before it first (the webhook's p50, docs/architecture.md §13).
 *
 * Nothing here is trusted on its own: the append that uses an entry is
 * conditional on the head still counting exactly the turns up to it and still
 * being the life the entry names. Within one life a stored turn never
 * changes (its TURN item is written once, if absent), so those two conditions
 * make the entry the stored record; a delete and a new life under the same
 * id fail the condition, and the append is decided from a read instead.
 */
import type { TotaledSize } from "../../core/sizes.ts";
import type { ConversationRef } from "../ports.ts";

/** Conversations remembered at most per instance (the least recently written makes room). */
export const LAST_TURNS_MAX = 1_000;

/** A turn appended by this instance, in the life it was appended to. */
export interface LastTurn extends TotaledSize {
  readonly turn: number;
  readonly incarnation: string;
}

/**
 * A bounded per-instance memory of {@link LastTurn}s (see the module comment).
 *
 * @example
 * const last = new LastTurns();
 * last.remember(ref, { turn: 4, size, totals, incarnation });
 * last.before(ref, 5); // the entry: turn 5 chains from it
 * last.before(ref, 6); // undefined: turn 5 was not appended here
 */
export class LastTurns {
  /** In insertion order, which is the order of the last write. */
  readonly #turns = new Map<string, LastTurn>();
  readonly #max: number;

  constructor(max = LAST_TURNS_MAX) {
    this.#max = max;
  }

  /** The turn just before `turn`, when this instance appended it. */
  before(ref: ConversationRef, turn: number): LastTurn | undefined {
    const last = this.#turns.get(keyOf(ref));
    return last?.turn === turn - 1 ? last : undefined;
  }

  /** Keeps `last` as the conversation's latest turn. */
  remember(ref: ConversationRef, last: LastTurn): void {
    const key = keyOf(ref);
    this.#turns.delete(key);
    this.#turns.set(key, last);
    for (const oldest of this.#turns.keys()) {
      if (this.#turns.size <= this.#max) break;
      this.#turns.delete(oldest);
    }
  }

  /** Forgets the conversation (an append built on it failed its condition). */
  forget(ref: ConversationRef): void {
    this.#turns.delete(keyOf(ref));
  }
}

const keyOf = (ref: ConversationRef) => JSON.stringify([ref.tenant, ref.conversation]);
