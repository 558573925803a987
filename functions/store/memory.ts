/**
 * An in-memory {@link ConversationStore} with the same conditional semantics
 * as the DynamoDB adapter: the fake the unit tests run on, held to the same
 * contract suite. Values are deep-copied in and out so callers can never
 * mutate stored state.
 */

import type { AutoConfigLayer } from "../../core/config.ts";
import { ConditionFailedError } from "../errors.ts";
import {
  type AppendCondition,
  type ConversationHead,
  type ConversationRef,
  type ConversationStore,
  EMPTY_HEAD,
  type EvaluationDecision,
  type EvaluationFailure,
  HEAD_COUNTERS,
  type HeadCounters,
  type HeadUpdate,
  type HeadVersion,
  type StoredCompaction,
  type StoredTurn,
  type TurnSizeRecord,
} from "../ports.ts";

interface Conversation {
  head: ConversationHead;
  turns: StoredTurn[];
  compactions: Map<string, StoredCompaction>;
}

const copy = <T>(value: T): T => structuredClone(value);

/** Orders compactions as they sit in the stream. */
export function byStreamOrder(a: StoredCompaction, b: StoredCompaction): number {
  return a.after_turn - b.after_turn || a.seq - b.seq;
}

export class MemoryConversationStore implements ConversationStore {
  readonly #conversations = new Map<string, Conversation>();
  /** Last failures, by conversation key: beside the conversation, as the FAILURE item is. */
  readonly #failures = new Map<string, EvaluationFailure>();

  #key(ref: ConversationRef): string {
    return JSON.stringify([ref.tenant, ref.conversation]);
  }

  #get(ref: ConversationRef): Conversation | undefined {
    return this.#conversations.get(this.#key(ref));
  }

  #getOrCreate(ref: ConversationRef): Conversation {
    const key = this.#key(ref);
    let conversation = this.#conversations.get(key);
    if (!conversation) {
      conversation = { head: { ...EMPTY_HEAD }, turns: [], compactions: new Map() };
      this.#conversations.set(key, conversation);
    }
    return conversation;
  }

  async getHead(ref: ConversationRef): Promise<ConversationHead | undefined> {
    const conversation = this.#get(ref);
    return conversation ? copy(conversation.head) : undefined;
  }

  async appendTurn(
    ref: ConversationRef,
    turn: StoredTurn,
    condition: AppendCondition,
    head: HeadUpdate,
  ): Promise<void> {
    const current = this.#get(ref)?.head ?? EMPTY_HEAD;
    this.#checkLive(current);
    if ("uncompacted" in condition) {
      if (current.turn_count !== turn.turn || current.max_compacted_turn >= turn.turn) {
        throw new ConditionFailedError(
          `head is at turn_count ${current.turn_count}, max_compacted_turn ${current.max_compacted_turn}; expected turn_count ${turn.turn} and no compaction covering it`,
        );
      }
      const latest = condition.latest_event_ms;
      if (latest !== undefined && (current.latest_event_ms ?? -Infinity) > latest) {
        throw new ConditionFailedError(
          `head has an event at ${current.latest_event_ms} ms, later than this turn's ${latest} ms`,
        );
      }
      head = { ...head, projected_chars: current.projected_chars + condition.add_projected_chars };
    } else {
      this.#check(current, {
        turn_count: turn.turn,
        compactions_version: condition.compactions_version,
      });
    }
    const conversation = this.#getOrCreate(ref);
    conversation.turns.push(copy(turn));
    conversation.head = { ...conversation.head, ...copy(head), turn_count: turn.turn + 1 };
  }

  async getTurn(ref: ConversationRef, turn: number): Promise<StoredTurn | undefined> {
    const stored = this.#get(ref)?.turns[turn];
    return stored ? copy(stored) : undefined;
  }

  async listTurnSizes(ref: ConversationRef): Promise<TurnSizeRecord[]> {
    return (this.#get(ref)?.turns ?? []).map(({ events: _events, ...summary }) => copy(summary));
  }

  async readTurns(
    ref: ConversationRef,
    from = 0,
    to = Number.MAX_SAFE_INTEGER,
  ): Promise<StoredTurn[]> {
    return copy((this.#get(ref)?.turns ?? []).filter((t) => t.turn >= from && t.turn <= to));
  }

  async listCompactions(ref: ConversationRef): Promise<StoredCompaction[]> {
    return copy([...(this.#get(ref)?.compactions.values() ?? [])].sort(byStreamOrder));
  }

  /** A tombstone fails every write's condition. */
  #checkLive(head: ConversationHead): void {
    if (head.deleting) throw new ConditionFailedError("the conversation is being deleted");
  }

  #check(head: ConversationHead, expected: HeadVersion): void {
    this.#checkLive(head);
    if (
      head.turn_count !== expected.turn_count ||
      head.compactions_version !== expected.compactions_version
    ) {
      throw new ConditionFailedError(
        `head is at turn_count ${head.turn_count}, compactions_version ${head.compactions_version}; expected ${expected.turn_count}, ${expected.compactions_version}`,
      );
    }
  }

  async addCompaction(
    ref: ConversationRef,
    compaction: StoredCompaction,
    expected: HeadVersion,
    head: HeadUpdate,
  ): Promise<void> {
    const conversation = this.#get(ref);
    if (!conversation) throw new ConditionFailedError("no such conversation");
    if (conversation.compactions.has(compaction.key)) {
      throw new ConditionFailedError(`compaction ${compaction.key} exists`);
    }
    this.#check(conversation.head, expected);
    conversation.compactions.set(compaction.key, copy(compaction));
    conversation.head = {
      ...conversation.head,
      ...copy(head),
      compactions_version: expected.compactions_version + 1,
    };
  }

  async removeCompactions(
    ref: ConversationRef,
    keys: readonly string[],
    expected: HeadVersion,
    head: HeadUpdate,
  ): Promise<void> {
    const conversation = this.#get(ref);
    if (!conversation) throw new ConditionFailedError("no such conversation");
    this.#check(conversation.head, expected);
    for (const key of keys) conversation.compactions.delete(key);
    const { removing, ...rest } = {
      ...conversation.head,
      ...copy(head),
      compactions_version: expected.compactions_version + 1,
    };
    // `removing: []` clears the reset the head records (ports.ts).
    conversation.head = removing?.length ? { ...rest, removing } : rest;
  }

  async putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void> {
    this.#checkLive(this.#get(ref)?.head ?? EMPTY_HEAD);
    const conversation = this.#getOrCreate(ref);
    conversation.head = { ...conversation.head, config: copy(config) };
  }

  async markEvaluated(
    ref: ConversationRef,
    turn: number,
    decision?: EvaluationDecision,
  ): Promise<void> {
    const conversation = this.#get(ref);
    if (!conversation || conversation.head.deleting) return;
    if (conversation.head.evaluated_through >= turn) return;
    conversation.head = {
      ...conversation.head,
      evaluated_through: turn,
      ...(decision ? { decided_through: decision.turn, last_decision: copy(decision) } : {}),
    };
  }

  async repairHead(
    ref: ConversationRef,
    expected: HeadCounters,
    counters: HeadCounters,
  ): Promise<void> {
    const conversation = this.#get(ref);
    if (!conversation) throw new ConditionFailedError("no such conversation");
    this.#checkLive(conversation.head);
    const head = conversation.head;
    const changed = HEAD_COUNTERS.filter((field) => head[field] !== expected[field]);
    if (changed.length > 0) {
      throw new ConditionFailedError(`head changed since it was read (${changed.join(", ")})`);
    }
    const repaired = Object.fromEntries(HEAD_COUNTERS.map((field) => [field, counters[field]]));
    conversation.head = { ...head, ...repaired };
  }

  async beginDelete(ref: ConversationRef): Promise<boolean> {
    const conversation = this.#get(ref);
    if (!conversation) return false;
    conversation.head = {
      ...conversation.head,
      deleting: true,
      compactions_version: conversation.head.compactions_version + 1,
    };
    return true;
  }

  async finishDelete(ref: ConversationRef): Promise<void> {
    // One step here: nothing runs between removing the items and the head.
    if (this.#get(ref)?.head.deleting) {
      this.#conversations.delete(this.#key(ref));
      this.#failures.delete(this.#key(ref));
    }
  }

  async recordFailure(ref: ConversationRef, failure: EvaluationFailure): Promise<void> {
    this.#failures.set(this.#key(ref), copy(failure));
  }

  async lastFailure(ref: ConversationRef): Promise<EvaluationFailure | undefined> {
    const failure = this.#failures.get(this.#key(ref));
    return failure && copy(failure);
  }
}
