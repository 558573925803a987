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
import { InvalidInputError } from "./errors.ts";
import type { Entry } from "./events.ts";
import { buildSummaryMessages, renderTranscript, truncateMiddle } from "./transcript.ts";

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

  it("fills the budget exactly, the head taking the odd character", () => {
    const text = `${"h".repeat(100)}${"t".repeat(100)}`;
    expect(truncateMiddle(text, 100)).toBe(
      `${"h".repeat(38)}\n[… 125 chars omitted …]\n${"t".repeat(37)}`,
    );
  });

  it("keeps the characters a shorter omitted count frees", () => {
    // 1,074 characters in 1,000: the count drops from three digits to two.
    const text = `${"a".repeat(537)}${"b".repeat(537)}`;
    expect(truncateMiddle(text, 1_000)).toBe(
      `${"a".repeat(488)}\n[… 98 chars omitted …]\n${"b".repeat(488)}`,
    );
  });

  it("is the marker alone when the budget cannot hold it", () => {
    expect(truncateMiddle("x".repeat(50), 10)).toBe("\n[… 50 chars omitted …]\n");
  });

  it("moves a cut that would split a surrogate pair, and only such a cut", () => {
    // Cut after 38 characters of the head and before the last 37.
    const h = (n: number) => "h".repeat(n);
    const t = (n: number) => "t".repeat(n);
    const moved = `${h(37)}\n[… 127 chars omitted …]\n${t(36)}`;
    // U+10000 is \uD800\uDC00 and U+10FFFF is \uDBFF\uDFFF: the ends of both ranges.
    expect(truncateMiddle(`${h(37)}\u{10000}${h(61)}${t(62)}\u{10FFFF}${t(36)}`, 100)).toBe(moved);
    expect(truncateMiddle(`${h(37)}\u{10FFFF}${h(61)}${t(62)}\u{10000}${t(36)}`, 100)).toBe(moved);
    // U+FFFD is past the surrogates: a cut beside it stays.
    expect(truncateMiddle(`${h(37)}\uFFFD${h(62)}${t(63)}\uFFFD${t(36)}`, 100)).toBe(
      `${h(37)}\uFFFD\n[… 125 chars omitted …]\n\uFFFD${t(36)}`,
    );
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

  it("numbers the turns from the band's first turn", () => {
    const events = [turnStart(), request("go"), turnStart(), request("on")];
    expect(renderTranscript(band(events, 1, 2))).toBe(
      "## Turn 1\n\n[user]\ngo\n\n## Turn 2\n\n[user]\non",
    );
  });

  it("cuts tool names and ids in labels to 200 characters", () => {
    const name = `${"n".repeat(125)}${"N".repeat(125)}`;
    const id = "i".repeat(201);
    const cutName = `${"n".repeat(88)}\n[… 74 chars omitted …]\n${"N".repeat(88)}`;
    const cutId = `${"i".repeat(88)}\n[… 25 chars omitted …]\n${"i".repeat(88)}`;
    expect(renderTranscript(band([toolCall(id, name, {}), toolResult(id, "ok")]))).toBe(
      `## Turn 0\n\n[tool call ${cutName} id=${cutId}]\n{}\n\n[tool result ${cutName} id=${cutId}]\nok`,
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
    expect(out.length).toBeLessThan(3 * 4_000);
    expect(out).toContain("[tool result cat id=t1]\nHEAD");
    expect(out).toMatch(/\[… 89\d{4} chars omitted …\]\nx+TAIL/);
    expect(out).toMatch(/\[… \d+ chars omitted …\]\ny+END/);
    const result = out.split("\n\n").find((item) => item.startsWith("[tool result"));
    expect(result?.length).toBeLessThanOrEqual("[tool result cat id=t1]\n".length + 4_000);
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

  it("keeps the first third of the room for the beginning and the rest for the end", () => {
    const m = (i: number) => `[assistant]\n${i} ${"m".repeat(98)}`;
    const events: Entry[] = [turnStart(), request("start")];
    for (let i = 0; i < 10; i++) events.push(message(`${i} ${"m".repeat(98)}`));
    expect(renderTranscript(band(events, 3), { totalBudget: 1_000 })).toBe(
      [
        "## Turn 3",
        "[user]\nstart",
        m(0),
        m(1),
        "[… 4 items of turn 3 omitted (454 chars) to fit the summarizer's budget …]",
        "## Turn 3 (continued)",
        m(6),
        m(7),
        m(8),
        m(9),
      ].join("\n\n"),
    );
  });

  // 1,000 characters less the 214 held for the marker and a repeated heading
  // leave 786: 262 for the beginning and 524 for the end, each block costing
  // its length and a separator. The heading costs 11, so an item of 251 (a
  // request of 242 characters) fills the beginning exactly, and an item of 524
  // (a request of 515) fills the end exactly.
  it.each([
    [
      "an item one character over the beginning's share is dropped, one filling the end's exactly is kept",
      243,
      515,
      `## Turn 0\n\n[… 2 items of turn 0 omitted (559 chars) to fit the summarizer's budget …]\n\n## Turn 0 (continued)\n\n[user]\n${"z".repeat(515)}`,
    ],
    [
      "an item filling the beginning's share exactly is kept, one character over the end's is dropped",
      242,
      516,
      `## Turn 0\n\n[user]\n${"a".repeat(242)}\n\n[… 2 items of turn 0 omitted (832 chars) to fit the summarizer's budget …]`,
    ],
  ])("%s", (_, first, last, expected) => {
    const events = [
      turnStart(),
      request("a".repeat(first)),
      request("m".repeat(300)),
      request("z".repeat(last)),
    ];
    expect(renderTranscript(band(events), { totalBudget: 1_000 })).toBe(expected);
  });

  it("does not repeat the heading of a turn the kept end starts with", () => {
    const events = [turnStart(), request("a".repeat(900)), turnStart(), request("b".repeat(100))];
    expect(renderTranscript(band(events), { totalBudget: 1_000 })).toBe(
      `## Turn 0\n\n[… 1 item of turn 0 omitted (907 chars) to fit the summarizer's budget …]\n\n## Turn 1\n\n[user]\n${"b".repeat(100)}`,
    );
  });

  it("stays within the total budget with many small items and long turn numbers", () => {
    const events: Entry[] = [];
    for (let t = 0; t < 30; t++) {
      events.push(turnStart());
      for (let i = 0; i < 10; i++) events.push(message("m"));
    }
    const from = 1_000_000_000_000_000;
    const out = renderTranscript(band(events, from, from + 29), { totalBudget: 1_000 });
    expect(out.length).toBeLessThanOrEqual(1_000);
    const m = (n: number) => Array.from({ length: n }, () => "[assistant]\nm");
    // Kept: 16 items from the beginning, 10 + 11 + 11 from the end; dropped:
    // 6 + 25 × 11 + 1 = 282 items of 13 or 24 characters and their separators.
    expect(out).toBe(
      [
        "## Turn 1000000000000000",
        ...m(10),
        "## Turn 1000000000000001",
        ...m(4),
        "[… 282 items of turns 1000000000000001–1000000000000027 omitted (4514 chars) to fit the summarizer's budget …]",
        "## Turn 1000000000000027 (continued)",
        ...m(10),
        "## Turn 1000000000000028",
        ...m(10),
        "## Turn 1000000000000029",
        ...m(10),
      ].join("\n\n"),
    );
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

  it("keeps items of up to 4,000 characters whole by default", () => {
    const fits = "a".repeat(4_000);
    expect(renderTranscript(band([request(fits)]))).toBe(`## Turn 0\n\n[user]\n${fits}`);
    const over = `${"a".repeat(2_000)}${"b".repeat(2_001)}`;
    expect(renderTranscript(band([request(over)]))).toBe(
      `## Turn 0\n\n[user]\n${"a".repeat(1_988)}\n[… 25 chars omitted …]\n${"b".repeat(1_988)}`,
    );
  });

  it("keeps a transcript of up to 400,000 characters whole by default", () => {
    // 100 items of 3,997 characters and one of 89, under one 9-character heading.
    const items = Array.from({ length: 100 }, (_, i) => request(`${i % 10}`.repeat(3_990)));
    const whole = renderTranscript(band([...items, request("z".repeat(82))]));
    expect(whole).toHaveLength(400_000);
    expect(whole.startsWith("## Turn 0\n\n[user]\n0000")).toBe(true);
    expect(whole.endsWith(`9999\n\n[user]\n${"z".repeat(82)}`)).toBe(true);
    const cut = renderTranscript(band([...items, request("z".repeat(83))]));
    expect(cut.length).toBeLessThanOrEqual(400_000);
    expect(cut).toMatch(
      /\[… 1 item of turn 0 omitted \(\d+ chars\) to fit the summarizer's budget …\]/,
    );
    expect(cut.endsWith(`9999\n\n[user]\n${"z".repeat(83)}`)).toBe(true);
  });

  it("keeps a transcript exactly at the total budget whole, and cuts one character more", () => {
    const fits = [turnStart(), request("x".repeat(982))];
    expect(renderTranscript(band(fits), { totalBudget: 1_000 })).toBe(
      `## Turn 0\n\n[user]\n${"x".repeat(982)}`,
    );
    // The one item fits neither the beginning's share nor the end's: only the marker is left.
    const over = [turnStart(), request("x".repeat(983))];
    expect(renderTranscript(band(over), { totalBudget: 1_000 })).toBe(
      "## Turn 0\n\n[… 1 item of turn 0 omitted (990 chars) to fit the summarizer's budget …]",
    );
  });

  it("accepts the smallest budgets, 100 characters an item and 1,000 in all", () => {
    const text = `${"a".repeat(50)}${"b".repeat(51)}`;
    expect(renderTranscript(band([request(text)]), { itemBudget: 100, totalBudget: 1_000 })).toBe(
      `## Turn 0\n\n[user]\n${"a".repeat(38)}\n[… 25 chars omitted …]\n${"b".repeat(38)}`,
    );
  });

  it("rejects budgets below the minimum or not whole numbers, naming the budget", () => {
    const events = [request("x")];
    const error = (budget: { itemBudget?: number; totalBudget?: number }) => {
      try {
        renderTranscript(band(events), budget);
      } catch (caught) {
        return caught;
      }
      return undefined;
    };
    const tooSmall = error({ itemBudget: 99 });
    expect(tooSmall).toBeInstanceOf(InvalidInputError);
    expect(tooSmall).toMatchObject({
      name: "InvalidInputError",
      status: 400,
      message: "itemBudget must be a whole number of at least 100 (got 99)",
    });
    expect(error({ totalBudget: 999 })).toMatchObject({
      name: "InvalidInputError",
      status: 400,
      message: "totalBudget must be a whole number of at least 1000 (got 999)",
    });
    expect(error({ totalBudget: 1_500.5 })).toMatchObject({
      message: "totalBudget must be a whole number of at least 1000 (got 1500.5)",
    });
    expect(error({ itemBudget: Number.NaN })).toBeInstanceOf(InvalidInputError);
  });

  it("says so when the band holds no messages", () => {
    expect(renderTranscript(band([configDelta({})]))).toBe("(these turns hold no messages)");
  });
});

describe("buildSummaryMessages", () => {
  const events = [turnStart(), request("fix the build"), reasoning("hmm"), message("done")];

  it("puts the default prompt in the system message and the transcript in the user message", () => {
    const { system, user } = buildSummaryMessages(band(events, 5, 9));
    expect(system).toMatch(
      /^You summarize part of a conversation between a user and an AI assistant that works with tools/,
    );
    expect(
      user,
    ).toBe(`Below is the transcript of turns 5–9 of the conversation (0-based), rendered from its raw event log: user messages, assistant messages and reasoning, tool calls with their arguments and tool results. Long items are shortened where marked "[… omitted …]". Your summary will replace exactly these turns; the turns before and after them stay as they are.

<transcript>
## Turn 5

[user]
fix the build

[assistant reasoning]
hmm

[assistant]
done
</transcript>

Write the summary of turns 5–9 now.`);
  });

  it("renders the transcript within the budgets given", () => {
    const { user } = buildSummaryMessages(band([request("x".repeat(150))], 2), { itemBudget: 100 });
    expect(user).toContain(
      `<transcript>\n## Turn 2\n\n[user]\n${"x".repeat(38)}\n[… 74 chars omitted …]\n${"x".repeat(38)}\n</transcript>\n\nWrite the summary of turn 2 now.`,
    );
  });

  it("keeps the default prompt when the rule's instructions are blank", () => {
    const { system } = buildSummaryMessages({ ...band(events, 2), instructions: " \n " });
    expect(system).toMatch(/^You summarize part of a conversation/);
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
    const { system } = buildSummaryMessages(band(events));
    for (const topic of [
      "Decisions",
      "file path",
      "Errors and their fixes",
      "current state of the task",
    ]) {
      expect(system).toContain(topic);
    }
  });
});
