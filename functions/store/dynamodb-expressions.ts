/**
 * The UpdateExpression builder of the DynamoDB conversation store: SET and
 * REMOVE clauses and the head conditions, sharing one set of placeholder
 * maps. Every head write goes through it, so the head's defaults and its
 * optimistic-concurrency conditions (stated in head-condition.ts) are
 * written the same way everywhere.
 */
import { type AttributeValue, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { EMPTY_HEAD, type HeadUpdate } from "../ports.ts";
import { attr } from "./dynamodb-items.ts";
import { HEAD_SK } from "./dynamodb-keys.ts";
import { type HeadCondition, holdsWhenAbsent } from "./head-condition.ts";
import { newIncarnation } from "./incarnation.ts";

/** The head fields a {@link HeadUpdate} may set. */
const HEAD_UPDATE_FIELDS = [
  "evaluated_through",
  "projected_chars",
  "max_compacted_turn",
  "config",
  "stream_config",
  "model",
  "removing",
  "latest_event_ms",
  "decided_through",
  "last_decision",
  "bands",
  "last_fired_at",
  "latest_band_at",
  "calibration",
] as const satisfies readonly (keyof HeadUpdate)[];

/** Builds an UpdateExpression with its condition, sharing the placeholder maps. */
export class UpdateExpressionBuilder {
  readonly #sets: string[] = [];
  readonly #removes: string[] = [];
  /** `ExpressionAttributeNames` of the update and of any condition built with it. */
  readonly names: Record<string, string> = {};
  /** `ExpressionAttributeValues` of the update and of any condition built with it. */
  readonly values: Record<string, AttributeValue> = {};
  #n = 0;

  /** The `#field` placeholder of an attribute name (names like `size` are reserved words). */
  name(field: string): string {
    const placeholder = `#${field}`;
    this.names[placeholder] = field;
    return placeholder;
  }

  /** A fresh `:vN` placeholder for `value`. */
  value(value: unknown): string {
    const placeholder = `:v${this.#n++}`;
    this.values[placeholder] = attr(value);
    return placeholder;
  }

  /** SET, or REMOVE when the value is `undefined`. */
  set(field: string, value: unknown): this {
    if (value === undefined) this.#removes.push(this.name(field));
    else this.#sets.push(`${this.name(field)} = ${this.value(value)}`);
    return this;
  }

  /** SET only when the attribute is absent: `field = if_not_exists(field, :v)`. */
  setIfAbsent(field: string, value: unknown): this {
    const name = this.name(field);
    this.#sets.push(`${name} = if_not_exists(${name}, ${this.value(value)})`);
    return this;
  }

  /** SETs the fields a {@link HeadUpdate} carries, except `skip` (`removing: []` REMOVEs it). */
  head(update: HeadUpdate, skip: readonly string[] = []): this {
    for (const field of HEAD_UPDATE_FIELDS) {
      if (!Object.hasOwn(update, field) || skip.includes(field)) continue;
      const value = update[field];
      this.set(field, Array.isArray(value) && value.length === 0 ? undefined : value);
    }
    return this;
  }

  /**
   * Fills the head fields no SET above touches with their defaults (the
   * empty head's, ports.ts `EMPTY_HEAD`), if absent: the write that creates a head (a first turn, a config) leaves a
   * complete one behind, so conditions can compare numbers that exist.
   * A fresh `incarnation` too, kept if the head has one: the head's life.
   */
  defaults(): this {
    for (const [field, value] of Object.entries(EMPTY_HEAD)) {
      if (!(`#${field}` in this.names)) this.setIfAbsent(field, value);
    }
    return this.setIfAbsent("incarnation", newIncarnation());
  }

  /** `field = if_not_exists(field, 0) + :delta` */
  increment(field: string, delta: number): this {
    const name = this.name(field);
    this.#sets.push(`${name} = if_not_exists(${name}, ${this.value(0)}) + ${this.value(delta)}`);
    return this;
  }

  /**
   * SETs the list index's keys (table-definition.ts `listIndex`): the
   * conversation is `tenant`'s, active at `nowMs`.
   */
  active(listPk: string, nowMs: number): this {
    return this.set("list_pk", listPk).set("active_at", nowMs);
  }

  /** `attribute_not_exists(deleting)`: the head is not a tombstone (no delete is under way). */
  live(): string {
    return `attribute_not_exists(${this.name("deleting")})`;
  }

  /**
   * The ConditionExpression of a head condition (head-condition.ts): every
   * clause, a clause that a missing attribute meets also when the attribute
   * is missing, on a live head; and the head must exist unless a missing one
   * counts as empty; the head's `incarnation` must be the one the condition names, if any.
   */
  condition(condition: HeadCondition): string {
    const clauses = condition.clauses.map((clause) => {
      const name = this.name(clause.field);
      const test = `${name} ${clause.comparison} ${this.value(clause.value)}`;
      return holdsWhenAbsent(clause) ? `(attribute_not_exists(${name}) OR ${test})` : test;
    });
    const exists = condition.missingHead === "fails" ? ["attribute_exists(pk)"] : [];
    const life = condition.incarnation;
    if (life !== undefined) clauses.push(`${this.name("incarnation")} = ${this.value(life)}`);
    return [...exists, ...clauses, this.live()].join(" AND ");
  }

  /** The UpdateExpression: its SET clause, then its REMOVE clause. */
  get expression(): string {
    const parts: string[] = [];
    if (this.#sets.length > 0) parts.push(`SET ${this.#sets.join(", ")}`);
    if (this.#removes.length > 0) parts.push(`REMOVE ${this.#removes.join(", ")}`);
    return parts.join(" ");
  }

  /** The single-item write of a conversation's HEAD (partition `pk`) with this update, on `condition`. */
  headCommand(table: string, pk: string, condition: string): UpdateItemCommand {
    return new UpdateItemCommand({
      TableName: table,
      Key: { pk: { S: pk }, sk: { S: HEAD_SK } },
      UpdateExpression: this.expression,
      ConditionExpression: condition,
      ExpressionAttributeNames: this.names,
      ExpressionAttributeValues: this.values,
    });
  }
}
