/**
 * The scenarios of jp's own projection tests
 * (`crates/jp_conversation/src/stream/projection_tests.rs` in dcdpr/jp), as
 * data: each case is a stream, its compactions, and the projected view and
 * turn origins written out by hand. The view is rendered one line per entry
 * so a case reads like the conversation the provider will see.
 */
import { describe, expect, it } from "vitest";
import {
  compaction,
  configDelta,
  messageTurns,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
  twoTurnStream,
} from "../test/helpers/builders.ts";
import type { Entry, KnownEntry } from "./events.ts";
import { project, type TurnOrigin } from "./projection.ts";

const ORIGIN = Date.UTC(2026, 0, 1);

/** One line per entry: `turn_start @s`, `Q`, `R`, `M`, `T>`, `T<`, `config_delta`. */
function render(entries: readonly Entry[]): string[] {
  return entries.map((raw) => {
    const entry = raw as KnownEntry;
    switch (entry.type) {
      case "turn_start":
        return `turn_start @${(Date.parse(entry.timestamp) - ORIGIN) / 1000}`;
      case "chat_request":
        return `Q ${entry.content}`;
      case "chat_response":
        return entry.reasoning !== undefined ? `R ${entry.reasoning}` : `M ${entry.message}`;
      case "tool_call_request":
        return `T> ${entry.id} ${entry.name} ${JSON.stringify(entry.arguments)}`;
      case "tool_call_response":
        return `T< ${entry.id} ${entry.content}${entry.is_error ? " (error)" : ""}`;
      default:
        return entry.type;
    }
  });
}

const TURN_0 = [
  "turn_start @0",
  "Q set up the project",
  "R thinking about layout",
  'T> tc1 fs_create_file {"path":"src/main.rs"}',
  "T< tc1 file created",
  "M Created src/main.rs.",
];
const TURN_1 = [
  "turn_start @3600",
  "Q add error handling",
  "R considering error types...",
  'T> tc2 fs_modify_file {"path":"src/main.rs","old":"a","new":"b"}',
  "T< tc2 ok",
  "M Added error handling.",
];
const without = (lines: string[], prefix: string) => lines.filter((l) => !l.startsWith(prefix));
const summaryTurn = (at: number, text: string) => [
  `turn_start @${at}`,
  "Q [Summary of previous conversation]",
  `M ${text}`,
];
/** Both turns with tool requests and responses stripped. */
const TOOLS_STRIPPED = [
  ...TURN_0.slice(0, 3),
  "T> tc1 fs_create_file {}",
  "T< tc1 [compacted] fs_create_file: success",
  ...TURN_0.slice(5),
  ...TURN_1.slice(0, 3),
  "T> tc2 fs_modify_file {}",
  "T< tc2 [compacted] fs_modify_file: success",
  ...TURN_1.slice(5),
];
const KEPT_BOTH: TurnOrigin[] = [{ kept: 0 }, { kept: 1 }];
const strip = (request: boolean, response: boolean) =>
  ({ policy: "strip", request, response }) as const;
const omit = { policy: "omit" } as const;

interface Case {
  /** The jp test(s) this case ports. */
  readonly jp: string;
  readonly stream: Entry[];
  readonly view: string[];
  readonly turns: TurnOrigin[];
}

const cases: Case[] = [
  {
    jp: "no_compaction_is_noop, no_compaction_returns_kept_origins",
    stream: twoTurnStream(),
    view: [...TURN_0, ...TURN_1],
    turns: KEPT_BOTH,
  },
  {
    jp: "summary_origins_preserve_raw_turn_numbers",
    stream: [...messageTurns(6), compaction(1, 4, 7200, { summary: { summary: "middle turns" } })],
    view: [
      ...["turn_start @0", "Q q0", "M m0"],
      ...summaryTurn(1, "middle turns"),
      ...["turn_start @5", "Q q5", "M m5"],
    ],
    turns: [{ kept: 0 }, { summary: { from: 1, to: 4 } }, { kept: 5 }],
  },
  {
    jp: "mechanical_compaction_keeps_one_to_one_origins, strip_reasoning_removes_reasoning_events",
    stream: [...twoTurnStream(), compaction(0, 1, 7200, { reasoning: "strip" })],
    view: without([...TURN_0, ...TURN_1], "R "),
    turns: KEPT_BOTH,
  },
  {
    jp: "contained_summary_origins_reflect_actual_runs, contained_summary_reinjects_outer_summary_tail",
    stream: [
      ...messageTurns(4),
      compaction(0, 3, 3600, { summary: { summary: "OUTER" } }),
      compaction(1, 2, 7200, { summary: { summary: "INNER" } }),
    ],
    view: [...summaryTurn(0, "OUTER"), ...summaryTurn(1, "INNER"), ...summaryTurn(3, "OUTER")],
    turns: [
      { summary: { from: 0, to: 0 } },
      { summary: { from: 1, to: 2 } },
      { summary: { from: 3, to: 3 } },
    ],
  },
  {
    jp: "strip_request_only_blanks_args_and_keeps_response",
    stream: [...twoTurnStream(), compaction(0, 1, 7200, { tool_calls: strip(true, false) })],
    view: [
      ...TURN_0.slice(0, 3),
      "T> tc1 fs_create_file {}",
      ...TURN_0.slice(4),
      ...TURN_1.slice(0, 3),
      "T> tc2 fs_modify_file {}",
      ...TURN_1.slice(4),
    ],
    turns: KEPT_BOTH,
  },
  {
    jp: "strip_tool_calls_replaces_content",
    stream: [...twoTurnStream(), compaction(0, 1, 7200, { tool_calls: strip(true, true) })],
    view: TOOLS_STRIPPED,
    turns: KEPT_BOTH,
  },
  {
    jp: "strip_tool_response_only",
    stream: [...twoTurnStream(), compaction(0, 1, 7200, { tool_calls: strip(false, true) })],
    view: [
      ...TURN_0.slice(0, 4),
      "T< tc1 [compacted] fs_create_file: success",
      ...TURN_0.slice(5),
      ...TURN_1.slice(0, 4),
      "T< tc2 [compacted] fs_modify_file: success",
      ...TURN_1.slice(5),
    ],
    turns: KEPT_BOTH,
  },
  {
    jp: "strip_tool_response_preserves_error_status",
    stream: [
      turnStart(0),
      request("do something"),
      toolCall("tc1", "cargo_test", {}),
      toolResult("tc1", "test failed: assertion error", true),
      compaction(0, 0, 3600, { tool_calls: strip(false, true) }),
    ],
    view: [
      "turn_start @0",
      "Q do something",
      "T> tc1 cargo_test {}",
      "T< tc1 [compacted] cargo_test: error (error)",
    ],
    turns: [{ kept: 0 }],
  },
  {
    jp: "omit_tool_calls_removes_them",
    stream: [...twoTurnStream(), compaction(0, 1, 7200, { tool_calls: omit })],
    view: without(without([...TURN_0, ...TURN_1], "T>"), "T<"),
    turns: KEPT_BOTH,
  },
  {
    jp: "summary_replaces_all_events_in_range",
    stream: [
      ...twoTurnStream(),
      compaction(0, 1, 7200, {
        summary: { summary: "Set up a Rust project with error handling." },
      }),
    ],
    view: summaryTurn(0, "Set up a Rust project with error handling."),
    turns: [{ summary: { from: 0, to: 1 } }],
  },
  {
    jp: "summary_ignores_per_type_policies",
    stream: [
      ...twoTurnStream(),
      compaction(0, 1, 7200, {
        summary: { summary: "Everything summarized." },
        reasoning: "strip",
        tool_calls: strip(true, true),
      }),
    ],
    view: summaryTurn(0, "Everything summarized."),
    turns: [{ summary: { from: 0, to: 1 } }],
  },
  {
    jp: "summary_partial_range",
    stream: [
      ...twoTurnStream(),
      compaction(0, 0, 7200, { summary: { summary: "Project was set up." } }),
    ],
    view: [...summaryTurn(0, "Project was set up."), ...TURN_1],
    turns: [{ summary: { from: 0, to: 0 } }, { kept: 1 }],
  },
  {
    jp: "summary_is_injected_as_its_own_turn",
    stream: [
      ...twoTurnStream(),
      compaction(1, 1, 7200, { summary: { summary: "summary of turn 1" } }),
    ],
    view: [...TURN_0, ...summaryTurn(3600, "summary of turn 1")],
    turns: [{ kept: 0 }, { summary: { from: 1, to: 1 } }],
  },
  {
    jp: "distinct_adjacent_summaries_with_identical_text_stay_separate",
    stream: [
      ...messageTurns(2),
      compaction(0, 0, 3600, { summary: { summary: "SAME" } }),
      compaction(1, 1, 7200, { summary: { summary: "SAME" } }),
    ],
    view: [...summaryTurn(0, "SAME"), ...summaryTurn(1, "SAME")],
    turns: [{ summary: { from: 0, to: 0 } }, { summary: { from: 1, to: 1 } }],
  },
  {
    jp: "timestamp_tie_breaks_by_stream_order",
    stream: [
      ...twoTurnStream(),
      compaction(0, 1, 7200, { tool_calls: omit }),
      compaction(0, 1, 7200, { tool_calls: strip(true, true) }),
    ],
    view: TOOLS_STRIPPED,
    turns: KEPT_BOTH,
  },
  {
    jp: "later_compaction_wins_for_same_turn",
    stream: [
      ...twoTurnStream(),
      compaction(0, 1, 7200, { reasoning: "strip" }),
      compaction(0, 1, 10800, { tool_calls: strip(true, true) }),
    ],
    view: [
      "turn_start @0",
      "Q set up the project",
      "T> tc1 fs_create_file {}",
      "T< tc1 [compacted] fs_create_file: success",
      "M Created src/main.rs.",
      "turn_start @3600",
      "Q add error handling",
      "T> tc2 fs_modify_file {}",
      "T< tc2 [compacted] fs_modify_file: success",
      "M Added error handling.",
    ],
    turns: KEPT_BOTH,
  },
  {
    jp: "later_compaction_overrides_earlier_for_same_type",
    stream: [
      ...twoTurnStream(),
      compaction(0, 1, 7200, { tool_calls: omit }),
      compaction(0, 1, 10800, { tool_calls: strip(false, true) }),
    ],
    view: [
      ...TURN_0.slice(0, 4),
      "T< tc1 [compacted] fs_create_file: success",
      ...TURN_0.slice(5),
      ...TURN_1.slice(0, 4),
      "T< tc2 [compacted] fs_modify_file: success",
      ...TURN_1.slice(5),
    ],
    turns: KEPT_BOTH,
  },
  {
    jp: "summary_wins_over_mechanical_for_same_turns",
    stream: [
      ...twoTurnStream(),
      compaction(0, 1, 7200, { reasoning: "strip", tool_calls: strip(true, true) }),
      compaction(0, 1, 10800, { summary: { summary: "All summarized." } }),
    ],
    view: summaryTurn(0, "All summarized."),
    turns: [{ summary: { from: 0, to: 1 } }],
  },
  {
    jp: "compaction_applies_only_to_covered_turns",
    stream: [...twoTurnStream(), compaction(0, 0, 7200, { reasoning: "strip", tool_calls: omit })],
    view: ["turn_start @0", "Q set up the project", "M Created src/main.rs.", ...TURN_1],
    turns: KEPT_BOTH,
  },
  {
    jp: "compaction_beyond_max_turn_is_clamped",
    stream: [...twoTurnStream(), compaction(0, 99, 7200, { reasoning: "strip" })],
    view: without([...TURN_0, ...TURN_1], "R "),
    turns: KEPT_BOTH,
  },
  {
    jp: "config_deltas_preserved_through_projection, compaction_events_consumed_by_projection",
    stream: [
      ...twoTurnStream(),
      configDelta({ assistant: { name: "x" } }, 3700),
      compaction(0, 1, 7200, { summary: { summary: "all gone" } }),
    ],
    view: [...summaryTurn(0, "all gone"), "config_delta"],
    turns: [{ summary: { from: 0, to: 1 } }],
  },
  {
    jp: "empty_stream_with_compaction",
    stream: [compaction(0, 0, 0, { summary: { summary: "nothing here" } })],
    view: [],
    turns: [],
  },
  {
    jp: "compaction_targets_correct_turn_with_implicit_leading_turn",
    stream: [
      request("q0", 0),
      reasoning("r0", 0),
      turnStart(3600),
      request("q1", 3600),
      reasoning("r1", 3600),
      compaction(1, 1, 7200, { reasoning: "strip" }),
    ],
    view: ["Q q0", "R r0", "turn_start @3600", "Q q1"],
    turns: KEPT_BOTH,
  },
];

describe("jp's projection scenarios", () => {
  it.each(cases)("$jp", ({ stream, view, turns }) => {
    const projection = project(stream);
    expect(render(projection.entries)).toEqual(view);
    expect(projection.turns).toEqual(turns);
  });

  it("recompact_projected_stream_with_new_compaction", () => {
    const once = project([...twoTurnStream(), compaction(0, 1, 7200, { reasoning: "strip" })]);
    expect(render(once.entries)).toEqual(without([...TURN_0, ...TURN_1], "R "));
    const twice = project([...once.entries, compaction(0, 0, 10800, { tool_calls: omit })]);
    expect(render(twice.entries)).toEqual([
      "turn_start @0",
      "Q set up the project",
      "M Created src/main.rs.",
      ...without(TURN_1, "R "),
    ]);
  });
});
