/**
 * Provider transcripts on the command line (docs/architecture.md §15): a JSON array
 * of turns, each the array of messages that turn added, in OpenAI Chat or
 * Anthropic Messages format. Detection and `--format`, the same numbers as
 * the equivalent JP stream, `convert` round trips, `project --to`, and the
 * one-line errors. Every test runs the command in process through
 * `run(argv, io)` (test/helpers/cli.ts); expectations are literals.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type CliResult as Result, runCli } from "../test/helpers/cli.ts";
import { ANTHROPIC_LS_TURN } from "../test/helpers/format-samples.ts";

/** Runs `autocompact …args` with `input` on stdin. */
const cli = (args: readonly string[], input = ""): Promise<Result> =>
  runCli(args, { stdin: input });

/** The stamps transcripts get: turn `n` at `n` seconds after the epoch. */
const T0 = "1970-01-01T00:00:00.000000Z";
const T1 = "1970-01-01T00:00:01.000000Z";

/** Two Anthropic turns: signed thinking, a tool round trip, then a text block answer. */
const ANTHROPIC = [
  ANTHROPIC_LS_TURN,
  [
    { role: "user", content: "Thanks!" },
    { role: "assistant", content: [{ type: "text", text: "You're welcome." }] },
  ],
];

/** {@link ANTHROPIC} as it comes back: a single plain text block is written as a string (§15). */
const ANTHROPIC_NORMALIZED = [
  ANTHROPIC[0],
  [
    { role: "user", content: "Thanks!" },
    { role: "assistant", content: "You're welcome." },
  ],
];

/** {@link ANTHROPIC} as JP events (the thinking signature in metadata). */
const ANTHROPIC_EVENTS = [
  { type: "turn_start", timestamp: T0 },
  { type: "chat_request", timestamp: T0, content: "List the files." },
  {
    type: "chat_response",
    timestamp: T0,
    reasoning: "I should call ls.",
    metadata: { "anthropic-messages": { block: { type: "thinking", signature: "sig-abc" } } },
  },
  {
    type: "tool_call_request",
    timestamp: T0,
    id: "toolu_1",
    name: "ls",
    arguments: { dir: "." },
  },
  {
    type: "tool_call_response",
    timestamp: T0,
    id: "toolu_1",
    content: "a.txt b.txt",
    is_error: false,
  },
  { type: "chat_response", timestamp: T0, message: "Two files: a.txt and b.txt." },
  { type: "turn_start", timestamp: T1 },
  { type: "chat_request", timestamp: T1, content: "Thanks!" },
  { type: "chat_response", timestamp: T1, message: "You're welcome." },
];

/** Two OpenAI Chat turns: a tool call (arguments with a space) and its result, then a follow-up. */
const CHAT = [
  [
    { role: "user", content: "What is in README.md?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read_file", arguments: '{"path": "README.md"}' },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "# autocompact\nKeeps agents small." },
    { role: "assistant", content: "It describes autocompact." },
  ],
  [
    { role: "user", content: "Thanks!" },
    { role: "assistant", content: "You're welcome." },
  ],
];

/** {@link CHAT} as it comes back: tool arguments as posted, the string itself (§15). */
const CHAT_NORMALIZED = [
  [
    CHAT[0]?.[0],
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read_file", arguments: '{"path": "README.md"}' },
        },
      ],
    },
    ...(CHAT[0]?.slice(2) ?? []),
  ],
  CHAT[1],
];

const CHAT_EVENTS = [
  { type: "turn_start", timestamp: T0 },
  { type: "chat_request", timestamp: T0, content: "What is in README.md?" },
  {
    type: "tool_call_request",
    timestamp: T0,
    id: "call_1",
    name: "read_file",
    arguments: { path: "README.md" },
    // The posted text, kept because re-serializing would lose its space (§15).
    metadata: { "openai-chat": { arguments: '{"path": "README.md"}' } },
  },
  {
    type: "tool_call_response",
    timestamp: T0,
    id: "call_1",
    content: "# autocompact\nKeeps agents small.",
    is_error: false,
  },
  { type: "chat_response", timestamp: T0, message: "It describes autocompact." },
  { type: "turn_start", timestamp: T1 },
  { type: "chat_request", timestamp: T1, content: "Thanks!" },
  { type: "chat_response", timestamp: T1, message: "You're welcome." },
];

/** Text only: the same events in either format, so it reads as OpenAI Chat. */
const TEXT = [
  [
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ],
];

/** A user image: Chat's `image_url` part. */
const CHAT_IMAGE = [
  [
    {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
      ],
    },
    { role: "assistant", content: "A cat." },
  ],
];

/** A user image: Anthropic's `image` block (no tool or thinking block anywhere). */
const ANTHROPIC_IMAGE = [
  [
    {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
      ],
    },
    { role: "assistant", content: "A cat." },
  ],
];

/** Text in its first turn, an Anthropic tool call only in its second. */
const ANTHROPIC_LATE = [
  TEXT[0],
  [
    { role: "user", content: "Look." },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_9", name: "look", input: {} }],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "done" }] },
    { role: "assistant", content: "Seen." },
  ],
];

/** A system prompt leading each turn. */
const WITH_SYSTEM = [
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ],
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "bye" },
    { role: "assistant", content: "ciao" },
  ],
];

/** Turn 2 holds a thinking block without its signature. */
const BAD_ANTHROPIC = [
  TEXT[0],
  [
    { role: "user", content: "go" },
    { role: "assistant", content: "ok" },
  ],
  [
    { role: "user", content: "x" },
    { role: "assistant", content: [{ type: "thinking", thinking: "hm" }] },
  ],
];

/** Turn 1's tool call has arguments that are not JSON. */
const BAD_CHAT = [
  TEXT[0],
  [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{dir" } }],
    },
    { role: "tool", tool_call_id: "c1", content: "ok" },
  ],
];

/** Eight Anthropic agent turns, large enough for automatic compaction to fire at a small window. */
function agentTranscript(): unknown[][] {
  return Array.from({ length: 8 }, (_, t) => [
    { role: "user", content: `Task ${t}: fix the failing build in module ${t}.` },
    {
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: `Module ${t} needs reading first. `.repeat(4),
          signature: `sig-${t}`,
        },
        { type: "tool_use", id: `toolu_${t}`, name: "read_file", input: { path: `src/m${t}.ts` } },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `toolu_${t}`,
          content: `export const m${t} = 1;\n`.repeat(20),
        },
      ],
    },
    { role: "assistant", content: `Fixed module ${t}.` },
  ]);
}

/** A band stripping turn 0's reasoning and tool payloads. */
const STRIP_TURN_0 = {
  type: "compaction",
  timestamp: "1970-01-01T00:00:02.000000Z",
  from_turn: 0,
  to_turn: 0,
  source: "manual",
  reasoning: "strip",
  tool_calls: { policy: "strip", request: true, response: true },
};

/** A band summarizing turn 0. */
const SUMMARIZE_TURN_0 = {
  type: "compaction",
  timestamp: "1970-01-01T00:00:02.000000Z",
  from_turn: 0,
  to_turn: 0,
  source: "manual",
  summary: { summary: "They listed two files." },
};

let dir: string;
const files: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-formats-"));
  const fixtures: Record<string, unknown> = {
    anthropic: ANTHROPIC,
    chat: CHAT,
    text: TEXT,
    chatImage: CHAT_IMAGE,
    anthropicImage: ANTHROPIC_IMAGE,
    anthropicLate: ANTHROPIC_LATE,
    withSystem: WITH_SYSTEM,
    badAnthropic: BAD_ANTHROPIC,
    badChat: BAD_CHAT,
    agent: agentTranscript(),
    stripped: [...ANTHROPIC_EVENTS, STRIP_TURN_0],
    summarized: [...ANTHROPIC_EVENTS, SUMMARIZE_TURN_0],
  };
  for (const [name, value] of Object.entries(fixtures)) {
    files[name] = join(dir, `${name}.json`);
    await writeFile(files[name], JSON.stringify(value));
  }
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The path of fixture `name`. */
function file(name: string): string {
  const path = files[name];
  if (path === undefined) throw new Error(`no fixture ${name}`);
  return path;
}

/** Parses a successful run's stdout. */
function output(result: Result): unknown {
  if (result.code !== 0 || result.stderr !== "") {
    throw new Error(`exit ${result.code}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

describe("provider transcripts: detection and --format", () => {
  it("reads tool_use and thinking blocks as Anthropic Messages", async ({ expect }) => {
    const [auto, forced, late] = await Promise.all([
      cli(["convert", file("anthropic")]),
      cli(["convert", file("anthropic"), "--format", "anthropic-messages"]),
      cli(["convert", file("anthropicLate")]),
    ]);
    expect(output(auto)).toEqual(ANTHROPIC_EVENTS);
    expect(forced).toEqual(auto);
    // The Anthropic block is only in turn 1: the whole transcript is searched.
    expect(output(late)).toEqual([
      { type: "turn_start", timestamp: T0 },
      { type: "chat_request", timestamp: T0, content: "hi" },
      { type: "chat_response", timestamp: T0, message: "hello" },
      { type: "turn_start", timestamp: T1 },
      { type: "chat_request", timestamp: T1, content: "Look." },
      { type: "tool_call_request", timestamp: T1, id: "toolu_9", name: "look", arguments: {} },
      {
        type: "tool_call_response",
        timestamp: T1,
        id: "toolu_9",
        content: "done",
        is_error: false,
      },
      { type: "chat_response", timestamp: T1, message: "Seen." },
    ]);
  });

  it("reads the tool role, tool_calls and image_url parts as OpenAI Chat", async ({ expect }) => {
    const [auto, forced, image] = await Promise.all([
      cli(["convert", file("chat")]),
      cli(["convert", file("chat"), "--format", "openai-chat"]),
      cli(["convert", file("chatImage")]),
    ]);
    expect(output(auto)).toEqual(CHAT_EVENTS);
    expect(forced).toEqual(auto);
    expect(output(image)).toEqual([
      { type: "turn_start", timestamp: T0 },
      {
        type: "chat_request",
        timestamp: T0,
        content: "What is this?",
        metadata: { "openai-chat": { message: { content: CHAT_IMAGE[0]?.[0]?.content } } },
      },
      { type: "chat_response", timestamp: T0, message: "A cat." },
    ]);
  });

  it("reads an Anthropic image block as Anthropic Messages", async ({ expect }) => {
    const image = await cli(["convert", file("anthropicImage")]);
    expect(output(image)).toEqual([
      { type: "turn_start", timestamp: T0 },
      {
        type: "chat_request",
        timestamp: T0,
        content: "What is this?",
        metadata: { "anthropic-messages": { content: ANTHROPIC_IMAGE[0]?.[0]?.content } },
      },
      { type: "chat_response", timestamp: T0, message: "A cat." },
    ]);
  });

  it("reads a text-only transcript as OpenAI Chat, unless --format says otherwise", async ({
    expect,
  }) => {
    const badRole = JSON.stringify([[{ role: "bot", content: "hi" }]]);
    const [text, auto, forced] = await Promise.all([
      cli(["convert", file("text")]),
      cli(["convert"], badRole),
      cli(["convert", "--format", "anthropic-messages"], badRole),
    ]);
    expect(output(text)).toEqual([
      { type: "turn_start", timestamp: T0 },
      { type: "chat_request", timestamp: T0, content: "hi" },
      { type: "chat_response", timestamp: T0, message: "hello" },
    ]);
    expect(auto.code).toBe(1);
    expect(auto.stderr).toMatch(
      /^autocompact: stdin \(openai-chat transcript\), turn 0: messages\[0\]/,
    );
    expect(forced.code).toBe(1);
    expect(forced.stderr).toBe(
      'autocompact: stdin (anthropic-messages transcript), turn 0: messages[0].role: role must be "user" or "assistant"\n',
    );
  });

  it("lets an explicit --format override detection", async ({ expect }) => {
    const [chatAsAnthropic, anthropicAsChat] = await Promise.all([
      cli(["convert", file("chat"), "--format", "anthropic-messages"]),
      cli(["estimate", file("anthropic"), "--format", "openai-chat"]),
    ]);
    expect(chatAsAnthropic).toEqual({
      code: 1,
      stdout: "",
      stderr: `autocompact: ${file("chat")} (anthropic-messages transcript), turn 0: messages[1].content: content must be a string or an array of content blocks; messages[1]: Unrecognized key: "tool_calls"; messages[2].role: role must be "user" or "assistant"\n`,
    });
    expect(anthropicAsChat).toMatchObject({ code: 1, stdout: "" });
    expect(anthropicAsChat.stderr).toMatch(
      /^autocompact: \S+anthropic\.json \(openai-chat transcript\), turn 0: messages\[1\]\.content\[0\]\.type: unknown content part type "thinking"/,
    );
  });

  it("refuses a bad --format or --to with exit 2 and the list of formats", async ({ expect }) => {
    const [format, formatEstimate, convertTo, projectTo, both] = await Promise.all([
      cli(["convert", file("anthropic"), "--format", "anthropic"]),
      cli(["estimate", file("anthropic"), "--format", "chat"]),
      cli(["convert", file("anthropic"), "--to", "anthropic"]),
      cli(["project", file("anthropic"), "--to", "gemini"]),
      cli(["project", file("anthropic"), "--to", "openai-chat", "--text"]),
    ]);
    expect(format).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'autocompact: convert: --format must be auto, plain, jp, openai-chat, openai-responses, anthropic-messages, ai-sdk (got "anthropic") (see autocompact convert --help)\n',
    });
    expect(formatEstimate).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'autocompact: estimate: --format must be auto, plain, jp, openai-chat, openai-responses, anthropic-messages, ai-sdk (got "chat") (see autocompact estimate --help)\n',
    });
    expect(convertTo).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'autocompact: convert: --to must be jp, openai-chat, openai-responses, anthropic-messages, ai-sdk (got "anthropic") (see autocompact convert --help)\n',
    });
    expect(projectTo).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'autocompact: project: --to must be jp, openai-chat, openai-responses, anthropic-messages, ai-sdk (got "gemini") (see autocompact project --help)\n',
    });
    expect(both).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "autocompact: project: give --text or --to, not both (see autocompact project --help)\n",
    });
  });
});

describe("provider transcripts: the same numbers as the JP stream", () => {
  it("estimates, evaluates, simulates and projects a transcript as its JP stream", async ({
    expect,
  }) => {
    const converted = await cli(["convert", file("agent"), "--to", "jp"]);
    const jpFile = join(dir, "agent.jp.json");
    await writeFile(jpFile, converted.stdout);
    expect(converted).toMatchObject({ code: 0, stderr: "" });

    const both = (args: readonly string[]) =>
      Promise.all([
        cli([args[0] as string, file("agent"), ...args.slice(1)]),
        cli([args[0] as string, jpFile, ...args.slice(1)]),
      ]);
    const simulateOut = (name: string) => join(dir, `agent.sim.${name}.json`);
    const [estimate, evaluate, simulate, project, projectTo] = await Promise.all([
      both(["estimate"]),
      both(["evaluate", "--context-window", "1000", "--enable", "--now", T0]),
      Promise.all([
        cli([
          "simulate",
          file("agent"),
          "--context-window",
          "1000",
          "--enable",
          "--out",
          simulateOut("t"),
        ]),
        cli([
          "simulate",
          jpFile,
          "--context-window",
          "1000",
          "--enable",
          "--out",
          simulateOut("j"),
        ]),
      ]),
      both(["project"]),
      both(["project", "--to", "anthropic-messages"]),
    ]);

    // Per turn: request 45-46 B, thinking 132, "read_file" 9 + {"path":"src/mN.ts"} 20,
    // result 480, answer 15: 626 bytes × 8 turns.
    expect(output(estimate[0])).toEqual({ chars: 5008, estimated_tokens: 1252, turn_count: 8 });
    expect(estimate[1]).toEqual(estimate[0]);

    expect(output(evaluate[0])).toMatchObject({
      fire: true,
      reason: "over_threshold",
      range: { from_turn: 1, to_turn: 4 },
      estimated_tokens: 1252,
      estimated_tokens_after: 724,
      threshold: 750,
      context_window: 1000,
    });
    expect(output(evaluate[1])).toEqual(output(evaluate[0]));

    expect(simulate[0]).toMatchObject({ code: 0, stderr: "" });
    expect(
      simulate[0].stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual([
      {
        turn: 5,
        from_turn: 1,
        to_turn: 2,
        estimated_tokens: 939,
        estimated_tokens_after: 675,
        threshold: 750,
        context_window: 1000,
      },
      {
        turn: 6,
        from_turn: 3,
        to_turn: 3,
        estimated_tokens: 831.5,
        estimated_tokens_after: 699.5,
        threshold: 750,
        context_window: 1000,
      },
      {
        turn: 7,
        from_turn: 4,
        to_turn: 4,
        estimated_tokens: 856,
        estimated_tokens_after: 724,
        threshold: 750,
        context_window: 1000,
      },
    ]);
    expect(simulate[1]).toEqual(simulate[0]);
    expect(JSON.parse(await readFile(simulateOut("t"), "utf8"))).toEqual(
      JSON.parse(await readFile(simulateOut("j"), "utf8")),
    );

    expect(output(project[0])).toEqual(output(project[1]));
    expect((output(project[0]) as { estimated_tokens: number }).estimated_tokens).toBe(1252);
    expect(projectTo[1]).toEqual(projectTo[0]);
    expect(output(projectTo[0])).toEqual({
      format: "anthropic-messages",
      messages: agentTranscript().flat(),
      turns: Array.from({ length: 8 }, (_, kept) => ({ kept })),
      estimated_tokens: 1252,
    });
  });

  it("estimates the small fixtures by the bytes of their text fields", async ({ expect }) => {
    const [anthropic, chat, text] = await Promise.all([
      cli(["estimate", file("anthropic")]),
      cli(["estimate", file("chat")]),
      cli(["estimate", file("text")]),
    ]);
    // 15 + 17 (thinking) + 2 + 11 (ls {"dir":"."}) + 11 + 27 + 7 + 15
    expect(output(anthropic)).toEqual({ chars: 105, estimated_tokens: 26.25, turn_count: 2 });
    // 21 + 9 + 20 + 33 + 25 + 7 + 15
    expect(output(chat)).toEqual({ chars: 130, estimated_tokens: 32.5, turn_count: 2 });
    expect(output(text)).toEqual({ chars: 7, estimated_tokens: 1.75, turn_count: 1 });
  });
});

describe("convert", () => {
  it("round-trips a transcript through JP up to §15's normalizations", async ({ expect }) => {
    const anthropicJp = join(dir, "anthropic.jp.json");
    const chatJp = join(dir, "chat.jp.json");
    const [a, c] = await Promise.all([
      cli(["convert", file("anthropic"), "--to", "jp"]),
      cli(["convert", file("chat")]),
    ]);
    await writeFile(anthropicJp, a.stdout);
    await writeFile(chatJp, c.stdout);
    const [anthropicBack, chatBack, anthropicAsChat, chatAsAnthropic, direct] = await Promise.all([
      cli(["convert", anthropicJp, "--to", "anthropic-messages"]),
      cli(["convert", chatJp, "--to", "openai-chat"]),
      cli(["convert", anthropicJp, "--to", "openai-chat"]),
      cli(["convert", chatJp, "--to", "anthropic-messages"]),
      cli(["convert", file("anthropic"), "--to", "anthropic-messages"]),
    ]);
    expect(output(anthropicBack)).toEqual(ANTHROPIC_NORMALIZED);
    expect(anthropicBack.stdout).toBe(`${JSON.stringify(ANTHROPIC_NORMALIZED)}\n`);
    expect(direct).toEqual(anthropicBack);
    expect(output(chatBack)).toEqual(CHAT_NORMALIZED);
    // Across formats: thinking has no Chat field; tool calls change shape.
    expect(output(anthropicAsChat)).toEqual([
      [
        { role: "user", content: "List the files." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "toolu_1",
              type: "function",
              function: { name: "ls", arguments: '{"dir":"."}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "a.txt b.txt" },
        { role: "assistant", content: "Two files: a.txt and b.txt." },
      ],
      [
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
    ]);
    expect(output(chatAsAnthropic)).toEqual([
      [
        { role: "user", content: "What is in README.md?" },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "call_1", name: "read_file", input: { path: "README.md" } },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "call_1",
              content: "# autocompact\nKeeps agents small.",
            },
          ],
        },
        { role: "assistant", content: "It describes autocompact." },
      ],
      [
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
    ]);
  });

  it("merges adjacent same-role Anthropic messages on the way back", async ({ expect }) => {
    const transcript = [
      [
        { role: "user", content: "a" },
        { role: "user", content: [{ type: "text", text: "b" }] },
        {
          role: "assistant",
          content: [{ type: "thinking", thinking: "t", signature: "s" }],
        },
        { role: "assistant", content: "c" },
      ],
    ];
    const back = await cli(["convert", "--to", "anthropic-messages"], JSON.stringify(transcript));
    expect(output(back)).toEqual([
      [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "t", signature: "s" },
            { type: "text", text: "c" },
          ],
        },
      ],
    ]);
  });

  it("leaves a JP stream's compactions out of a transcript, and keeps them in JP", async ({
    expect,
  }) => {
    const [anthropic, chat, jp] = await Promise.all([
      cli(["convert", file("stripped"), "--to", "anthropic-messages"]),
      cli(["convert", file("summarized"), "--to", "openai-chat"]),
      cli(["convert", file("stripped")]),
    ]);
    expect(output(anthropic)).toEqual(ANTHROPIC_NORMALIZED);
    const text = JSON.stringify(output(chat));
    expect(text).not.toContain("[compacted]");
    expect(text).not.toContain("Summary");
    expect(output(chat)).toHaveLength(2);
    expect(output(jp)).toEqual([...ANTHROPIC_EVENTS, STRIP_TURN_0]);
  });
});

describe("project --to", () => {
  it("shows the compacted provider messages of a stream with a compaction", async ({ expect }) => {
    const [anthropic, chat, summarized, jp] = await Promise.all([
      cli(["project", file("stripped"), "--to", "anthropic-messages"]),
      cli(["project", file("stripped"), "--to", "openai-chat"]),
      cli(["project", file("summarized"), "--to", "openai-chat"]),
      cli(["project", file("stripped"), "--to", "jp"]),
    ]);
    // 105 bytes less the thinking (17), {"dir":"."} → {} (−9), "a.txt b.txt" → the marker (+12).
    expect(output(anthropic)).toEqual({
      format: "anthropic-messages",
      messages: [
        { role: "user", content: "List the files." },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "ls", input: {} }],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "[compacted] ls: success" },
          ],
        },
        { role: "assistant", content: "Two files: a.txt and b.txt." },
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
      turns: [{ kept: 0 }, { kept: 1 }],
      estimated_tokens: 91 / 4,
    });
    expect(output(chat)).toEqual({
      format: "openai-chat",
      messages: [
        { role: "user", content: "List the files." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "toolu_1", type: "function", function: { name: "ls", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "[compacted] ls: success" },
        { role: "assistant", content: "Two files: a.txt and b.txt." },
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
      turns: [{ kept: 0 }, { kept: 1 }],
      estimated_tokens: 91 / 4,
    });
    expect(output(summarized)).toEqual({
      format: "openai-chat",
      messages: [
        { role: "user", content: "[Summary of previous conversation]" },
        { role: "assistant", content: "They listed two files." },
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
      turns: [{ summary: { from: 0, to: 0 } }, { kept: 1 }],
      estimated_tokens: 19.5,
    });
    // --to jp is the default JSON answer.
    expect(Object.keys(output(jp) as object)).toEqual(["events", "turns", "estimated_tokens"]);
  });

  it("answers a transcript in its own format as it was given (normalized)", async ({ expect }) => {
    const [anthropic, chat] = await Promise.all([
      cli(["project", file("anthropic"), "--to", "anthropic-messages"]),
      cli(["project", file("chat"), "--to", "openai-chat"]),
    ]);
    expect(output(anthropic)).toEqual({
      format: "anthropic-messages",
      messages: ANTHROPIC_NORMALIZED.flat(),
      turns: [{ kept: 0 }, { kept: 1 }],
      estimated_tokens: 26.25,
    });
    expect(output(chat)).toEqual({
      format: "openai-chat",
      messages: CHAT_NORMALIZED.flat(),
      turns: [{ kept: 0 }, { kept: 1 }],
      estimated_tokens: 32.5,
    });
  });
});

describe("transcript errors", () => {
  it("names the file, the provider, the turn and the message path in one line", async ({
    expect,
  }) => {
    const [anthropic, chat, fromStdin, notTurns, emptyTurn, notArray] = await Promise.all([
      cli(["estimate", file("badAnthropic"), "--format", "anthropic-messages"]),
      cli(["project", file("badChat")]),
      cli(["convert", "-"], JSON.stringify(BAD_ANTHROPIC)),
      cli(["convert"], JSON.stringify([TEXT[0], { role: "user", content: "x" }])),
      cli(["convert"], JSON.stringify([TEXT[0], []])),
      cli(["convert", "--format", "anthropic-messages"], '{"role":"user"}'),
    ]);
    expect(anthropic).toEqual({
      code: 1,
      stdout: "",
      stderr: `autocompact: ${file("badAnthropic")} (anthropic-messages transcript), turn 2: messages[1].content[0].signature: a thinking block needs its signature: the API requires thinking blocks back unchanged\n`,
    });
    expect(chat).toMatchObject({ code: 1, stdout: "" });
    expect(chat.stderr).toMatch(
      /^autocompact: \S+badChat\.json \(openai-chat transcript\), turn 1: messages\[1\]\.tool_calls\[0\]\.function\.arguments: [^\n]+\n$/,
    );
    // The thinking block is the only Anthropic sign in it, and it is found.
    expect(fromStdin).toMatchObject({ code: 1, stdout: "" });
    expect(fromStdin.stderr).toBe(
      "autocompact: stdin (anthropic-messages transcript), turn 2: messages[1].content[0].signature: a thinking block needs its signature: the API requires thinking blocks back unchanged\n",
    );
    expect(notTurns).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "autocompact: stdin (openai-chat transcript), turn 1: messages: Invalid input: expected array, received object\n",
    });
    expect(emptyTurn).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "autocompact: stdin (openai-chat transcript), turn 1: messages: a turn needs at least one message\n",
    });
    expect(notArray).toEqual({
      code: 1,
      stdout: "",
      stderr: "autocompact: stdin: a transcript must be a JSON array of turns\n",
    });
  });

  it("refuses a system prompt unless --drop-system, which drops it", async ({ expect }) => {
    const [refused, refusedAnthropic, dropped, estimate] = await Promise.all([
      cli(["convert", file("withSystem")]),
      cli(["estimate", file("withSystem"), "--format", "anthropic-messages"]),
      cli(["convert", file("withSystem"), "--drop-system"]),
      cli(["estimate", file("withSystem"), "--drop-system"]),
    ]);
    expect(refused).toMatchObject({ code: 1, stdout: "" });
    expect(refused.stderr).toMatch(
      /^autocompact: \S+withSystem\.json \(openai-chat transcript\), turn 0: messages\[0\]: system and developer prompts are not conversation turns[^\n]*--drop-system[^\n]*\n$/,
    );
    expect(refusedAnthropic).toMatchObject({ code: 1, stdout: "" });
    expect(refusedAnthropic.stderr).toMatch(
      /^autocompact: \S+withSystem\.json \(anthropic-messages transcript\), turn 0: messages\[0\]: system prompts are not conversation turns[^\n]*--drop-system[^\n]*\n$/,
    );
    expect(output(dropped)).toEqual([
      { type: "turn_start", timestamp: T0 },
      { type: "chat_request", timestamp: T0, content: "hi" },
      { type: "chat_response", timestamp: T0, message: "hello" },
      { type: "turn_start", timestamp: T1 },
      { type: "chat_request", timestamp: T1, content: "bye" },
      { type: "chat_response", timestamp: T1, message: "ciao" },
    ]);
    // The system prompt is not counted: "hi" "hello" "bye" "ciao".
    expect(output(estimate)).toEqual({ chars: 14, estimated_tokens: 3.5, turn_count: 2 });
  });
});

describe("help", () => {
  it("lists convert, and says which formats each reading command takes", async ({ expect }) => {
    const top = await cli(["--help"]);
    expect(top).toMatchObject({ code: 0, stderr: "" });
    expect(top.stdout).toMatch(/^ {2}convert +convert a stream or provider transcript/m);
    expect(top.stdout).toContain(
      "transcript (openai-chat, openai-responses, anthropic-messages, ai-sdk)",
    );

    const names = ["estimate", "evaluate", "simulate", "project", "convert", "replay"];
    const helps = await Promise.all(names.map((name) => cli([name, "--help"])));
    helps.forEach((help, i) => {
      expect(help).toMatchObject({ code: 0, stderr: "" });
      const [usage] = help.stdout.split("\n\n");
      expect(usage).toMatch(new RegExp(`^Usage: autocompact ${names[i]} `));
      expect(usage).toContain("[--format …]");
      expect(help.stdout).toContain(
        "plain, jp, openai-chat, openai-responses, anthropic-messages, ai-sdk",
      );
      expect(help.stdout).toContain("--drop-system");
      expect(help.stdout).toContain("provider transcript: a JSON array of turns");
    });
    const [, , , project, convert, replay] = helps;
    expect(project?.stdout).toContain("--to FORMAT");
    expect(project?.stdout).toContain(
      "(openai-chat, openai-responses, anthropic-messages, ai-sdk)",
    );
    expect(convert?.stdout).toContain(
      "--to openai-chat | openai-responses | anthropic-messages | ai-sdk",
    );
    expect(replay?.stdout).toContain("(--drop-system is sent as drop_system)");
  });
});
