/**
 * `npx autocompact estimate` on a ~50 MB stream next to `node -e` parsing the
 * same file: the CLI's cost over the unavoidable read + parse (including tsx's
 * start-up). Each is timed end to end as a child process, median of 3.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { encodeJpEntries } from "../core/jp-format.ts";
import { generateConversation } from "../test/helpers/conversation.ts";

const run = promisify(execFile);

async function timed(command: string, args: string[]): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await run(command, args, { maxBuffer: 1 << 26 });
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[1] as number;
}

export async function benchCli(): Promise<Record<string, unknown>[]> {
  const dir = await mkdtemp(join(tmpdir(), "autocompact-bench-"));
  try {
    const target = 50 * 1024 * 1024;
    let turns = 200;
    let entries = generateConversation({ seed: 50, turns });
    let text = JSON.stringify(entries);
    for (
      let attempt = 0;
      attempt < 4 && Math.abs(Buffer.byteLength(text) - target) > target * 0.05;
      attempt++
    ) {
      turns = Math.max(1, Math.round(turns * (target / Buffer.byteLength(text))));
      entries = generateConversation({ seed: 50, turns });
      text = JSON.stringify(entries);
    }
    const plain = join(dir, "plain.json");
    const jp = join(dir, "jp.json");
    await writeFile(plain, text);
    await writeFile(jp, JSON.stringify(encodeJpEntries(entries)));
    const bin = new URL("../cli/bin.mjs", import.meta.url).pathname;
    const parseOnly = ["-e", "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'))"];
    const results: Record<string, unknown>[] = [];
    for (const [name, file] of [
      ["plain", plain],
      ["jp", jp],
    ] as const) {
      const node = await timed(process.execPath, [...parseOnly, file]);
      const cli = await timed(process.execPath, [bin, "estimate", file]);
      results.push({
        bench: `cli.estimate_50mb_${name}`,
        megabytes: Number(((await stat(file)).size / 2 ** 20).toFixed(1)),
        turns,
        node_parse_ms: Math.round(node),
        autocompact_estimate_ms: Math.round(cli),
        ratio: Number((cli / node).toFixed(2)),
      });
    }
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
