/**
 * The real `autocompact` binary: the few tests that run the launcher
 * (`node cli/bin.mjs …`, the checkout's bundle: cli/checkout.mjs) in a child
 * process, for what the other CLI tests, run in process through
 * `run(argv, io)`, cannot see:
 * - the top-level help and `--version` as the launcher prints them, the
 *   latter from another directory (the bundle is the repository's whatever
 *   the working directory, its version set by the build);
 * - stdin as a real pipe: a path, `-`, and no path with a stdin that is not
 *   a TTY read the same stream;
 * - exit codes as the OS reports them (bin.mjs copies `run`'s result to
 *   `process.exitCode`);
 * - a reader that goes away (`| head`): EPIPE on the real stdout is not an
 *   error (`nodeIo`).
 * `serve` and its signals run as a real process in test/e2e/crash-recovery
 * and test/e2e/secrets-at-rest. A spawn costs a Node start and the bundle's
 * imports, so the tests run concurrently and group their assertions per spawn.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { estimateStream } from "../core/estimate.ts";
import { type Entry, parseStream } from "../core/events.ts";
import { project } from "../core/projection.ts";
import { BIN, runBin as cli, ROOT } from "../test/helpers/cli.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { checkoutCli } from "./checkout.mjs";

/** Parses a stream with core, as the CLI does for plain input. */
function parsed(raw: unknown): Entry[] {
  const result = parseStream(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.issues[0]));
  return result.entries;
}

let dir: string;
let conversation: Entry[];
let plainFile: string;

beforeAll(async () => {
  // The launcher's bundle of the sources, built here once rather than by each concurrent spawn.
  checkoutCli(ROOT);
  dir = await mkdtemp(join(tmpdir(), "autocompact-bin-"));
  conversation = generateConversation({ seed: 7, turns: 40 });
  plainFile = join(dir, "plain.json");
  await writeFile(plainFile, JSON.stringify(conversation));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.concurrent("the autocompact binary", () => {
  it("lists every command in the top-level help", async ({ expect }) => {
    const result = await cli(["--help"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    for (const name of [
      "project",
      "estimate",
      "evaluate",
      "simulate",
      "serve",
      "replay",
      "print",
      "reset",
      "verify",
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
    }
  });

  it("prints the package's version, run from another directory", async ({ expect }) => {
    const { version } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    expect(await cli(["--version"], { cwd: dir })).toEqual({
      code: 0,
      stdout: `${version}\n`,
      stderr: "",
    });
  });

  it("projects a stream to events, turns and estimated tokens, from a file or stdin", async ({
    expect,
  }) => {
    const text = await readFile(plainFile, "utf8");
    const [fromFile, fromStdin, fromDash, estimate] = await Promise.all([
      cli(["project", plainFile]),
      cli(["project"], { stdin: text }),
      cli(["project", "-"], { stdin: text }),
      cli(["estimate", plainFile]),
    ]);
    const entries = parsed(conversation);
    const expected = estimateStream(entries);
    expect(fromFile).toMatchObject({ code: 0, stderr: "" });
    const output = JSON.parse(fromFile.stdout);
    expect(Object.keys(output)).toEqual(["events", "turns", "estimated_tokens"]);
    expect(output.events).toEqual(JSON.parse(JSON.stringify(project(entries).entries)));
    expect(output.turns).toHaveLength(40);
    expect(output.turns[0]).toEqual({ kept: 0 });
    expect(output.estimated_tokens).toBe(expected.estimated_tokens);
    expect(fromStdin).toEqual(fromFile);
    expect(fromDash).toEqual(fromFile);

    expect(estimate).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(estimate.stdout)).toEqual({
      chars: expected.chars,
      estimated_tokens: expected.estimated_tokens,
      turn_count: 40,
    });
  });

  it("exits 2 on bad usage and 1 on bad input, as the OS sees it", async ({ expect }) => {
    const [noCommand, missing] = await Promise.all([
      cli([]),
      cli(["project", join(dir, "missing.json")]),
    ]);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stdout).toBe("");
    expect(noCommand.stderr).toMatch(/^Usage: autocompact <command>/);
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(missing.stderr).toMatch(/^autocompact: cannot read .*missing\.json: no such file\n$/);
  });

  it("exits 0 and says nothing when its reader goes away (| head)", async ({ expect }) => {
    const child = spawn(process.execPath, [BIN, "project", plainFile], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    // The first chunk read, the pipe is closed while the output is far from written.
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });
});
