/**
 * `simulate` and `evaluate` with issue 26's settings: the guards from a TOML
 * `--config`, and a calibration given as `--tokens-per-char A --overhead B`.
 * The stream is core/auto-compaction.guards.test.ts's: turns of 400 bytes
 * (100 tokens by chars / 4), of which a band strips 100 bytes.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { strippableTurns } from "../test/helpers/builders.ts";
import { runCli } from "../test/helpers/cli.ts";

const lines = (stdout: string): unknown[] =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-guards-"));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("simulate and evaluate with the guards and a calibration", () => {
  it("reads the guards from TOML and overrides them past the window", async () => {
    const toml = join(dir, "guards.toml");
    await writeFile(
      toml,
      [
        "[conversation.compaction.auto]",
        "enabled = true",
        "min_band_turns = 3",
        "min_gain_tokens = 60",
        "",
      ].join("\n"),
    );
    const result = await runCli(["simulate", "--context-window", "1000", "--config", toml], {
      stdin: JSON.stringify(strippableTurns(14)),
    });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const common = { threshold: 750, context_window: 1_000 };
    const overridden = { ...common, guard_overridden: ["short_range", "low_gain"] };
    expect(lines(result.stdout)).toEqual([
      {
        turn: 7,
        from_turn: 1,
        to_turn: 4,
        estimated_tokens: 800,
        estimated_tokens_after: 700,
        ...common,
      },
      {
        turn: 10,
        from_turn: 5,
        to_turn: 7,
        estimated_tokens: 1_000,
        estimated_tokens_after: 925,
        ...common,
      },
      {
        turn: 11,
        from_turn: 8,
        to_turn: 8,
        estimated_tokens: 1_025,
        estimated_tokens_after: 1_000,
        ...overridden,
      },
      {
        turn: 12,
        from_turn: 9,
        to_turn: 9,
        estimated_tokens: 1_100,
        estimated_tokens_after: 1_075,
        ...overridden,
      },
      {
        turn: 13,
        from_turn: 10,
        to_turn: 10,
        estimated_tokens: 1_175,
        estimated_tokens_after: 1_150,
        ...overridden,
      },
    ]);
  });

  it("estimates with --tokens-per-char and --overhead", async () => {
    // 8 turns, 3,200 bytes: 0.5 · 3,200 + 100 = 1,700 > 1,500; the band [1, 4]
    // strips 400 bytes: 0.5 · 2,800 + 100 = 1,500.
    const args = ["--enable", "--context-window", "2000", "--tokens-per-char", "0.5"];
    const input = { stdin: JSON.stringify(strippableTurns(8)) };
    const [evaluated, simulated] = await Promise.all([
      runCli(["evaluate", ...args, "--overhead", "100", "--now", "2026-06-01T00:00:00Z"], input),
      runCli(["simulate", ...args, "--overhead", "100"], input),
    ]);
    expect(evaluated).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(evaluated.stdout)).toMatchObject({
      fire: true,
      range: { from_turn: 1, to_turn: 4 },
      estimated_tokens: 1_700,
      estimated_tokens_after: 1_500,
      compaction: {
        trigger: {
          turn: 7,
          estimated_tokens: 1_700,
          estimated_tokens_after: 1_500,
          estimator: "calibrated",
          tokens_per_char: 0.5,
          overhead_tokens: 100,
        },
      },
    });
    expect(simulated).toMatchObject({ code: 0, stderr: "" });
    // Simulate fires first after turn 6: 0.5 · 2,800 + 100 = 1,500 is not above the threshold.
    expect(lines(simulated.stdout)[0]).toEqual({
      turn: 7,
      from_turn: 1,
      to_turn: 4,
      estimated_tokens: 1_700,
      estimated_tokens_after: 1_500,
      threshold: 1_500,
      context_window: 2_000,
      estimator: "calibrated",
      tokens_per_char: 0.5,
      overhead_tokens: 100,
    });
  });

  it.each([
    [["--tokens-per-char", "2"], /--tokens-per-char must be a number in \[0\.1, 1\] \(got "2"\)/],
    [["--overhead=-5"], /--overhead must be a number 0 or more \(got "-5"\)/],
    [["--overhead", "lots"], /--overhead must be a number 0 or more \(got "lots"\)/],
  ])("refuses a bad calibration flag %j as a usage error", async (flags, message) => {
    const result = await runCli(["simulate", "--context-window", "2000", ...flags], {
      stdin: JSON.stringify(strippableTurns(2)),
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });
});

describe("tune with the guards and a calibration", () => {
  // The configurations' lines, the summary line left out.
  const jsonLines = (stdout: string) =>
    (lines(stdout) as { config?: Record<string, unknown>; firings: number }[]).filter(
      (line) => line.config,
    ) as { config: Record<string, unknown>; firings: number }[];

  it("varies min_band_turns as a grid key: one-turn bands every turn, or every 3 until the window", async () => {
    const file = join(dir, "strippable.json");
    await writeFile(file, JSON.stringify(strippableTurns(14)));
    const result = await runCli([
      "tune",
      file,
      "--context-window",
      "1000",
      "--grid",
      "trigger_ratio=0.75 keep_first=1 keep_last=3 tool_calls=strip min_band_turns=1,3",
      "--json",
    ]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    // D50 fires after turns 7..13; with 3 turns a band, after 7 and 10, then
    // past the window (1,025 tokens after turn 11) every turn: simulate's figures above.
    expect(
      jsonLines(result.stdout)
        .map((line) => [line.config.min_band_turns, line.firings])
        .sort(),
    ).toEqual([
      [1, 7],
      [3, 5],
    ]);
    // Five copies: enough conversations that fire for an answer.
    const { stdout } = await runCli([
      "tune",
      ...Array(5).fill(file),
      "--context-window",
      "1000",
      "--grid",
      "trigger_ratio=0.75 keep_first=1 keep_last=3 tool_calls=strip min_band_turns=3",
    ]);
    expect(stdout).toContain(
      "Recommended: trigger_ratio 0.75, keep_first 1, keep_last 3, reasoning strip, tool_calls strip, min_band_turns 3",
    );
    expect(stdout).toContain("min_band_turns = 3");
  });

  it("takes the guards from --config and refuses a bad grid value", async () => {
    const file = join(dir, "strippable.json");
    await writeFile(file, JSON.stringify(strippableTurns(14)));
    const grid = "trigger_ratio=0.75 keep_first=1 keep_last=3 tool_calls=strip";
    const result = await runCli([
      "tune",
      file,
      "--context-window",
      "1000",
      "--config",
      '{"conversation":{"compaction":{"auto":{"min_band_turns":3}}}}',
      "--grid",
      grid,
      "--json",
    ]);
    expect(jsonLines(result.stdout).map((line) => line.firings)).toEqual([5]);
    const bad = await runCli([
      "tune",
      file,
      "--context-window",
      "1000",
      "--grid",
      `${grid} min_band_turns=0`,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--grid min_band_turns=0: turns are whole numbers, 1 or more");
  });

  it("measures in the calibration's tokens with --tokens-per-char and --overhead", async () => {
    // Four turns of 400 bytes, never compacted: V_t = 0.5 · 400(t + 1) + 100 for t = 0..2
    // is 300 + 500 + 700 = 1,500 input tokens; each call misses its new 200 tokens, the first
    // all its 300; the peak is 0.5 · 1,600 + 100 = 900. By chars / 4: 100 + 200 + 300 and 100 a turn.
    const file = join(dir, "four.json");
    await writeFile(file, JSON.stringify(strippableTurns(4)));
    const args = ["tune", file, "--context-window", "100000", "--json"];
    const grid = ["--grid", "trigger_ratio=0.9 keep_first=1 keep_last=1 tool_calls=strip"];
    const [calibrated, chars, swept] = await Promise.all([
      runCli([...args, ...grid, "--tokens-per-char", "0.5", "--overhead", "100"]),
      runCli([...args, ...grid]),
      runCli([...args, "--grid", `${grid[1]} tokens_per_char=0.5 overhead_tokens=100`]),
    ]);
    expect(calibrated).toMatchObject({ code: 0, stderr: "" });
    // The calibration flags as grid keys replay the same.
    const { config: _, ...figures } = jsonLines(swept.stdout)[0] ?? {};
    expect(jsonLines(calibrated.stdout)).toMatchObject([figures]);
    expect(jsonLines(calibrated.stdout)).toMatchObject([
      { input_tokens: 1_500, cache_miss_tokens: 700, peak_utilization: 0.009, firings: 0 },
    ]);
    expect(jsonLines(chars.stdout)).toMatchObject([
      { input_tokens: 600, cache_miss_tokens: 300, peak_utilization: 0.004, firings: 0 },
    ]);
  });
});
