/**
 * The `autocompact` command end to end, in process: each test runs the
 * command line through `run(argv, io)` (test/helpers/cli.ts) and checks exit
 * code, stdout and stderr. The help, stdin piping and exit codes through the
 * real launcher are in cli/bin.test.ts.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, type ExpectStatic, it } from "vitest";
import { type Compaction, type Entry, parseStream } from "../core/events.ts";
import { encodeJpEntries } from "../core/jp-format.ts";
import { evaluateStream, simulateStream } from "../core/replay.ts";
import { indexTurns } from "../core/turns.ts";
import {
  compaction,
  messageTurns,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
  twoTurnStream,
  visible,
} from "../test/helpers/builders.ts";
import { type CliResult as Result, runCli } from "../test/helpers/cli.ts";
import { generateConversation } from "../test/helpers/conversation.ts";

/** Runs `autocompact …args` with `input` on stdin. */
const cli = (args: readonly string[], input = ""): Promise<Result> =>
  runCli(args, { stdin: input });

/** Parses a stream with core, as the CLI does for plain input. */
function parsed(raw: unknown): Entry[] {
  const result = parseStream(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.issues[0]));
  return result.entries;
}

let dir: string;
let conversation: Entry[];
let plainFile: string;
let jpFile: string;
let compactedFile: string;

/** A stream with a manual summary, an auto band and a manual band, for `--text`. */
function compactedStream(): Entry[] {
  return [
    ...twoTurnStream(),
    ...messageTurns(6).map((entry) => ({ ...entry })),
    turnStart(9000),
    request("last", 9000),
    reasoning("deep\nthought", 9000),
    toolCall("t9", "grep", { q: "x" }, 9000),
    toolResult("t9", "boom", true, 9000),
    compaction(2, 4, 10_000, { summary: { summary: "They set things up." } }),
    compaction(0, 1, 10_001, {
      source: "auto",
      reasoning: "strip",
      tool_calls: { policy: "strip", request: true, response: true },
    }),
    compaction(1, 8, 10_002, { tool_calls: { policy: "strip", request: false, response: true } }),
  ];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-cli-"));
  conversation = generateConversation({ seed: 7, turns: 40 });
  plainFile = join(dir, "plain.json");
  jpFile = join(dir, "events.json");
  compactedFile = join(dir, "compacted.json");
  await writeFile(plainFile, JSON.stringify(conversation));
  await writeFile(jpFile, JSON.stringify(encodeJpEntries(conversation)));
  await writeFile(compactedFile, JSON.stringify(compactedStream()));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.concurrent("autocompact", () => {
  it("prints each command's help on stdout", async ({ expect }) => {
    const names = ["project", "estimate", "evaluate", "simulate"];
    const results = await Promise.all(names.map((name) => cli([name, "--help"])));
    results.forEach((result, i) => {
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout.startsWith(`Usage: autocompact ${names[i]}`)).toBe(true);
    });
    const [, , evaluate, simulate] = results;
    for (const help of [evaluate, simulate]) {
      expect(help?.stdout).toContain(
        `--config '{"conversation":{"compaction":{"auto":{"enabled":true}}}}'`,
      );
      expect(help?.stdout).toContain("--enable");
    }
  });

  it("explains the online commands and their usage errors", async ({ expect }) => {
    const [replayHelp, printHelp, resetHelp, noConversation, badSource, unreachable] =
      await Promise.all([
        cli(["replay", "--help"]),
        cli(["print", "--help"]),
        cli(["reset", "--help"]),
        cli(["print", "--key", "k"]),
        cli(["reset", "-c", "x", "--key", "k", "--source", "robot"]),
        cli(["print", "-c", "x", "--key", "k", "--url", "http://127.0.0.1:9"]),
      ]);
    expect(replayHelp?.stdout).toContain("--conversation ID");
    expect(printHelp?.stdout).toContain("--compacted");
    expect(resetHelp?.stdout).toContain("--source auto|manual");
    expectOneLineError(expect, noConversation, 2);
    expect(noConversation?.stderr).toContain("--conversation");
    expectOneLineError(expect, badSource, 2);
    expectOneLineError(expect, unreachable, 1);
    expect(unreachable?.stderr).toContain("cannot reach http://127.0.0.1:9");
  });

  it("gives up on a service that never answers after --timeout SECONDS", async ({ expect }) => {
    // Takes each request and never answers.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const runs = await Promise.all([
        cli(["print", "-c", "x", "--key", "k", "--url", url, "--timeout", "0.05"]),
        cli(["reset", "-c", "x", "--key", "k", "--url", url, "--timeout", "0.05"]),
        cli(["verify", "-c", "x", "--key", "k", "--url", url, "--timeout", "0.05"]),
        cli(["dlq", "list", "--url", url, "--timeout", "0.05"]),
      ]);
      for (const result of runs) {
        expectOneLineError(expect, result, 1);
        expect(result.stderr).toContain(
          `no answer from ${url} within 0.05 s (the client's timeout)`,
        );
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    const [bad, help] = await Promise.all([
      cli(["print", "-c", "x", "--key", "k", "--timeout", "soon"]),
      cli(["print", "--help"]),
    ]);
    expectOneLineError(expect, bad, 2);
    expect(bad.stderr).toContain(
      '--timeout must be a number of seconds from 0.001 to 86400 (got "soon")',
    );
    expect(help.stdout).toContain("--timeout SECONDS");
  });

  it("reads JP's base64 form as the same conversation", async ({ expect }) => {
    const [jp, plain, forcedPlain] = await Promise.all([
      cli(["project", jpFile]),
      cli(["project", plainFile]),
      cli(["project", "--format", "plain", jpFile]),
    ]);
    expect(jp).toMatchObject({ code: 0, stderr: "" });
    expect(plain).toMatchObject({ code: 0, stderr: "" });
    const jpEvents = JSON.parse(jp.stdout).events as Entry[];
    const plainEvents = JSON.parse(plain.stdout).events as Entry[];
    expect(visible(jpEvents).length).toBeGreaterThan(100);
    expect(visible(jpEvents)).toEqual(visible(plainEvents));
    // Forcing plain keeps the base64 text: the file really is encoded.
    expect(forcedPlain.code).toBe(0);
    expect(visible(JSON.parse(forcedPlain.stdout).events)).not.toEqual(visible(plainEvents));
  });

  it("renders the compacted view for people with --text", async ({ expect }) => {
    const result = await cli(["project", "--text", compactedFile]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const out = result.stdout;
    expect(out).not.toContain("\u001b[");
    expect(out).toContain("── turn 0 ── [auto: reasoning strip, tools strip]\n");
    expect(out).toContain("── turn 1 ── [auto: reasoning strip] [manual: tools strip-responses]\n");
    expect(out).toContain(
      "── turns 2–4 · summary (manual) ──\n  ▸ [Summary of previous conversation]",
    );
    expect(out).toContain("◂ They set things up.");
    expect(out).toContain("→ fs_create_file()\n  ← [compacted] fs_create_file: success");
    expect(out).toContain('→ fs_modify_file({"path":"src/main.rs","old":"a","new":"b"})');
    expect(out).toContain(
      "── turn 8 ── [manual: tools strip-responses]\n  ▸ last\n  ∴ deep thought",
    );
    expect(out).toContain("← ✗ [compacted] grep: error");
    expect(out).not.toContain("thinking about layout");
    expect(out).toMatch(/3 compactions \(1 auto, 2 manual\)/);
  });

  it("evaluates the trigger: unknown window, a firing, and the disabled default", async ({
    expect,
  }) => {
    const now = "2026-04-01T00:00:00Z";
    const [unknown, firing, disabled] = await Promise.all([
      cli(["evaluate", "--enable", plainFile]),
      cli(["evaluate", plainFile, "--enable", "--context-window", "20000", "--now", now]),
      cli(["evaluate", plainFile, "--model", "anthropic/claude-sonnet-4-5"]),
    ]);
    expect(unknown).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(unknown.stdout)).toMatchObject({
      fire: false,
      reason: "context_window_unknown",
      range: { from_turn: 1, to_turn: 36 },
      threshold: null,
      context_window: null,
    });

    expect(firing).toMatchObject({ code: 0, stderr: "" });
    const decision = JSON.parse(firing.stdout);
    const expected = await evaluateStream(parsed(conversation), {
      layers: [{ enabled: true }],
      model: { context_window: 20_000 },
      nowMillis: Date.parse(now),
    });
    if (expected.kind !== "fire") throw new Error(`expected a firing, got ${expected.kind}`);
    expect(decision).toEqual(
      JSON.parse(JSON.stringify({ ...expected.decision, ...expected.band })),
    );
    expect(decision).toMatchObject({
      fire: true,
      reason: "over_threshold",
      range: { from_turn: 1, to_turn: 36 },
      threshold: 15_000,
      context_window: 20_000,
      compaction: {
        type: "compaction",
        source: "auto",
        timestamp: "2026-04-01T00:00:00.000000Z",
        from_turn: 1,
        to_turn: 36,
      },
    });
    expect(decision.estimated_tokens_after).toBeLessThan(decision.estimated_tokens);

    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout)).toMatchObject({
      fire: false,
      reason: "disabled",
      context_window: 200_000,
    });
    expect(disabled.stderr).toMatch(/^autocompact: note: .*--enable.*\n$/);
  });

  it("simulates firings in non-overlapping bands and writes the final stream", async ({
    expect,
  }) => {
    const out = join(dir, "simulated.json");
    const result = await cli([
      "simulate",
      plainFile,
      "--context-window",
      "30000",
      "--enable",
      "--out",
      out,
    ]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const firings = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(firings.length).toBeGreaterThan(0);
    let previousTo = -1;
    for (const firing of firings) {
      expect(Object.keys(firing)).toEqual([
        "turn",
        "from_turn",
        "to_turn",
        "estimated_tokens",
        "estimated_tokens_after",
        "threshold",
        "context_window",
      ]);
      expect(firing.threshold).toBe(22_500);
      expect(firing.estimated_tokens).toBeGreaterThan(firing.threshold);
      expect(firing.from_turn).toBeGreaterThanOrEqual(1); // keep_first
      expect(firing.to_turn).toBeLessThanOrEqual(firing.turn - 3); // keep_last
      expect(firing.from_turn).toBeGreaterThan(previousTo);
      previousTo = firing.to_turn;
    }
    const expected = await simulateStream(parsed(conversation), {
      layers: [{ enabled: true }],
      model: { context_window: 30_000 },
    });
    expect(firings.map(({ turn, from_turn, to_turn }) => ({ turn, from_turn, to_turn }))).toEqual(
      expected.firings.map(({ turn, from_turn, to_turn }) => ({ turn, from_turn, to_turn })),
    );

    const written = parsed(JSON.parse(await readFile(out, "utf8")));
    const bands = written.filter((entry): entry is Compaction => entry.type === "compaction");
    expect(bands).toHaveLength(firings.length);
    expect(bands.every((band) => band.source === "auto" && band.trigger !== undefined)).toBe(true);
    expect(written.filter((entry) => entry.type !== "compaction")).toEqual(parsed(conversation));
    expect(indexTurns(written).turnCount).toBe(40);
  });

  it("takes --config as a TOML file and as inline JSON", async ({ expect }) => {
    const toml = join(dir, "autocompact.toml");
    await writeFile(
      toml,
      [
        "[conversation.compaction.auto]",
        "enabled = true",
        "trigger_ratio = 0.5",
        "",
        "[conversation.compaction.auto.rule]",
        "keep_first = 2",
        "keep_last = 4",
        'tool_calls = "omit"',
        "",
      ].join("\n"),
    );
    const inline = JSON.stringify({
      conversation: { compaction: { auto: { enabled: true, min_turns: 50 } } },
    });
    const [simulated, evaluated] = await Promise.all([
      cli(["simulate", plainFile, "--context-window", "40000", "--config", toml]),
      cli(["evaluate", plainFile, "--context-window", "20000", "--config", inline]),
    ]);
    expect(simulated).toMatchObject({ code: 0, stderr: "" });
    const firings = simulated.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(firings.length).toBeGreaterThan(0);
    for (const firing of firings) {
      expect(firing.threshold).toBe(20_000);
      expect(firing.from_turn).toBeGreaterThanOrEqual(2);
      expect(firing.to_turn).toBeLessThanOrEqual(firing.turn - 4);
    }

    expect(evaluated).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(evaluated.stdout)).toMatchObject({ fire: false, reason: "min_turns" });
  });

  it("rejects an invalid config naming the key", async ({ expect }) => {
    const toml = join(dir, "bad.toml");
    await writeFile(toml, "[conversation.compaction.auto]\ntrigger_ratio = 1.5\n");
    const inline = '{"conversation":{"compaction":{"auto":{"trigger_ratio":0}}}}';
    const results = await Promise.all([
      cli(["evaluate", plainFile, "--config", toml]),
      cli(["simulate", plainFile, "--context-window", "1000", "--config", inline]),
    ]);
    for (const result of results) {
      expectOneLineError(expect, result, 1);
      expect(result.stderr).toContain("conversation.compaction.auto.trigger_ratio");
    }
  });

  it("fails on bad input with one line on stderr and nothing on stdout", async ({ expect }) => {
    const invalidJson = join(dir, "invalid.json");
    const schema = join(dir, "schema.json");
    await writeFile(invalidJson, '[{"type": "turn_start",\n');
    await writeFile(
      schema,
      JSON.stringify([
        { type: "turn_start", timestamp: "2026-01-01T00:00:00Z" },
        { type: "tool_call_response", timestamp: "2026-01-01T00:00:00Z", id: "a", content: 3 },
      ]),
    );
    const cases: [string[], number, RegExp][] = [
      [["project", invalidJson], 1, /^autocompact: invalid JSON in .*invalid\.json: /],
      [
        ["estimate", schema],
        1,
        /^autocompact: entry 1 \(tool_call_response\)\.content: expected string/,
      ],
      [["project", join(dir, "missing.json")], 1, /^autocompact: cannot read .*: no such file/],
      [["estimate"], 1, /JSON array/],
      [["project", "--bogus", plainFile], 2, /Unknown option '--bogus'/],
      [["evaluate", "--context-window", "lots", plainFile], 2, /--context-window/],
      [["simulate", plainFile], 2, /--context-window/],
      [["estimate", "--format", "xml", plainFile], 2, /--format/],
      [["frobnicate"], 2, /unknown command/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args, "{}")));
    results.forEach((result, i) => {
      const [, code, message] = cases[i] as (typeof cases)[number];
      expectOneLineError(expect, result, code);
      expect(result.stderr).toMatch(message);
    });
  });

  it("stops with exit 1 when a summary rule fires, since a summary is never faked", async ({
    expect,
  }) => {
    const config =
      '{"conversation":{"compaction":{"auto":{"enabled":true,"rule":{"summary":{}}}}}}';
    const result = await cli([
      "simulate",
      plainFile,
      "--context-window",
      "20000",
      "--config",
      config,
    ]);
    expectOneLineError(expect, result, 1);
    expect(result.stderr).toContain("summarizer");
  });
});

/** Exit `code`, nothing on stdout, exactly one `autocompact: …` line on stderr. */
function expectOneLineError(expect: ExpectStatic, result: Result, code: number): void {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^autocompact: [^\n]+\n$/);
}
