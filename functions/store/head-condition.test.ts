import { describe, expect, it } from "vitest";
import { type ConversationHead, EMPTY_HEAD } from "../ports.ts";
import { UpdateExpressionBuilder } from "./dynamodb-expressions.ts";
import {
  appendHeadCondition,
  BEING_DELETED,
  compactionHeadCondition,
  describeHead,
  headConflict,
  headMeets,
  holdsWhenAbsent,
  repairHeadCondition,
} from "./head-condition.ts";

const head = (fields: Partial<ConversationHead> = {}): ConversationHead => ({
  ...EMPTY_HEAD,
  ...fields,
});

describe("head conditions", () => {
  it("count a missing head as the empty one for an append, and as failing otherwise", () => {
    const first = appendHeadCondition(0, { compactions_version: 0 });
    expect(headMeets(first, undefined)).toBe(true);
    expect(
      headMeets(appendHeadCondition(0, { uncompacted: true, add_projected_chars: 3 }), undefined),
    ).toBe(true);
    expect(headConflict(appendHeadCondition(1, { compactions_version: 0 }), undefined)).toBe(
      "no conversation head; expected turn_count = 1, compactions_version = 0",
    );
    expect(
      headMeets(compactionHeadCondition({ turn_count: 0, compactions_version: 0 }), undefined),
    ).toBe(false);
    expect(headMeets(repairHeadCondition(EMPTY_HEAD), undefined)).toBe(false);
    expect(headMeets(repairHeadCondition(EMPTY_HEAD), head())).toBe(true);
  });

  it("fail on a tombstone, whatever the fields", () => {
    const condition = compactionHeadCondition({ turn_count: 0, compactions_version: 0 });
    expect(headMeets(condition, head())).toBe(true);
    expect(headConflict(condition, head({ deleting: true }))).toBe(
      `${BEING_DELETED}; expected turn_count = 0, compactions_version = 0`,
    );
  });

  it("append uncompacted while no compaction covers the turn and no stored event is later", () => {
    const condition = appendHeadCondition(3, {
      uncompacted: true,
      add_projected_chars: 10,
      latest_event_ms: 1_000,
    });
    expect(headMeets(condition, head({ turn_count: 3, max_compacted_turn: 2 }))).toBe(true);
    expect(headMeets(condition, head({ turn_count: 3, latest_event_ms: 1_000 }))).toBe(true);
    expect(headConflict(condition, head({ turn_count: 3, max_compacted_turn: 3 }))).toBe(
      "head is at turn_count 3, max_compacted_turn 3, latest_event_ms absent; expected turn_count = 3, max_compacted_turn < 3, latest_event_ms <= 1000",
    );
    expect(headMeets(condition, head({ turn_count: 3, latest_event_ms: 1_001 }))).toBe(false);
    expect(headMeets(condition, head({ turn_count: 2 }))).toBe(false);
  });

  it("append on a version only at that version and turn count", () => {
    const condition = appendHeadCondition(2, { compactions_version: 1 });
    expect(headMeets(condition, head({ turn_count: 2, compactions_version: 1 }))).toBe(true);
    expect(describeHead(condition, head({ turn_count: 2 }))).toBe(
      "head is at turn_count 2, compactions_version 0; expected turn_count = 2, compactions_version = 1",
    );
  });

  it("render into a ConditionExpression that lets a missing attribute meet what its default meets", () => {
    const uncompacted = appendHeadCondition(0, {
      uncompacted: true,
      add_projected_chars: 1,
      latest_event_ms: 5,
    });
    expect(uncompacted.clauses.map(holdsWhenAbsent)).toEqual([true, true, true]);
    expect(new UpdateExpressionBuilder().condition(uncompacted)).toBe(
      "(attribute_not_exists(#turn_count) OR #turn_count = :v0) AND (attribute_not_exists(#max_compacted_turn) OR #max_compacted_turn < :v1) AND (attribute_not_exists(#latest_event_ms) OR #latest_event_ms <= :v2) AND attribute_not_exists(#deleting)",
    );
    const update = new UpdateExpressionBuilder();
    expect(
      update.condition(compactionHeadCondition({ turn_count: 4, compactions_version: 0 })),
    ).toBe(
      "attribute_exists(pk) AND #turn_count = :v0 AND (attribute_not_exists(#compactions_version) OR #compactions_version = :v1) AND attribute_not_exists(#deleting)",
    );
    expect(update.values).toEqual({ ":v0": { N: "4" }, ":v1": { N: "0" } });
  });

  it("hold a compaction to the life it was decided on, when the caller names it", () => {
    const version = { turn_count: 4, compactions_version: 0 };
    const condition = compactionHeadCondition({ ...version, incarnation: "life-1" });
    expect(headMeets(condition, head({ ...version, incarnation: "life-1" }))).toBe(true);
    expect(headConflict(condition, head({ ...version, incarnation: "life-2" }))).toBe(
      "head is at turn_count 4, compactions_version 0, incarnation life-2; expected turn_count = 4, compactions_version = 0, incarnation = life-1",
    );
    expect(headMeets(condition, head(version))).toBe(false);
    // Without a life named (a head from before incarnations), the numbers alone decide.
    expect(
      headMeets(compactionHeadCondition(version), head({ ...version, incarnation: "x" })),
    ).toBe(true);
    const update = new UpdateExpressionBuilder();
    expect(update.condition(condition)).toBe(
      "attribute_exists(pk) AND #turn_count = :v0 AND (attribute_not_exists(#compactions_version) OR #compactions_version = :v1) AND #incarnation = :v2 AND attribute_not_exists(#deleting)",
    );
    expect(update.values[":v2"]).toEqual({ S: "life-1" });
  });
});
