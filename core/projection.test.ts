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
  visible,
} from "../test/helpers/builders.ts";
import type { ChatResponse, Entry, ToolCallRequest, ToolCallResponse } from "./events.ts";
import {
  keepsCarried,
  keepsPending,
  project,
  projectWithSources,
  strippedResponseContent,
  toolNameFor,
  toolNamesById,
  toolRoles,
} from "./projection.ts";
import { indexTurns } from "./turns.ts";

const strip = { policy: "strip", request: true, response: true } as const;
const messagesOf = (entries: readonly Entry[]) =>
  entries
    .filter(
      (e): e is ChatResponse =>
        e.type === "chat_response" && "message" in e && e.message !== undefined,
    )
    .map((e) => e.message);
const toolRequests = (entries: readonly Entry[]) =>
  entries.filter((e): e is ToolCallRequest => e.type === "tool_call_request");
const toolResponses = (entries: readonly Entry[]) =>
  entries.filter((e): e is ToolCallResponse => e.type === "tool_call_response");

describe("project without compactions", () => {
  it("returns the stream unchanged with kept origins", () => {
    const stream = twoTurnStream();
    const { entries, turns } = project(stream);
    expect(entries).toEqual(stream);
    expect(turns).toEqual([{ kept: 0 }, { kept: 1 }]);
  });

  it("returns a view of its own, never the stream it was given", () => {
    const stream = twoTurnStream();
    const { entries } = project(stream);
    entries.pop();
    expect(stream).toEqual(twoTurnStream());
  });

  it("keeps an empty stream empty", () => {
    expect(project([])).toEqual({ entries: [], turns: [] });
  });
});

describe("mechanical policies", () => {
  it("strips reasoning only", () => {
    const { entries, turns } = project([
      ...twoTurnStream(),
      compaction(0, 1, 7200, { reasoning: "strip" }),
    ]);
    expect(
      entries.some(
        (e) => e.type === "chat_response" && "reasoning" in e && e.reasoning !== undefined,
      ),
    ).toBe(false);
    expect(messagesOf(entries)).toEqual(["Created src/main.rs.", "Added error handling."]);
    expect(toolRequests(entries)).toHaveLength(2);
    expect(turns).toEqual([{ kept: 0 }, { kept: 1 }]);
  });

  it("strips tool requests to {} and responses to a status line", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 7200, { tool_calls: strip }),
    ]);
    expect(toolRequests(entries).map((e) => [e.name, e.arguments])).toEqual([
      ["fs_create_file", {}],
      ["fs_modify_file", {}],
    ]);
    expect(toolResponses(entries).map((e) => e.content)).toEqual([
      "[compacted] fs_create_file: success",
      "[compacted] fs_modify_file: success",
    ]);
    expect(entries.filter((e) => e.type === "chat_request")).toHaveLength(2);
  });

  it("strips only requests, keeping responses", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(1, 1, 7200, { tool_calls: { policy: "strip", request: true, response: false } }),
    ]);
    expect(toolRequests(entries)[1]?.arguments).toEqual({});
    expect(toolRequests(entries)[1]?.name).toBe("fs_modify_file");
    expect(toolResponses(entries)[1]?.content).toBe("ok");
  });

  it("strips only responses, keeping arguments", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 0, 7200, { tool_calls: { policy: "strip", request: false, response: true } }),
    ]);
    expect(toolRequests(entries)[0]?.arguments).toEqual({ path: "src/main.rs" });
    expect(toolResponses(entries)[0]?.content).toBe("[compacted] fs_create_file: success");
  });

  it("keeps the error status of a stripped response", () => {
    const stream = [
      turnStart(0),
      request("test"),
      toolCall("c1", "cargo_test", {}),
      toolResult("c1", "boom", true),
      message("failed"),
    ];
    const { entries } = project([...stream, compaction(0, 0, 10, { tool_calls: strip })]);
    expect(toolResponses(entries)[0]).toMatchObject({
      content: "[compacted] cargo_test: error",
      is_error: true,
    });
  });

  it("drops an orphan response, which no provider accepts, compacted or not", () => {
    const stream = [turnStart(0), request("x"), toolResult("nobody", "data"), message("y")];
    expect(toolResponses(project(stream).entries)).toEqual([]);
    const { entries } = project([...stream, compaction(0, 0, 10, { tool_calls: strip })]);
    expect(toolResponses(entries)).toEqual([]);
  });

  it("names a stripped response after the latest request of its id up to its own turn", () => {
    // Call ids reused across turns: turn 1 answers turn 0's pending `grep`, turn 2 its own `fs_read`.
    const stream = [
      turnStart(0),
      request("a"),
      toolCall("c1", "grep", {}),
      turnStart(1),
      toolResult("c1", "from turn 0"),
      request("b"),
      turnStart(2),
      request("c"),
      toolCall("c1", "fs_read", {}),
      toolResult("c1", "from turn 2"),
    ];
    const { entries } = project([...stream, compaction(0, 2, 10, { tool_calls: strip })]);
    expect(toolResponses(entries).map((e) => e.content)).toEqual([
      "[compacted] grep: success",
      "[compacted] fs_read: success",
    ]);
  });

  it("omits tool calls entirely", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 7200, { tool_calls: { policy: "omit" } }),
    ]);
    expect(toolRequests(entries)).toHaveLength(0);
    expect(toolResponses(entries)).toHaveLength(0);
    expect(messagesOf(entries)).toHaveLength(2);
  });

  it("applies only to covered turns", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 0, 7200, { reasoning: "strip", tool_calls: { policy: "omit" } }),
    ]);
    expect(visible(entries)).toHaveLength(7);
    expect(
      entries.filter((e) => e.type === "chat_response" && "reasoning" in e && e.reasoning),
    ).toHaveLength(1);
  });

  it("clamps a range past the last turn", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 99, 7200, { reasoning: "strip" }),
    ]);
    expect(
      entries.filter((e) => e.type === "chat_response" && "reasoning" in e && e.reasoning),
    ).toHaveLength(0);
  });

  it("passes config deltas and unknown entries through, and consumes compactions", () => {
    const unknown = { type: "future_thing", timestamp: at(5), payload: { a: 1 } } as Entry;
    const delta = configDelta({ assistant: { name: "x" } }, 1);
    const stream = [
      turnStart(0),
      delta,
      request("q"),
      unknown,
      message("m"),
      compaction(0, 0, 9, { summary: { summary: "S" } }),
    ];
    const { entries } = project(stream);
    expect(entries).toContainEqual(delta);
    expect(entries).toContainEqual(unknown);
    expect(entries.some((e) => e.type === "compaction")).toBe(false);
  });
});

describe("stacking", () => {
  it("lets the latest timestamp win per kind", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 10_000, { tool_calls: { policy: "omit" } }),
      compaction(0, 1, 20_000, { tool_calls: strip }),
    ]);
    expect(toolRequests(entries)).toHaveLength(2);
  });

  it("decides by timestamp, not stream order", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 20_000, { tool_calls: { policy: "omit" } }),
      compaction(0, 1, 10_000, { tool_calls: strip }),
    ]);
    expect(toolRequests(entries)).toHaveLength(0);
  });

  it("breaks equal timestamps by stream order", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 10_000, { tool_calls: { policy: "omit" } }),
      compaction(0, 1, 10_000, { tool_calls: strip }),
    ]);
    expect(toolRequests(entries)).toHaveLength(2);
  });

  it("compares sub-millisecond timestamps exactly", () => {
    const older = {
      ...compaction(0, 1, 0, { tool_calls: strip }),
      timestamp: "2026-01-01T00:00:00.000002Z",
    };
    const newer = {
      ...compaction(0, 1, 0, { tool_calls: { policy: "omit" } }),
      timestamp: "2026-01-01 00:00:00.0000021",
    };
    expect(toolRequests(project([...twoTurnStream(), newer, older]).entries)).toHaveLength(0);
  });

  it("keeps independent kinds from different compactions", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 10_000, { reasoning: "strip" }),
      compaction(0, 1, 20_000, { tool_calls: strip }),
    ]);
    expect(
      entries.filter((e) => e.type === "chat_response" && "reasoning" in e && e.reasoning),
    ).toHaveLength(0);
    expect(toolResponses(entries).every((e) => e.content.startsWith("[compacted]"))).toBe(true);
  });

  it("leaves a turn that no tool policy covers untouched among several compactions", () => {
    const stream = [0, 1, 2].flatMap((t) => [
      turnStart(t),
      request(`q${t}`, t),
      toolCall(`c${t}`, "grep", { q: `${t}` }, t),
      toolResult(`c${t}`, `out${t}`, false, t),
    ]);
    const { entries } = project([
      ...stream,
      compaction(0, 2, 10, { reasoning: "strip" }),
      compaction(1, 1, 20, { tool_calls: strip }),
    ]);
    expect(toolRequests(entries).map((e) => e.arguments)).toEqual([{ q: "0" }, {}, { q: "2" }]);
    expect(toolResponses(entries).map((e) => e.content)).toEqual([
      "out0",
      "[compacted] grep: success",
      "out2",
    ]);
  });

  it("lets a summary win over a newer mechanical policy", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 10_000, { summary: { summary: "S" } }),
      compaction(0, 1, 20_000, { reasoning: "strip" }),
    ]);
    expect(visible(entries)).toHaveLength(2);
  });
});

describe("summaries", () => {
  it("replaces every event of the range with one synthetic turn", () => {
    const { entries, turns } = project([
      ...twoTurnStream(),
      compaction(0, 1, 7200, { summary: { summary: "All done." } }),
    ]);
    expect(visible(entries)).toEqual([
      { type: "chat_request", timestamp: at(0), content: "[Summary of previous conversation]" },
      { type: "chat_response", timestamp: at(0), message: "All done." },
    ]);
    expect(entries[0]).toEqual({ type: "turn_start", timestamp: at(0) });
    expect(turns).toEqual([{ summary: { from: 0, to: 1 } }]);
  });

  it("ignores per-type policies of a summary compaction", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(0, 1, 7200, {
        summary: { summary: "S" },
        reasoning: "strip",
        tool_calls: { policy: "omit" },
      }),
    ]);
    expect(visible(entries)).toHaveLength(2);
  });

  it("summarizes a partial range and keeps the rest", () => {
    const { entries, turns } = project([
      ...twoTurnStream(),
      compaction(0, 0, 7200, { summary: { summary: "S" } }),
    ]);
    expect(visible(entries)).toHaveLength(7);
    expect(visible(entries)[2]).toMatchObject({ content: "add error handling" });
    expect(turns).toEqual([{ summary: { from: 0, to: 0 } }, { kept: 1 }]);
  });

  it("makes the summary its own turn", () => {
    const { entries } = project([
      ...twoTurnStream(),
      compaction(1, 1, 7200, { summary: { summary: "S" } }),
    ]);
    expect(indexTurns(entries).turnCount).toBe(2);
  });

  it("keeps origins in raw turn numbers", () => {
    const { turns } = project([
      ...messageTurns(6),
      compaction(1, 4, 100, { summary: { summary: "S" } }),
    ]);
    expect(turns).toEqual([{ kept: 0 }, { summary: { from: 1, to: 4 } }, { kept: 5 }]);
  });

  it("keeps adjacent distinct summaries with the same text separate", () => {
    const { entries } = project([
      ...messageTurns(2),
      compaction(0, 0, 100, { summary: { summary: "SAME" } }),
      compaction(1, 1, 200, { summary: { summary: "SAME" } }),
    ]);
    expect(messagesOf(entries)).toEqual(["SAME", "SAME"]);
    expect(indexTurns(entries).turnCount).toBe(2);
  });

  it("injects an outer summary again after a newer inner one splits it", () => {
    const { entries, turns } = project([
      ...messageTurns(4),
      compaction(0, 3, 100, { summary: { summary: "OUTER" } }),
      compaction(1, 2, 200, { summary: { summary: "INNER" } }),
    ]);
    expect(messagesOf(entries)).toEqual(["OUTER", "INNER", "OUTER"]);
    expect(turns).toEqual([
      { summary: { from: 0, to: 0 } },
      { summary: { from: 1, to: 2 } },
      { summary: { from: 3, to: 3 } },
    ]);
  });

  it("keeps config deltas inside a summarized range in place", () => {
    const delta = configDelta({ conversation: { compaction: { auto: { enabled: true } } } }, 1.5);
    const stream = [...messageTurns(2).slice(0, 3), delta, ...messageTurns(2).slice(3)];
    const { entries } = project([...stream, compaction(0, 1, 100, { summary: { summary: "S" } })]);
    expect(entries.filter((e) => e.type === "config_delta")).toEqual([delta]);
  });
});

describe("turn indexing through projection", () => {
  it("targets the right turn with an implicit leading turn", () => {
    const stream = [
      request("q0"),
      reasoning("r0"),
      message("m0"),
      turnStart(1),
      request("q1"),
      reasoning("r1"),
      message("m1"),
    ];
    const { entries } = project([...stream, compaction(1, 1, 10, { reasoning: "strip" })]);
    expect(
      entries
        .filter((e) => e.type === "chat_response" && "reasoning" in e && e.reasoning)
        .map((e) => (e as ChatResponse).reasoning),
    ).toEqual(["r0"]);
  });

  it("can be projected again after a new compaction (re-compaction)", () => {
    const once = project([
      ...twoTurnStream(),
      compaction(0, 1, 10, { reasoning: "strip" }),
    ]).entries;
    const twice = project([
      ...once,
      compaction(0, 0, 20, { tool_calls: { policy: "omit" } }),
    ]).entries;
    expect(toolRequests(twice).map((e) => e.name)).toEqual(["fs_modify_file"]);
    expect(twice.some((e) => e.type === "compaction")).toBe(false);
  });
});

describe("tool pairs across turns (docs/architecture.md §5)", () => {
  // Turn 0 ends with a call awaiting approval; turn 1 begins with its result.
  const approval = (): Entry[] => [
    turnStart(0),
    request("deploy?"),
    toolCall("c", "deploy", { env: "prod" }),
    turnStart(1),
    toolResult("c", "deployed"),
    message("done"),
    turnStart(2),
    request("next"),
    message("ok"),
  ];
  const typesOf = (entries: readonly Entry[]) => entries.map((e) => e.type);

  it("omits a result with its call when a band omits the call's turn", () => {
    const { entries } = project([
      ...approval(),
      compaction(0, 0, 10, { tool_calls: { policy: "omit" } }),
    ]);
    expect(toolRequests(entries)).toEqual([]);
    expect(toolResponses(entries)).toEqual([]);
  });

  it("keeps a result whose own turn is omitted while its call's turn is not", () => {
    const { entries } = project([
      ...approval(),
      compaction(1, 1, 10, { tool_calls: { policy: "omit" } }),
    ]);
    expect(toolResponses(entries).map((e) => e.content)).toEqual(["deployed"]);
  });

  it("strips a carried result under its call's turn's policy", () => {
    const { entries } = project([...approval(), compaction(0, 0, 10, { tool_calls: strip })]);
    expect(toolResponses(entries).map((e) => e.content)).toEqual(["[compacted] deploy: success"]);
  });

  it("drops a result whose call a summary replaced", () => {
    const stream = [...approval(), compaction(0, 0, 10, { summary: { summary: "S" } })];
    expect(toolResponses(project(stream).entries)).toEqual([]);
  });

  it("puts a carried result before its own turn's summary", () => {
    const stream = [...approval(), compaction(1, 1, 10, { summary: { summary: "S" } })];
    expect(typesOf(project(stream).entries)).toEqual([
      "turn_start",
      "chat_request",
      "tool_call_request",
      "tool_call_response",
      "turn_start",
      "chat_request",
      "chat_response",
      "turn_start",
      "chat_request",
      "chat_response",
    ]);
  });

  it("keeps an unanswered call only at the end of the stream", () => {
    const pending = [turnStart(0), request("deploy?"), toolCall("c", "deploy", {})];
    expect(project(pending).entries).toEqual(pending);
    const abandoned = [...pending, turnStart(1), request("never mind"), message("ok")];
    expect(toolRequests(project(abandoned).entries)).toEqual([]);
  });

  it("drops results that do not answer all the previous turn's pending calls, with those calls", () => {
    const stream = [
      turnStart(0),
      request("two?"),
      toolCall("a", "f", {}),
      toolCall("b", "g", {}),
      turnStart(1),
      toolResult("a", "only a"),
      message("x"),
    ];
    const { entries } = project(stream);
    expect(toolRequests(entries)).toEqual([]);
    expect(toolResponses(entries)).toEqual([]);
  });
});

describe("the tool-pair rules, one by one", () => {
  const counts =
    (byTurn: Record<number, number>) =>
    (t: number): number =>
      byTurn[t] ?? 0;

  it("keeps no pending calls of a turn that has none, even the last", () => {
    expect(keepsPending(counts({}), counts({}), 2, 3)).toBe(false);
    expect(keepsPending(counts({ 2: 1 }), counts({}), 2, 3)).toBe(true);
    expect(keepsPending(counts({ 1: 2 }), counts({ 2: 2 }), 1, 3)).toBe(true);
    expect(keepsPending(counts({ 1: 2 }), counts({ 2: 1 }), 1, 3)).toBe(false);
  });

  it("keeps no carried results in a turn that has none, nor in turn 0, which follows no turn", () => {
    expect(keepsCarried(counts({ 0: 0 }), counts({ 1: 0 }), 1)).toBe(false);
    expect(keepsCarried(counts({ [-1]: 1 }), counts({ 0: 1 }), 0)).toBe(false);
    expect(keepsCarried(counts({ 0: 1 }), counts({ 1: 1 }), 1)).toBe(true);
  });

  it("names a stripped result after the latest request of its id up to its turn, or unknown", () => {
    const stream = [
      turnStart(0),
      toolCall("a", "first", {}),
      turnStart(1),
      toolCall("a", "second", {}),
      turnStart(2),
      toolCall("b", "later", {}),
    ];
    const names = toolNamesById(stream, indexTurns(stream).turnOf);
    expect(toolNameFor(names, "a", 0)).toBe("first");
    expect(toolNameFor(names, "a", 1)).toBe("second");
    expect(toolNameFor(names, "b", 1)).toBeUndefined();
    expect(toolNameFor(names, "missing", 2)).toBeUndefined();
    expect(strippedResponseContent(undefined, false)).toBe("[compacted] unknown: success");
  });

  it("gives the first event of a turn its role too, and reads ids only off tool events", () => {
    const answered = [toolCall("a", "f", {}), toolResult("a", "ok")];
    expect(toolRoles(answered, () => false)).toEqual(["paired", "paired"]);
    // An event of a later JP version that happens to carry an `id` answers nothing.
    const future = { type: "tool_call_echo", timestamp: at(0), id: "a" } as unknown as Entry;
    expect(toolRoles([toolCall("a", "f", {}), future], () => false)).toEqual([
      "pending",
      undefined,
    ]);
  });

  it("carries a result only to a call some earlier turn requested, not to an earlier result's id", () => {
    const stream = [
      turnStart(0),
      request("go"),
      toolResult("x", "stray"),
      toolCall("y", "f", {}),
      turnStart(1),
      toolResult("x", "stray again"),
      toolResult("y", "answer"),
      message("done"),
    ];
    expect(toolResponses(project(stream).entries).map((e) => e.content)).toEqual(["answer"]);
  });

  it("tells, for every entry, what the view made of it, dropped entries included", () => {
    const stream = [...twoTurnStream(), compaction(0, 0, 10, { reasoning: "strip" })];
    const { emitted } = projectWithSources(stream);
    expect(emitted).toHaveLength(stream.length);
    expect(emitted.at(-1)).toBeUndefined();
  });
});
