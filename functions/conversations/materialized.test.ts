import { describe, expect, it } from "vitest";
import { storedTurn } from "../../test/contract/conversation-store.contract.ts";
import { compaction, message, request, turnStart } from "../../test/helpers/builders.ts";
import type { MaterializedBand, StoredCompaction } from "../ports.ts";
import { holds, materializedDrift } from "./materialized.ts";

const turns = [0, 1, 2].map((t) =>
  storedTurn(t, [turnStart(t), request(`q${t}`, t), message(`m${t}`, t)]),
);
const band: StoredCompaction = {
  key: "AUTO#000002",
  after_turn: 2,
  seq: 1,
  compaction: compaction(0, 1, 9, { source: "auto", summary: { summary: "s" } }),
};
// Summarized turns keep only their opening event.
const form: MaterializedBand = {
  key: band.key,
  from_turn: 0,
  to_turn: 1,
  covering: ["AUTO#000002@1"],
  turns: [[turnStart(0)], [turnStart(1)]],
};

describe("materialized forms", () => {
  it("hold while exactly the compactions they were built under cover their turns", () => {
    expect(holds(form, [band])).toBe(true);
    expect(holds(form, [])).toBe(false);
    expect(holds(form, [{ ...band, seq: 2 }])).toBe(false);
    const over = { ...band, key: "MAN#2", seq: 2, compaction: compaction(1, 2, 10, {}) };
    expect(holds(form, [band, over])).toBe(false);
    const beside = { ...over, compaction: compaction(2, 2, 10, {}) };
    expect(holds(form, [band, beside])).toBe(true);
  });

  it("drift in verify when a holding form differs from its recomputation", () => {
    expect(materializedDrift([form], [band], turns)).toEqual([]);
    const altered = { ...form, turns: [[turnStart(0)], [turnStart(1), message("x", 1)]] };
    const stored = JSON.stringify(altered.turns).length;
    expect(materializedDrift([altered], [band], turns)).toEqual([
      { field: "materialized[AUTO#000002]", stored, expected: JSON.stringify(form.turns).length },
    ]);
    // A form that no longer holds is not read, so not checked.
    expect(materializedDrift([altered], [], turns)).toEqual([]);
  });
});
