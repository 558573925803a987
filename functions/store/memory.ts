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
  type ConversationPage,
  type ConversationRef,
  type ConversationStore,
  EMPTY_HEAD,
  type EvaluationDecision,
  type EvaluationFailure,
  type EvaluationMeasures,
  HEAD_COUNTERS,
  type HeadCounters,
  type HeadUpdate,
  type HeadVersion,
  type StoredCompaction,
  type StoredTurn,
  type TurnEvaluation,
  type TurnSizeRecord,
} from "../ports.ts";
import { decodeListCursor, encodeListCursor } from "./list-cursor.ts";

interface Conversation {
  readonly ref: ConversationRef;
  head: ConversationHead;
  turns: StoredTurn[];
  compactions: Map<string, StoredCompaction>;
  /** What the evaluation after each turn recorded, by turn (the TURN item's `evaluation`). */
  evaluations: Map<number, TurnEvaluation>;
  /** When it was last active (the list index's sort key). */
  activeAt: number;
}

/** Options of a {@link MemoryConversationStore}. */
export interface MemoryStoreOptions {
  /** The time of activity the list orders by (default `Date.now`). */
  readonly now?: () => number;
}

const copy = <T>(value: T): T => structuredClone(value);

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders compactions as they sit in the stream. */
export function byStreamOrder(a: StoredCompaction, b: StoredCompaction): number {
  return a.after_turn - b.after_turn || a.seq - b.seq;
}

export class MemoryConversationStore implements ConversationStore {
  readonly #conversations = new Map<string, Conversation>();
  /** Last failures, by conversation key: beside the conversation, as the FAILURE item is. */
  readonly #failures = new Map<string, EvaluationFailure>();
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

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
      conversation = {
        ref: { tenant: ref.tenant, conversation: ref.conversation },
        head: { ...EMPTY_HEAD },
        turns: [],
        compactions: new Map(),
        evaluations: new Map(),
        activeAt: this.#now(),
      };
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
    conversation.activeAt = this.#now();
  }

  async getTurn(ref: ConversationRef, turn: number): Promise<StoredTurn | undefined> {
    const stored = this.#get(ref)?.turns[turn];
    return stored ? copy(stored) : undefined;
  }

  async listTurnSizes(ref: ConversationRef): Promise<TurnSizeRecord[]> {
    const conversation = this.#get(ref);
    return (conversation?.turns ?? []).map(({ events: _events, ...summary }) => {
      const evaluation = conversation?.evaluations.get(summary.turn);
      return copy(evaluation ? { ...summary, evaluation } : summary);
    });
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
    evaluation?: TurnEvaluation,
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
    if (evaluation) conversation.evaluations.set(evaluation.turn, copy(evaluation));
    conversation.activeAt = this.#now();
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
    conversation.activeAt = this.#now();
  }

  async putConfig(ref: ConversationRef, config: AutoConfigLayer): Promise<void> {
    this.#checkLive(this.#get(ref)?.head ?? EMPTY_HEAD);
    const conversation = this.#getOrCreate(ref);
    conversation.head = { ...conversation.head, config: copy(config) };
    conversation.activeAt = this.#now();
  }

  async markEvaluated(
    ref: ConversationRef,
    turn: number,
    decision?: EvaluationDecision,
    measures?: EvaluationMeasures,
  ): Promise<void> {
    const conversation = this.#get(ref);
    if (!conversation || conversation.head.deleting) return;
    if (conversation.head.evaluated_through >= turn) return;
    conversation.head = {
      ...conversation.head,
      evaluated_through: turn,
      ...(decision ? { decided_through: decision.turn, last_decision: copy(decision) } : {}),
    };
    if (decision && measures && conversation.turns[decision.turn]) {
      conversation.evaluations.set(decision.turn, copy({ ...decision, ...measures }));
    }
  }

  async listConversations(
    tenant: string,
    page: { readonly limit: number; readonly cursor?: string },
  ): Promise<ConversationPage> {
    const after = page.cursor === undefined ? undefined : decodeListCursor(page.cursor);
    // The index's order: latest activity first, then by id (DynamoDB's tie order is its own).
    const listed = [...this.#conversations.values()]
      .filter((c) => c.ref.tenant === tenant && !c.head.deleting)
      .sort((a, b) => b.activeAt - a.activeAt || compareIds(a.ref.conversation, b.ref.conversation))
      .filter(
        (c) =>
          after === undefined ||
          c.activeAt < after.active_at ||
          (c.activeAt === after.active_at &&
            compareIds(c.ref.conversation, after.conversation) > 0),
      );
    const conversations = listed.slice(0, page.limit);
    const last = conversations.at(-1);
    return {
      conversations: conversations.map(({ ref, head }) => ({
        conversation: ref.conversation,
        turn_count: head.turn_count,
        projected_chars: head.projected_chars,
        ...(head.model ? { model: copy(head.model) } : {}),
        ...(head.bands ? { bands: copy(head.bands) } : {}),
        ...(head.last_fired_at ? { last_fired_at: head.last_fired_at } : {}),
      })),
      ...(last && listed.length > page.limit
        ? {
            next_cursor: encodeListCursor({
              active_at: last.activeAt,
              conversation: last.ref.conversation,
            }),
          }
        : {}),
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
