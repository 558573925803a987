/**
 * The conditions a write puts on a conversation's head, stated once as data
 * (clauses comparing head fields with values) that both stores read: the
 * memory store and the DynamoDB store's pre-check evaluate them on a head
 * they hold ({@link headConflict}), the DynamoDB store renders them into a
 * ConditionExpression (dynamodb-expressions.ts `condition`), and the memory
 * store's conflict messages come from the same clauses ({@link describeHead});
 * DynamoDB answers a failed condition without the head, so its messages say
 * what the write expected.
 *
 * Every condition also requires a live head: one with `deleting` set (a
 * delete under way) fails it. A field the head lacks holds its value in
 * {@link EMPTY_HEAD}; `latest_event_ms` absent (no event stored yet) meets
 * any bound. A conversation with no head either counts as the empty head (a
 * turn append) or fails the condition (every other conditional write).
 */
import {
  type AppendCondition,
  type ConversationHead,
  EMPTY_HEAD,
  HEAD_COUNTERS,
  type HeadCounters,
  type HeadVersion,
} from "../ports.ts";

/** Why every conditional write on a tombstone fails. */
export const BEING_DELETED = "the conversation is being deleted";

/** The head fields a condition compares. */
export type ConditionField = keyof HeadCounters | "latest_event_ms";

/** One clause of a head condition: `head[field] comparison value`. */
export interface HeadClause {
  readonly field: ConditionField;
  readonly comparison: "=" | "<" | "<=";
  readonly value: number;
}

/** A head condition: every clause holds, on a live head (of one life, when it names one). */
export interface HeadCondition {
  readonly clauses: readonly HeadClause[];
  /** How a conversation without a head fares: as {@link EMPTY_HEAD}, or failing. */
  readonly missingHead: "as-empty" | "fails";
  /** When set, the head's `incarnation` must be this: the write's decision was made on that life. */
  readonly incarnation?: string;
}

/** What each field holds on a head that lacks it. */
const ABSENT: Readonly<Record<ConditionField, number>> = {
  turn_count: EMPTY_HEAD.turn_count,
  projected_chars: EMPTY_HEAD.projected_chars,
  max_compacted_turn: EMPTY_HEAD.max_compacted_turn,
  compactions_version: EMPTY_HEAD.compactions_version,
  evaluated_through: EMPTY_HEAD.evaluated_through,
  latest_event_ms: Number.NEGATIVE_INFINITY,
};

const COMPARISONS: Readonly<Record<HeadClause["comparison"], (a: number, b: number) => boolean>> = {
  "=": (a, b) => a === b,
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
};

/** True when a head lacking the clause's field meets the clause. */
export function holdsWhenAbsent(clause: HeadClause): boolean {
  return COMPARISONS[clause.comparison](ABSENT[clause.field], clause.value);
}

/**
 * The condition of appending turn `turn`: `turn_count` is still `turn`, and
 * either the compactions are the ones the caller read, or no compaction
 * covers the new turn (and, with `latest_event_ms`, no stored event is
 * later than the turn's; with `incarnation`, the head is still that life).
 * A missing head counts as the empty one.
 */
export function appendHeadCondition(turn: number, condition: AppendCondition): HeadCondition {
  if (!("uncompacted" in condition)) {
    return {
      clauses: versionClauses({
        turn_count: turn,
        compactions_version: condition.compactions_version,
      }),
      missingHead: "as-empty",
    };
  }
  const clauses: HeadClause[] = [
    { field: "turn_count", comparison: "=", value: turn },
    { field: "max_compacted_turn", comparison: "<", value: turn },
  ];
  if (condition.latest_event_ms !== undefined) {
    clauses.push({ field: "latest_event_ms", comparison: "<=", value: condition.latest_event_ms });
  }
  const { incarnation } = condition;
  return {
    clauses,
    missingHead: "as-empty",
    ...(incarnation === undefined ? {} : { incarnation }),
  };
}

/**
 * The condition of adding or removing compactions: the head is still at
 * `expected`, and still the life it names (a band decided on a deleted
 * conversation never lands on the one created under its id since, even at
 * the same numbers).
 */
export function compactionHeadCondition(expected: HeadVersion): HeadCondition {
  const { incarnation } = expected;
  return {
    clauses: versionClauses(expected),
    missingHead: "fails",
    ...(incarnation === undefined ? {} : { incarnation }),
  };
}

/** The condition of a verify repair: the head still holds exactly the `expected` counters. */
export function repairHeadCondition(expected: HeadCounters): HeadCondition {
  return {
    clauses: HEAD_COUNTERS.map((field) => ({ field, comparison: "=", value: expected[field] })),
    missingHead: "fails",
  };
}

function versionClauses(expected: HeadVersion): HeadClause[] {
  return [
    { field: "turn_count", comparison: "=", value: expected.turn_count },
    { field: "compactions_version", comparison: "=", value: expected.compactions_version },
  ];
}

/** True when `head` (`undefined`: the conversation has none) meets `condition`. */
export function headMeets(condition: HeadCondition, head: ConversationHead | undefined): boolean {
  if (head === undefined) {
    if (condition.missingHead === "fails") return false;
    head = EMPTY_HEAD;
  }
  if (head.deleting) return false;
  if (condition.incarnation !== undefined && head.incarnation !== condition.incarnation) {
    return false;
  }
  return condition.clauses.every((clause) =>
    COMPARISONS[clause.comparison](head[clause.field] ?? ABSENT[clause.field], clause.value),
  );
}

/**
 * What `head` holds of the fields `condition` compares, and what it
 * expects: the message of the ConditionFailedError a failed write throws
 * (`head` undefined: the conversation has no head).
 */
export function describeHead(condition: HeadCondition, head: ConversationHead | undefined): string {
  const life = condition.incarnation;
  const expected = [
    ...condition.clauses.map((clause) => `${clause.field} ${clause.comparison} ${clause.value}`),
    ...(life === undefined ? [] : [`incarnation = ${life}`]),
  ].join(", ");
  if (head === undefined) return `no conversation head; expected ${expected}`;
  if (head.deleting) return `${BEING_DELETED}; expected ${expected}`;
  const fields = [...new Set(condition.clauses.map((clause) => clause.field))];
  const actual = [
    ...fields.map((field) => `${field} ${head[field] ?? "absent"}`),
    ...(life === undefined ? [] : [`incarnation ${head.incarnation ?? "absent"}`]),
  ].join(", ");
  return `head is at ${actual}; expected ${expected}`;
}

/** Why `head` fails `condition` ({@link describeHead}), or `undefined` when it meets it. */
export function headConflict(
  condition: HeadCondition,
  head: ConversationHead | undefined,
): string | undefined {
  return headMeets(condition, head) ? undefined : describeHead(condition, head);
}
