/**
 * The README's "Try it" as a test runs it: its shell blocks, taken from
 * README.md as written, run in order in one bash, each block's output cut
 * apart by a marker echoed after it, beside what the block's comments say it
 * prints. A comment run that follows a command is that command's output,
 * `# ` removed; a comment run that opens a step is prose.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./cli.ts";

const exec = promisify(execFile);

/** The ```sh blocks of the README's "## Try it" section; throws when the section is gone. */
export function tryItBlocks(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Try it\n");
  if (start < 0) throw new Error("README.md has no Try it section");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
}

/** What a block says it prints: the comment runs that follow a command line. */
export function expectedOutput(block: string): string[] {
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

/** One block as it ran: the block, what it printed, what its comments say it prints. */
export interface RanBlock {
  readonly block: string;
  readonly printed: string[];
  readonly expected: string[];
}

/**
 * Runs `blocks` in order in one `bash -euo pipefail` in the repository root,
 * after `edit` (the test's URL, key or folders in place of the README's),
 * and answers each block's output; throws when the script fails or a block
 * did not run to its end.
 */
export async function runBlocks(
  blocks: readonly string[],
  edit: (script: string) => string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RanBlock[]> {
  const script = edit(blocks.map((block, index) => `${block}echo '${marker(index)}'\n`).join(""));
  const { stdout } = await exec("bash", ["-euo", "pipefail", "-c", script], {
    cwd: ROOT,
    env,
    maxBuffer: 1 << 24,
    timeout: 120_000,
  });
  const lines = stdout.split("\n");
  let from = 0;
  return blocks.map((block, index) => {
    const to = lines.indexOf(marker(index), from);
    if (to < from) throw new Error(`block ${index + 1} did not run to its end:\n${block}`);
    const printed = lines.slice(from, to);
    from = to + 1;
    return { block, printed, expected: expectedOutput(block) };
  });
}
