import { describe, expect, it } from "vitest";
import {
  configDelta,
  message,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
  twoTurnStream,
} from "../test/helpers/builders.ts";
import type { Entry } from "./events.ts";
import {
  buildSummaryMessages,
  DEFAULT_SUMMARY_PROMPT,
  omittedMarker,
  renderTranscript,
  TRANSCRIPT_ITEM_BUDGET,
  TRANSCRIPT_TOTAL_BUDGET,
  TranscriptBudgetError,
  truncateMiddle,
} from "./transcript.ts";

const band = (events: Entry[], from_turn = 0, to_turn = from_turn) => ({
  from_turn,
  to_turn,
  events,
});

describe("truncateMiddle", () => {
  it("keeps a text that fits", () => {
    expect(truncateMiddle("hello", 5)).toBe("hello");
    expect(truncateMiddle("", 100)).toBe("");
  });

  it("keeps head and tail around a marker counting what was omitted, within the budget", () => {
    const text = `${"a".repeat(5_000)}${"b".repeat(5_000)}`;
    const out = truncateMiddle(text, 1_000);
    expect(out.length).toBeLessThanOrEqual(1_000);
    expect(out.length).toBeGreaterThan(990);
    const match = /^(a+)\n\[… (\d+) chars omitted …\]\n(b+)$/.exec(out);
    expect(match).not.toBeNull();
    const [, head = "", omitted = "", tail = ""] = match ?? [];
    expect(head.length + Number(omitted) + tail.length).toBe(text.length);
    expect(Math.abs(head.length - tail.length)).toBeLessThanOrEqual(1);
  });

  it("never splits a surrogate pair", () => {
    const text = "🚀".repeat(3_000);
    for (const budget of [100, 101, 102, 103, 999, 1_000]) {
      const out = truncateMiddle(text, budget);
      expect(out.length).toBeLessThanOrEqual(budget);
      expect(out).not.toMatch(
        /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/,
      );
      const [head = "", , tail = ""] = out.split("\n");
      const omitted = Number(/(\d+) chars/.exec(out)?.[1]);
      expect(head.length + omitted + tail.length).toBe(text.length);
    }
  });
});

describe("renderTranscript", () => {
  it("renders requests, responses, reasoning, data, tool calls and results under turn headings", () => {
    const events: Entry[] = [
      ...twoTurnStream(),
      { type: "chat_response", timestamp: message("").timestamp, data: { ok: true, n: [1, 2] } },
      toolCall("tc3", "run", { cmd: "npm test" }),
      toolResult("tc3", "2 failed", true),
    ];
    expect(renderTranscript(band(events, 4, 5))).toBe(
      [
        "## Turn 4",
        "[user]\nset up the project",
        "[assistant reasoning]\nthinking about layout",
        '[tool call fs_create_file id=tc1]\n{"path":"src/main.rs"}',
        "[tool result fs_create_file id=tc1]\nfile created",
        "[assistant]\nCreated src/main.rs.",
        "## Turn 5",
        "[user]\nadd error handling",
        "[assistant reasoning]\nconsidering error types...",
        '[tool call fs_modify_file id=tc2]\n{"path":"src/main.rs","old":"a","new":"b"}',
        "[tool result fs_modify_file id=tc2]\nok",
        "[assistant]\nAdded error handling.",
        '[assistant data]\n{"ok":true,"n":[1,2]}',
        '[tool call run id=tc3]\n{"cmd":"npm test"}',
        "[tool result run id=tc3 error]\n2 failed",
      ].join("\n\n"),
    );
  });

  it("skips inquiries, config deltas, compactions and unknown entries, and names orphan results by id only", () => {
    const events = [
      turnStart(),
      configDelta({ conversation: { compaction: { auto: { enabled: true } } } }),
      { type: "inquiry_request", timestamp: turnStart().timestamp, question: "sure?" },
      request("go"),
      { type: "inquiry_response", timestamp: turnStart().timestamp, answer: "yes" },
      { type: "future_event", timestamp: turnStart().timestamp, secret: "x" },
      toolResult("old", "from an earlier turn"),
    ] as Entry[];
    const out = renderTranscript(band(events, 7));
    expect(out).toBe("## Turn 7\n\n[user]\ngo\n\n[tool result id=old]\nfrom an earlier turn");
    expect(out).not.toMatch(/sure|yes|secret|enabled/);
  });

  it("numbers an implicit turn 0 and keeps a heading for a turn that holds only turn_start", () => {
    const events = [request("first"), turnStart(), turnStart(), request("third")];
    expect(renderTranscript(band(events, 0, 2))).toBe(
      "## Turn 0\n\n[user]\nfirst\n\n## Turn 1\n\n## Turn 2\n\n[user]\nthird",
    );
  });

  it("truncates each item to the per-item budget, keeping head and tail", () => {
    const huge = `HEAD${"x".repeat(900_000)}TAIL`;
    const events = [
      turnStart(),
      request("read the log"),
      toolCall("t1", "cat", { path: "/var/log/big.log" }),
      toolResult("t1", huge),
      message(`${"y".repeat(10_000)}END`),
    ];
    const out = renderTranscript(band(events, 2));
    expect(out.length).toBeLessThan(3 * TRANSCRIPT_ITEM_BUDGET);
    expect(out).toContain("[tool result cat id=t1]\nHEAD");
    expect(out).toMatch(/\[… 89\d{4} chars omitted …\]\nx+TAIL/);
    expect(out).toMatch(/\[… \d+ chars omitted …\]\ny+END/);
    const result = out.split("\n\n").find((item) => item.startsWith("[tool result"));
    expect(result?.length).toBeLessThanOrEqual(
      "[tool result cat id=t1]\n".length + TRANSCRIPT_ITEM_BUDGET,
    );
  });

  it("truncates huge tool arguments and data like any other item", () => {
    const events = [
      turnStart(),
      toolCall("w", "write_file", { path: "a.txt", content: "z".repeat(50_000) }),
      {
        type: "chat_response",
        timestamp: turnStart().timestamp,
        data: { rows: "r".repeat(50_000) },
      },
    ] as Entry[];
    const out = renderTranscript(band(events), { itemBudget: 500 });
    expect(out).toContain('[tool call write_file id=w]\n{"path":"a.txt","content":"zzz');
    expect(out.match(/chars omitted/g)).toHaveLength(2);
    expect(out.length).toBeLessThan(1_200);
  });

  it("drops middle items past the total budget, keeping the beginning and the end of the band", () => {
    const events: Entry[] = [];
    for (let t = 0; t < 40; t++) {
      events.push(turnStart(t), request(`question ${t} ${"q".repeat(900)}`, t));
      events.push(message(`answer ${t} ${"a".repeat(900)}`, t));
    }
    const budget = 20_000;
    const out = renderTranscript(band(events, 10, 49), { totalBudget: budget });
    expect(out.length).toBeLessThanOrEqual(budget);
    expect(out.startsWith("## Turn 10\n\n[user]\nquestion 0 ")).toBe(true);
    expect(out).toContain("answer 39 ");
    const marker =
      /\[… (\d+) items of turns (\d+)–(\d+) omitted \((\d+) chars\) to fit the summarizer's budget …\]/.exec(
        out,
      );
    expect(marker).not.toBeNull();
    const [, items, first, last] = (marker ?? []).map(Number);
    expect(first).toBeGreaterThan(10);
    expect(last).toBeLessThan(49);
    expect(items).toBeGreaterThan(0);
    // Every item is either kept whole or counted as omitted.
    const kept = out.split("\n\n").filter((item) => /^\[(user|assistant)\]/.test(item)).length;
    const headings = out.split("\n\n").filter((item) => /^## Turn \d+$/.test(item)).length;
    expect(kept + headings + (items ?? 0)).toBe(40 * 3);
    // More of the end is kept than of the beginning.
    const afterMarker = out.slice(out.indexOf("omitted ("));
    expect(afterMarker.length).toBeGreaterThan(out.length / 2);
  });

  it("repeats the heading of a turn cut in two by the dropped middle", () => {
    const events: Entry[] = [turnStart(), request("start")];
    for (let i = 0; i < 100; i++) events.push(message(`${i} ${"m".repeat(300)}`));
    const out = renderTranscript(band(events, 3), { totalBudget: 5_000 });
    expect(out.length).toBeLessThanOrEqual(5_000);
    expect(out).toMatch(
      /items of turn 3 omitted[^\n]*\n\n## Turn 3 \(continued\)\n\n\[assistant\]/,
    );
    expect(out).toContain("99 mmm");
  });

  it("is the default budgets' transcript when no budget is given, and rejects budgets too small", () => {
    const events = [turnStart(), request("x".repeat(TRANSCRIPT_ITEM_BUDGET + 1))];
    expect(renderTranscript(band(events))).toBe(
      renderTranscript(band(events), {
        itemBudget: TRANSCRIPT_ITEM_BUDGET,
        totalBudget: TRANSCRIPT_TOTAL_BUDGET,
      }),
    );
    expect(renderTranscript(band(events))).toContain(omittedMarker(1).slice(0, 3));
    expect(() => renderTranscript(band(events), { itemBudget: 10 })).toThrow(TranscriptBudgetError);
    expect(() => renderTranscript(band(events), { totalBudget: 1.5e3 + 0.5 })).toThrow(
      TranscriptBudgetError,
    );
  });

  it("says so when the band holds no messages", () => {
    expect(renderTranscript(band([configDelta({})]))).toBe("(these turns hold no messages)");
  });
});

describe("buildSummaryMessages", () => {
  const events = [turnStart(), request("fix the build"), reasoning("hmm"), message("done")];

  it("puts the default prompt in the system message and the transcript in the user message", () => {
    const { system, user } = buildSummaryMessages(band(events, 5, 9));
    expect(system).toBe(DEFAULT_SUMMARY_PROMPT);
    expect(user).toContain("turns 5–9");
    expect(user).toContain(`<transcript>\n${renderTranscript(band(events, 5, 9))}\n</transcript>`);
  });

  it("replaces the default prompt with the rule's instructions", () => {
    const { system, user } = buildSummaryMessages({
      ...band(events, 2),
      instructions: "Summarize in three bullet points.",
    });
    expect(system).toBe("Summarize in three bullet points.");
    expect(user).toContain("turn 2 of the conversation");
    expect(user).not.toContain("Keep, as specifically");
  });

  it("asks for decisions, file paths, errors and fixes, and the state of the task", () => {
    for (const topic of [
      "Decisions",
      "file path",
      "Errors and their fixes",
      "current state of the task",
    ]) {
      expect(DEFAULT_SUMMARY_PROMPT).toContain(topic);
    }
  });
});
