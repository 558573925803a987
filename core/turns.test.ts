import { describe, expect, it } from "vitest";
import { at, configDelta, message, request, turnStart } from "../test/helpers/builders.ts";
import type { Entry } from "./events.ts";
import { indexTurns, splitTurns, turnCount } from "./turns.ts";

describe("turn indexing", () => {
  it("numbers turns from their turn_start", () => {
    const stream = [
      turnStart(),
      request("a"),
      turnStart(),
      request("b"),
      turnStart(),
      request("c"),
    ];
    expect(Array.from(indexTurns(stream).turnOf)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(turnCount(stream)).toBe(3);
  });

  it("forms an implicit turn 0 from events before the first turn_start", () => {
    expect(Array.from(indexTurns([request("a"), turnStart(), request("b")]).turnOf)).toEqual([
      0, 1, 1,
    ]);
  });

  it("forms an implicit turn 0 from an inquiry alone", () => {
    const inquiry: Entry = { type: "inquiry_request", timestamp: at(0), id: "q" };
    const answer: Entry = { type: "inquiry_response", timestamp: at(0), id: "q" };
    expect(Array.from(indexTurns([inquiry, turnStart(), request("b")]).turnOf)).toEqual([0, 1, 1]);
    expect(turnCount([answer])).toBe(1);
    expect(turnCount([answer, turnStart(), request("b")])).toBe(2);
  });

  it("does not let metadata open or fill a turn", () => {
    const stream = [
      configDelta({}),
      turnStart(),
      request("a"),
      message("b"),
      configDelta({}),
      turnStart(),
      request("c"),
    ];
    expect(Array.from(indexTurns(stream).turnOf)).toEqual([0, 0, 0, 0, 0, 1, 1]);
  });

  it("counts a turn holding only a turn_start", () => {
    expect(turnCount([turnStart(), turnStart()])).toBe(2);
  });

  it("counts no turn in an empty stream or one with only metadata", () => {
    expect(turnCount([])).toBe(0);
    expect(turnCount([configDelta({})])).toBe(0);
    expect(turnCount([request("only")])).toBe(1);
  });
});

describe("splitTurns", () => {
  it("groups entries by turn, keeping metadata with the turn it sits in", () => {
    const delta = configDelta({});
    expect(splitTurns([request("a"), delta, turnStart(), request("b")])).toEqual([
      [request("a"), delta],
      [turnStart(), request("b")],
    ]);
    expect(splitTurns([delta])).toEqual([]);
  });
});
