/**
 * `autocompact tune` end to end: the command run in process
 * (test/helpers/cli.ts), on generated conversations written to a temporary
 * folder.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeJpEntries } from "../core/jp-format.ts";
import { runCli as cli } from "../test/helpers/cli.ts";
import { generateConversation } from "../test/helpers/conversation.ts";

const GRID = "trigger_ratio=0.5,0.8 keep_first=0,1 keep_last=2 tool_calls=strip,omit";
const WINDOW = "40000";

let dir: string;
let files: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-tune-"));
  // A JP-style folder: one conversation per folder, JP's base64 form for one of them.
  files = [];
  for (const [i, seed] of [11, 12, 13, 14, 15].entries()) {
    const folder = join(dir, "conversations", `c${i}`);
    await mkdir(folder, { recursive: true });
    const entries = generateConversation({ seed, turns: 30 });
    const file = join(folder, "events.json");
    await writeFile(file, JSON.stringify(i === 0 ? encodeJpEntries(entries) : entries));
    await writeFile(join(folder, "metadata.json"), "{}");
    files.push(file);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("autocompact tune", () => {
  it("prints one JSON line per configuration, and their firings are simulate's", async () => {
    const result = await cli([
      "tune",
      join(dir, "conversations"),
      "--context-window",
      WINDOW,
      "--grid",
      GRID,
      "--json",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    // A line per configuration, then the summary.
    expect(lines).toHaveLength(9);
    const { summary } = lines.pop();
    expect(Object.keys(summary).sort()).toEqual(
      ["recommended", "reason", "warnings", "saving_vs_default", "classes"].sort(),
    );
    const marked = lines.filter((line) => line.recommended);
    expect(marked.map((line) => line.config)).toEqual(
      summary.recommended ? [summary.recommended] : [],
    );
    for (const warning of summary.warnings) {
      expect(Object.keys(warning).sort()).toEqual(["code", "detail"]);
      expect(["grid_edge", "tie", "too_few_firing"]).toContain(warning.code);
    }
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(
        [
          "config",
          "conversations",
          "turns",
          "firings",
          "peak_utilization",
          "overflow_turns",
          "input_tokens",
          "cache_miss_tokens",
          "effective_input_cost",
          "calls",
          "cache_read_tokens",
          "cache_write_tokens",
          "output_tokens",
          "dollars",
          "overflow_calls",
          "still_over_firings",
          "one_turn_bands",
          "longest_firing_run",
          "retention",
          "pareto",
          "recommended",
        ].sort(),
      );
      expect(line.conversations).toBe(5);
      expect(line.turns).toBe(150);
    }
    // Half the configurations replayed by `simulate` itself, one file at a time
    // (core/tune.test.ts compares every configuration of the default grid).
    const checked = lines.filter((line) => line.config.keep_first === 0);
    const firings = await Promise.all(
      checked.map(async (line) => {
        const config = JSON.stringify({
          conversation: { compaction: { auto: { enabled: true, ...ruleOf(line.config) } } },
        });
        let total = 0;
        for (const file of files) {
          const simulated = await cli([
            "simulate",
            file,
            "--context-window",
            WINDOW,
            "--config",
            config,
          ]);
          expect(simulated.code).toBe(0);
          total += simulated.stdout.trim() === "" ? 0 : simulated.stdout.trim().split("\n").length;
        }
        return total;
      }),
    );
    expect(checked.map((line) => line.firings)).toEqual(firings);
    expect(firings.some((n) => n > 0)).toBe(true);
  }, 180_000);

  it("prints the table, the recommendation as TOML and as the PUT /config body, and the page", async () => {
    const html = join(dir, "tune.html");
    const result = await cli([
      "tune",
      ...files,
      "--context-window",
      WINDOW,
      "--grid",
      GRID,
      "--html",
      html,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^tune: 5 conversation\(s\), 150 turns, 8 configurations/);
    const recommended = /^Recommended: (.*)$/m.exec(result.stdout)?.[1];
    expect(recommended).toBeDefined();
    const toml = /As TOML[^\n]*\n([\s\S]*?)\n\nAs the body/.exec(result.stdout)?.[1] ?? "";
    const body = JSON.parse(result.stdout.trimEnd().split("\n").at(-1) ?? "");
    const auto = body.conversation.compaction.auto;
    expect(parseToml(toml)).toEqual({
      conversation: {
        compaction: { auto: { ...auto, rule: { ...auto.rule, summary: undefined } } },
      },
    } as unknown as ReturnType<typeof parseToml>);
    expect(recommended).toContain(
      `trigger_ratio ${auto.trigger_ratio}, keep_first ${auto.rule.keep_first}`,
    );
    const page = await readFile(html, "utf8");
    expect(page).toMatch(/^<!doctype html>/);
    expect(page.match(/<figure>/g)).toHaveLength(5);
    expect(page.match(/<polyline/g)?.length).toBeGreaterThan(5);
    expect(page).toContain("<dt>retention</dt>");
    expect(page).toContain(`<pre>${toml.split("\n")[0]}`);
    expect(page).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'sha256-/,
    );
    expect(page).not.toMatch(/<script|<link|src=|href=|url\(|style="/i);
  }, 60_000);

  it.each([
    [["tune", "x.json"], /--context-window N is required/],
    [["tune", "--context-window", "1000"], /give stream files, a directory, or --conversation/],
    [["tune", "x.json", "--context-window", "1000", "--grid", "keep_last=-1"], /whole numbers/],
    [["tune", "x.json", "--context-window", "1000", "--cache-read-price", "2"], /\[0, 1\]/],
    [
      ["tune", "x.json", "--context-window", "1000", "--pricing", "acme"],
      /--pricing must be one of/,
    ],
    [["tune", "x.json", "--context-window", "1000", "--prices", "input=1"], /output=USD/],
    [["tune", "x.json", "--context-window", "1000", "--min-retention", "2"], /\[0, 1\]/],
  ])("refuses bad usage with exit 2: %j", async (args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });
});

/** The D50 keys of a `--json` line's config. */
function ruleOf(config: Record<string, unknown>) {
  const { trigger_ratio, summary: _summary, ...rule } = config;
  return { trigger_ratio, rule };
}
