import { describe, expect, it } from "vitest";
import {
  at,
  compaction,
  configDelta,
  message,
  messageTurns,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
  twoTurnStream,
} from "../../test/helpers/builders.ts";
import type { Entry } from "../events.ts";
import { project, SUMMARY_REQUEST_CONTENT } from "../projection.ts";
import { projectedView, rawView, type ViewTurn } from "./view.ts";

/** A turn of untouched events. */
const plain = (...events: Entry[]): ViewTurn => ({
  events: events.map((event) => ({ event, rewritten: false })) as ViewTurn["events"],
  reasoningStripped: false,
  summary: false,
});

const strip = { policy: "strip", request: true, response: true } as const;

describe("rawView", () => {
  it("is empty for an empty stream and for a stream of metadata alone", () => {
    expect(rawView([])).toEqual([]);
    expect(
      rawView([configDelta({ model: "m" }), compaction(0, 0, 1, { reasoning: "strip" })]),
    ).toEqual([]);
  });

  it("groups the provider events by turn, nothing rewritten, stripped or summarized", () => {
    const raw = twoTurnStream();
    expect(rawView(raw)).toEqual([
      plain(raw[1] as Entry, raw[2] as Entry, raw[3] as Entry, raw[4] as Entry, raw[5] as Entry),
      plain(raw[7] as Entry, raw[8] as Entry, raw[9] as Entry, raw[10] as Entry, raw[11] as Entry),
    ]);
  });

  it("keeps the stored events themselves, in stream order", () => {
    const raw = messageTurns(1);
    const [turn] = rawView(raw);
    expect(turn?.events[0]?.event).toBe(raw[1]);
    expect(turn?.events[1]?.event).toBe(raw[2]);
  });

  it("leaves out turn starts, config deltas, inquiries, unknown entries and compactions", () => {
    const q0 = request("q0");
    const m0 = message("m0");
    const q1 = request("q1", 1);
    const raw: Entry[] = [
      turnStart(0),
      configDelta({ model: "m" }),
      q0,
      { type: "inquiry_request", timestamp: at(0) },
      { type: "future_entry", timestamp: at(0), payload: 1 },
      m0,
      { type: "inquiry_response", timestamp: at(0) },
      turnStart(1),
      q1,
      compaction(0, 1, 2, { reasoning: "strip", tool_calls: strip }),
    ];
    expect(rawView(raw)).toEqual([plain(q0, m0), plain(q1)]);
  });

  it("ignores compactions: a summarized or stripped turn stays as stored", () => {
    const raw = [
      ...twoTurnStream(),
      compaction(0, 1, 7200, { summary: { summary: "s" }, reasoning: "strip", tool_calls: strip }),
    ];
    expect(rawView(raw)).toEqual(rawView(twoTurnStream()));
    expect(rawView(raw).map((turn) => turn.events.length)).toEqual([5, 5]);
  });

  it("keeps a turn without provider events as an empty turn", () => {
    const q1 = request("q1", 1);
    const inquiry: Entry = { type: "inquiry_request", timestamp: at(2) };
    expect(rawView([turnStart(0), turnStart(1), q1, turnStart(2), inquiry])).toEqual([
      plain(),
      plain(q1),
      plain(),
    ]);
  });

  it("puts events before the first turn start in an implicit turn 0", () => {
    const q0 = request("q0");
    const m0 = message("m0");
    const q1 = request("q1", 1);
    expect(rawView([q0, m0, turnStart(1), q1])).toEqual([plain(q0, m0), plain(q1)]);
  });
});

describe("projectedView", () => {
  it("is the raw view when nothing is compacted", () => {
    const raw = twoTurnStream();
    expect(projectedView(raw)).toEqual(rawView(raw));
    expect(projectedView([])).toEqual([]);
  });

  it("marks the reasoning-stripped turns only, their events untouched", () => {
    const raw: Entry[] = [...twoTurnStream(), compaction(1, 1, 7200, { reasoning: "strip" })];
    expect(projectedView(raw)).toEqual([
      plain(raw[1] as Entry, raw[2] as Entry, raw[3] as Entry, raw[4] as Entry, raw[5] as Entry),
      {
        ...plain(raw[7] as Entry, raw[9] as Entry, raw[10] as Entry, raw[11] as Entry),
        reasoningStripped: true,
      },
    ]);
  });

  it("marks a reasoning strip even on a turn that had no reasoning", () => {
    const raw = [...messageTurns(2), compaction(0, 0, 10, { reasoning: "strip" })];
    const view = projectedView(raw);
    expect(view.map((turn) => turn.reasoningStripped)).toEqual([true, false]);
    expect(view.map((turn) => turn.summary)).toEqual([false, false]);
  });

  it("does not count a tool-call strip as a reasoning strip", () => {
    const raw = [...twoTurnStream(), compaction(0, 1, 7200, { tool_calls: strip })];
    expect(projectedView(raw).map((turn) => turn.reasoningStripped)).toEqual([false, false]);
  });

  it("marks stripped tool requests and responses rewritten, and nothing else", () => {
    const raw: Entry[] = [...twoTurnStream(), compaction(0, 0, 7200, { tool_calls: strip })];
    const [first, second] = projectedView(raw);
    expect(first).toEqual({
      events: [
        { event: raw[1], rewritten: false },
        { event: raw[2], rewritten: false },
        { event: { ...(raw[3] as Entry), arguments: {} }, rewritten: true },
        {
          event: { ...(raw[4] as Entry), content: "[compacted] fs_create_file: success" },
          rewritten: true,
        },
        { event: raw[5], rewritten: false },
      ],
      reasoningStripped: false,
      summary: false,
    });
    expect(second).toEqual(
      plain(raw[7] as Entry, raw[8] as Entry, raw[9] as Entry, raw[10] as Entry, raw[11] as Entry),
    );
    // The untouched events are the stored objects themselves.
    expect(first?.events[0]?.event).toBe(raw[1]);
    expect(first?.events[4]?.event).toBe(raw[5]);
  });

  it("leaves a request untouched when only responses are stripped", () => {
    const raw: Entry[] = [
      ...twoTurnStream(),
      compaction(1, 1, 7200, { tool_calls: { policy: "strip", request: false, response: true } }),
    ];
    const second = projectedView(raw)[1];
    expect(second?.events.map((viewEvent) => viewEvent.rewritten)).toEqual([
      false,
      false,
      false,
      true,
      false,
    ]);
    expect(second?.events[2]?.event).toBe(raw[9]);
  });

  it("drops omitted tool calls without marking the rest", () => {
    const raw: Entry[] = [
      ...twoTurnStream(),
      compaction(0, 0, 7200, { tool_calls: { policy: "omit" } }),
    ];
    expect(projectedView(raw)[0]).toEqual(plain(raw[1] as Entry, raw[2] as Entry, raw[5] as Entry));
  });

  it("makes a summarized run one summary turn of two rewritten events", () => {
    const raw: Entry[] = [
      ...messageTurns(3),
      compaction(0, 1, 10, { summary: { summary: "the gist" }, reasoning: "strip" }),
    ];
    expect(projectedView(raw)).toEqual([
      {
        events: [
          {
            event: { type: "chat_request", timestamp: at(0), content: SUMMARY_REQUEST_CONTENT },
            rewritten: true,
          },
          {
            event: { type: "chat_response", timestamp: at(0), message: "the gist" },
            rewritten: true,
          },
        ],
        // The summary turn is no raw turn: its reasoning is not "stripped".
        reasoningStripped: false,
        summary: true,
      },
      plain(raw[7] as Entry, raw[8] as Entry),
    ]);
  });

  it("finds the raw turn of each kept turn after a summary", () => {
    const raw: Entry[] = [
      ...messageTurns(5),
      compaction(1, 2, 10, { summary: { summary: "s" } }),
      compaction(3, 3, 11, { reasoning: "strip" }),
    ];
    const view = projectedView(raw);
    expect(view.map((turn) => [turn.summary, turn.reasoningStripped])).toEqual([
      [false, false],
      [true, false],
      [false, true],
      [false, false],
    ]);
    expect(view[2]).toEqual({
      ...plain(raw[10] as Entry, raw[11] as Entry),
      reasoningStripped: true,
    });
    expect(view[3]).toEqual(plain(raw[13] as Entry, raw[14] as Entry));
  });

  it("keeps an explicit turn that loses every provider event as an empty turn", () => {
    const call = toolCall("c", "t", {}, 0);
    const result = toolResult("c", "r", false, 0);
    const q1 = request("q1", 1);
    const raw: Entry[] = [
      turnStart(0),
      call,
      result,
      reasoning("hm"),
      turnStart(1),
      q1,
      compaction(0, 0, 5, { tool_calls: { policy: "omit" }, reasoning: "strip" }),
    ];
    expect(projectedView(raw)).toEqual([{ ...plain(), reasoningStripped: true }, plain(q1)]);
  });

  it("drops an implicit turn 0 that loses every event, and maps later turns to their raw turns", () => {
    const q1 = request("q1", 1);
    const m1 = message("m1", 1);
    const q2 = request("q2", 2);
    const raw: Entry[] = [
      toolCall("c", "t", {}, 0),
      toolResult("c", "r", false, 0),
      reasoning("hm"),
      turnStart(1),
      q1,
      m1,
      turnStart(2),
      q2,
      // Turn 0 loses everything; turn 1 alone is reasoning-stripped.
      compaction(0, 0, 5, { tool_calls: { policy: "omit" }, reasoning: "strip" }),
      compaction(1, 1, 6, { reasoning: "strip" }),
    ];
    const projection = project(raw);
    expect(projection.turns).toEqual([{ kept: 0 }, { kept: 1 }, { kept: 2 }]);
    expect(projectedView(raw)).toEqual([{ ...plain(q1, m1), reasoningStripped: true }, plain(q2)]);
  });

  it("maps a summary after a vanished implicit turn 0", () => {
    const raw: Entry[] = [
      reasoning("hm"),
      turnStart(1),
      request("q1", 1),
      turnStart(2),
      request("q2", 2),
      compaction(0, 0, 5, { reasoning: "strip" }),
      compaction(1, 1, 6, { summary: { summary: "s" } }),
    ];
    const view = projectedView(raw);
    expect(view.map((turn) => [turn.summary, turn.reasoningStripped])).toEqual([
      [true, false],
      [false, false],
    ]);
    expect(view[1]).toEqual(plain(raw[4] as Entry));
  });

  it("takes the projection when the caller has it", () => {
    const raw: Entry[] = [...twoTurnStream(), compaction(0, 0, 7200, { tool_calls: strip })];
    const projection = project(raw);
    const view = projectedView(raw, projection);
    expect(view).toEqual(projectedView(raw));
    // Events come from the given projection.
    expect(view[0]?.events[2]?.event).toBe(projection.entries[3]);
  });
});
