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
  type IdempotencyClaim,
  type IdempotentAnswer,
  type LifeRef,
  type MaterializedBand,
  type StoredCompaction,
  type StoredTurn,
  type TurnEvaluation,
  type TurnSizeRecord,
} from "../ports.ts";
import { decodeListCursor, encodeListCursor, listedConversation } from "./conversation-list.ts";
import {
  appendHeadCondition,
  BEING_DELETED,
  compactionHeadCondition,
  describeHead,
  type HeadCondition,
  headConflict,
  repairHeadCondition,
} from "./head-condition.ts";
import { MemoryIdempotencyKeys } from "./idempotency-memory.ts";
import { newIncarnation } from "./incarnation.ts";
import { byStreamOrder } from "./stream-order.ts";

interface Conversation {
  readonly ref: ConversationRef;
  head: ConversationHead;
  turns: StoredTurn[];
  compactions: Map<string, StoredCompaction>;
  /** The bands' materialized forms, by band key (the MAT# items). */
  materialized: Map<string, MaterializedBand>;
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

export class MemoryConversationStore implements ConversationStore {
  readonly #conversations = new Map<string, Conversation>();
  /** Last failures, by conversation key: beside the conversation, as the FAILURE item is. */
  readonly #failures = new Map<string, EvaluationFailure>();
  /** `Idempotency-Key` records, by conversation key: in the partition, as the IDEM# items are. */
  readonly #idempotency = new MemoryIdempotencyKeys();
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
        head: { ...EMPTY_HEAD, incarnation: newIncarnation() },
        turns: [],
        compactions: new Map(),
        materialized: new Map(),
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
    const stored = this.#get(ref)?.head;
    const conflict = headConflict(appendHeadCondition(turn.turn, condition), stored);
    if (conflict !== undefined) throw new ConditionFailedError(conflict);
    if ("uncompacted" in condition) {
      const projected = (stored ?? EMPTY_HEAD).projected_chars + condition.add_projected_chars;
      head = { ...head, projected_chars: projected };
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

  /** The size records of the turns `wanted` says (all of them without it). */
  #sizeRecords(ref: ConversationRef, wanted?: ReadonlySet<number>): TurnSizeRecord[] {
    const conversation = this.#get(ref);
    return (conversation?.turns ?? [])
      .filter((turn) => wanted === undefined || wanted.has(turn.turn))
      .map(({ events: _events, ...summary }) => {
        const evaluation = conversation?.evaluations.get(summary.turn);
        return copy(evaluation ? { ...summary, evaluation } : summary);
      });
  }

  async listTurnSizes(ref: ConversationRef): Promise<TurnSizeRecord[]> {
    return this.#sizeRecords(ref);
  }

  async getTurnSizes(ref: ConversationRef, turns: readonly number[]): Promise<TurnSizeRecord[]> {
    return this.#sizeRecords(ref, new Set(turns));
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

  /** The conversation, if its head meets `condition`; else {@link ConditionFailedError}. */
  #meeting(ref: ConversationRef, condition: HeadCondition): Conversation {
    const conversation = this.#get(ref);
    const conflict = headConflict(condition, conversation?.head);
    if (conflict !== undefined || !conversation) {
      throw new ConditionFailedError(conflict ?? describeHead(condition, undefined));
    }
    return conversation;
  }

  async addCompaction(
    ...[ref, compaction, expected, head, evaluation, materialized]: Parameters<
      ConversationStore["addCompaction"]
    >
  ): Promise<void> {
    if (this.#get(ref)?.compactions.has(compaction.key)) {
      throw new ConditionFailedError(`compaction ${compaction.key} exists`);
    }
    const conversation = this.#meeting(ref, compactionHeadCondition(expected));
    conversation.compactions.set(compaction.key, copy(compaction));
    conversation.head = {
      ...conversation.head,
      ...copy(head),
      compactions_version: expected.compactions_version + 1,
    };
    if (evaluation) conversation.evaluations.set(evaluation.turn, copy(evaluation));
    if (materialized) conversation.materialized.set(compaction.key, copy(materialized));
    conversation.activeAt = this.#now();
  }

  async addMaterialized(
    ref: ConversationRef,
    seq: number,
    form: MaterializedBand,
  ): Promise<boolean> {
    const conversation = this.#get(ref);
    if (!conversation || conversation.compactions.get(form.key)?.seq !== seq) return false;
    conversation.materialized.set(form.key, copy(form));
    return true;
  }

  async listMaterialized(ref: ConversationRef): Promise<MaterializedBand[]> {
    const forms = [...(this.#get(ref)?.materialized.values() ?? [])];
    return copy(forms.sort((a, b) => a.from_turn - b.from_turn));
  }

  async removeCompactions(
    ref: ConversationRef,
    keys: readonly string[],
    expected: HeadVersion,
    head: HeadUpdate,
  ): Promise<void> {
    const conversation = this.#meeting(ref, compactionHeadCondition(expected));
    for (const key of keys) {
      conversation.compactions.delete(key);
      conversation.materialized.delete(key);
    }
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
    if (this.#get(ref)?.head.deleting) throw new ConditionFailedError(BEING_DELETED);
    const conversation = this.#getOrCreate(ref);
    conversation.head = { ...conversation.head, config: copy(config) };
    conversation.activeAt = this.#now();
  }

  async markEvaluated(
    ref: LifeRef,
    turn: number,
    decision?: EvaluationDecision,
    measures?: EvaluationMeasures,
  ): Promise<void> {
    const conversation = this.#get(ref);
    if (!conversation || conversation.head.deleting) return;
    if (ref.incarnation !== undefined && conversation.head.incarnation !== ref.incarnation) return;
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
      conversations: conversations.map(({ ref, head }) =>
        copy(listedConversation(ref.conversation, head)),
      ),
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
    const conversation = this.#meeting(ref, repairHeadCondition(expected));
    const repaired = Object.fromEntries(HEAD_COUNTERS.map((field) => [field, counters[field]]));
    conversation.head = { ...conversation.head, ...repaired };
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
      this.#idempotency.forget(this.#key(ref));
    }
  }

  async recordFailure(ref: ConversationRef, failure: EvaluationFailure): Promise<void> {
    this.#failures.set(this.#key(ref), copy(failure));
  }

  async lastFailure(ref: ConversationRef): Promise<EvaluationFailure | undefined> {
    const failure = this.#failures.get(this.#key(ref));
    return failure && copy(failure);
  }

  async claimIdempotencyKey(
    ref: ConversationRef,
    key: string,
    digest: string,
    nowSeconds: number,
    expiresAtSeconds: number,
  ): Promise<IdempotencyClaim> {
    return this.#idempotency.claim(this.#key(ref), key, digest, nowSeconds, expiresAtSeconds);
  }

  async finishIdempotencyKey(
    ref: ConversationRef,
    key: string,
    digest: string,
    answer: IdempotentAnswer,
    expiresAtSeconds: number,
  ): Promise<void> {
    this.#idempotency.finish(this.#key(ref), key, digest, answer, expiresAtSeconds);
  }

  async releaseIdempotencyKey(ref: ConversationRef, key: string, digest: string): Promise<void> {
    this.#idempotency.release(this.#key(ref), key, digest);
  }
}
