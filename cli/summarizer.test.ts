/**
 * `evaluate` and `simulate` with a summarizer, end to end: the command run
 * in process (test/helpers/cli.ts), the OpenAI-compatible adapter against a
 * stub model server. A summary rule's text comes from the model, given the
 * raw events of the band; without a summarizer it is reported, never faked.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Compaction, Entry } from "../core/events.ts";
import { simulateStream } from "../core/replay.ts";
import { message, request, toolCall, toolResult, turnStart } from "../test/helpers/builders.ts";
import { type CliResult as Result, runCli } from "../test/helpers/cli.ts";
import { chatCompletion, type ModelStub, startModelStub } from "../test/helpers/model-stub.ts";

/** Runs `autocompact …args` with no OpenAI settings but those in `env`. */
const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<Result> =>
  runCli(args, { env: { OPENAI_BASE_URL: "", OPENAI_API_KEY: "", ...env } });

/** 8 turns of ~2 KB each: with a 3,000-token window the trigger fires after turn 5. */
function stream(): Entry[] {
  const out: Entry[] = [];
  for (let t = 0; t < 8; t++) {
    const s = t * 60;
    out.push(
      turnStart(s),
      request(`question ${t}`, s),
      toolCall(`c${t}`, "read_file", { path: `src/f${t}.ts` }, s + 1),
      toolResult(`c${t}`, `body of f${t} ${"z".repeat(2_000)}`, false, s + 2),
      message(`answer ${t}`, s + 3),
    );
  }
  return out;
}

const SUMMARY_RULE = JSON.stringify({
  conversation: {
    compaction: {
      auto: { enabled: true, rule: { summary: { instructions: "CLI test instructions." } } },
    },
  },
});

let stub: ModelStub;
let dir: string;
let file: string;
let calls = 0;
beforeAll(async () => {
  stub = await startModelStub(() => chatCompletion(`SUMMARY ${++calls}`, 700, 9));
  dir = await mkdtemp(join(tmpdir(), "autocompact-summary-cli-"));
  file = join(dir, "events.json");
  await writeFile(file, JSON.stringify(stream()));
});
afterEach(() => {
  stub.requests.length = 0;
  calls = 0;
  stub.reply(() => chatCompletion(`SUMMARY ${++calls}`, 700, 9));
});
afterAll(async () => {
  await stub.close();
  await rm(dir, { recursive: true, force: true });
});

const openai = () => ["--summarizer", "openai-compatible", "--base-url", `${stub.url}/v1`];
const userOf = (i: number) =>
  (stub.requests[i]?.body as { messages?: { content: string }[] } | undefined)?.messages?.[1]
    ?.content ?? "";

describe("simulate with a summarizer", () => {
  it("summarizes each band from its raw events and prints the summary's audit", async () => {
    const out = join(dir, "simulated.json");
    const args = ["simulate", file, "--context-window", "3000", "--config", SUMMARY_RULE];
    const result = await cli([...args, ...openai(), "--summary-model", "m1", "--out", out], {
      OPENAI_API_KEY: "sk-from-env",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const expected = await simulateStream(stream(), {
      layers: [JSON.parse(SUMMARY_RULE).conversation.compaction.auto],
      model: { context_window: 3000 },
      summarize: async () => ({ text: "x", model: "m", latency_ms: 1 }),
    });
    expect(lines).toHaveLength(expected.firings.length);
    expect(lines.length).toBeGreaterThan(0);
    lines.forEach((line, i) => {
      const firing = expected.firings[i];
      expect(line).toMatchObject({
        turn: firing?.turn,
        from_turn: firing?.from_turn,
        to_turn: firing?.to_turn,
        summary_model: "m1",
        summary_input_tokens: 700,
        summary_output_tokens: 9,
        summary_latency_ms: expect.any(Number),
      });
    });
    expect(stub.requests).toHaveLength(lines.length);
    const first = stub.requests[0]?.body as { model: string; messages: { content: string }[] };
    expect(first.model).toBe("m1");
    expect(first.messages[0]?.content).toBe("CLI test instructions.");
    expect(stub.requests[0]?.headers.authorization).toBe("Bearer sk-from-env");
    const { from_turn, to_turn } = lines[0] as { from_turn: number; to_turn: number };
    for (let t = 0; t < 8; t++) {
      const inBand = t >= from_turn && t <= to_turn;
      expect(userOf(0).includes(`[user]\nquestion ${t}\n`)).toBe(inBand);
      expect(userOf(0).includes(`body of f${t} zzz`)).toBe(inBand);
    }
    const written = JSON.parse(await readFile(out, "utf8")) as Entry[];
    const bands = written.filter((e): e is Compaction => e.type === "compaction");
    expect(bands).toHaveLength(lines.length);
    expect(bands[0]).toMatchObject({
      source: "auto",
      summary: { summary: "SUMMARY 1" },
      trigger: { summary_model: "m1", summary_input_tokens: 700, summary_output_tokens: 9 },
    });
    expect(bands[0]).not.toHaveProperty("reasoning");
    expect(bands[0]).not.toHaveProperty("tool_calls");
  });

  it("stops with exit 1 and one line when the summary fails, and without a summarizer", async () => {
    stub.reply(() => ({ status: 500, json: { error: { message: "model overloaded" } } }));
    const args = ["simulate", file, "--context-window", "3000", "--config", SUMMARY_RULE];
    const [failed, without] = await Promise.all([cli([...args, ...openai()]), cli(args)]);
    for (const result of [failed, without]) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(failed.stderr).toMatch(/^autocompact: summary failed: .*HTTP 500: model overloaded/);
    expect(without.stderr).toContain("--summarizer openai-compatible --base-url URL");
  });
});

describe("evaluate with a summarizer", () => {
  it("prints the completed decision: the band with the generated summary and its audit", async () => {
    const result = await cli(
      ["evaluate", file, "--context-window", "3000", "--config", SUMMARY_RULE, ...openai()],
      { OPENAI_BASE_URL: "http://unused.invalid" },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const decision = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(decision).not.toHaveProperty("needs_summary");
    expect(decision).toMatchObject({
      fire: true,
      reason: "over_threshold",
      range: { from_turn: 1, to_turn: 4 },
      compaction: {
        type: "compaction",
        source: "auto",
        from_turn: 1,
        to_turn: 4,
        summary: { summary: "SUMMARY 1" },
        trigger: {
          turn: 7,
          summary_model: "stub-served-model",
          summary_input_tokens: 700,
          summary_output_tokens: 9,
        },
      },
      estimated_tokens_after: expect.any(Number),
    });
    expect(decision.estimated_tokens_after).toBeLessThan(decision.estimated_tokens as number);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]?.body).not.toHaveProperty("model");
    for (let t = 0; t < 8; t++) {
      expect(userOf(0).includes(`[user]\nquestion ${t}\n`)).toBe(t >= 1 && t <= 4);
    }
  });

  it("reports a summary rule without a summarizer (needs_summary, no compaction)", async () => {
    const result = await cli([
      "evaluate",
      file,
      "--context-window",
      "3000",
      "--config",
      SUMMARY_RULE,
    ]);
    expect(result.code).toBe(0);
    const decision = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(decision).toMatchObject({ fire: true, needs_summary: true });
    expect(decision).not.toHaveProperty("compaction");
    expect(result.stderr).toContain("no summarizer was given");
    expect(stub.requests).toHaveLength(0);
  });

  it("rejects summarizer flags that do not fit (exit 2)", async () => {
    const base = ["evaluate", file, "--context-window", "3000"];
    const cases: [string[], RegExp][] = [
      [["--base-url", stub.url], /--base-url needs --summarizer \(openai-compatible\)/],
      [["--summarizer", "gemini"], /--summarizer must be openai-compatible or bedrock/],
      [["--summarizer", "openai-compatible"], /needs --base-url URL \(or \$OPENAI_BASE_URL\)/],
      [
        ["--summarizer", "openai-compatible", "--base-url", "ftp://x"],
        /--base-url: baseUrl must be an http\(s\) URL/,
      ],
      [["--summarizer", "bedrock"], /--summarizer bedrock needs --summary-model ID/],
      [
        ["--summarizer", "bedrock", "--summary-model", "m", "--api-key", "k"],
        /--api-key is for --summarizer openai-compatible/,
      ],
      [
        [...openai(), "--summary-timeout", "soon"],
        /--summary-timeout must be a positive number of seconds/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => cli([...base, ...args])));
    results.forEach((result, i) => {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(cases[i]?.[1] as RegExp);
    });
  });
});
