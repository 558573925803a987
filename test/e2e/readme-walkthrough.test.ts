/**
 * The README's "Try it" as a new user runs it (issue 31): its shell blocks,
 * taken from README.md as written, run in order in one bash against the
 * local runtime (on the run's DynamoDB Local), with the runtime's URL, key
 * and folder in place of the README's. Each block must print exactly what its
 * comments say it prints: a comment run that follows a command is that
 * command's output, `# ` removed; a comment run that opens a step is prose.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNTIME_KEY, startTestRuntime, type TestRuntime } from "../helpers/local-runtime.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The ```sh blocks of the README's "## Try it" section. */
function tryItBlocks(): string[] {
  const start = README.indexOf("\n## Try it\n");
  const end = README.indexOf("\n## ", start + 1);
  expect(start, "README.md has a Try it section").toBeGreaterThan(0);
  const section = README.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
}

/** What a block says it prints: the comment runs that follow a command line. */
function expectedOutput(block: string): string[] {
  const lines: string[] = [];
  let afterCommand = false;
  let inOutput = false;
  for (const line of block.split("\n")) {
    if (line.startsWith("#")) {
      if (afterCommand) inOutput = true;
      afterCommand = false;
      if (inOutput) lines.push(line.replace(/^# ?/, ""));
    } else {
      inOutput = false;
      afterCommand = line.trim() !== "";
    }
  }
  return lines;
}

/** The marker echoed after each block, so each block's output is checked on its own. */
const marker = (index: number) => `@@ block ${index} done @@`;

let runtime: TestRuntime;

beforeAll(async () => {
  runtime = await startTestRuntime("autocompact-readme-");
});

afterAll(async () => {
  await runtime?.stop();
});

describe("the README's Try it", () => {
  it("prints, block by block, what the README says, on the local runtime", async () => {
    const blocks = tryItBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const script = blocks
      .map((block, index) => `${block}echo '${marker(index)}'\n`)
      .join("")
      .replace("URL=http://127.0.0.1:8787", `URL=${runtime.service.url}`)
      .replaceAll("local-dev-key", RUNTIME_KEY)
      .replaceAll("/tmp/demo.json", join(runtime.dir, "demo.json"));
    expect(script).toContain(`URL=${runtime.service.url}`);
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], {
      cwd: ROOT,
      env: { ...process.env, AUTOCOMPACT_KEY: RUNTIME_KEY },
      maxBuffer: 1 << 24,
      timeout: 120_000,
    });
    const printed = stdout.split("\n");
    let from = 0;
    for (const [index, block] of blocks.entries()) {
      const to = printed.indexOf(marker(index), from);
      expect(to, `block ${index} ran to its end`).toBeGreaterThanOrEqual(from);
      expect(printed.slice(from, to), `block ${index + 1}:\n${block}`).toEqual(
        expectedOutput(block),
      );
      from = to + 1;
    }
    // Every block but the first says what it prints; the walkthrough fires bands.
    expect(blocks.flatMap(expectedOutput)).toContain(
      '{"turn":3,"outcome":"fired","reason":null,"band":[1,1]}',
    );
  }, 180_000);
});
