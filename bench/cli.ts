/**
 * The installed CLI's cost over plain Node (docs/architecture.md §13, issue 18),
 * as paired whole-process runs (each pair runs its two commands back to
 * back, so load on the machine hits both alike; the ratio is the median of
 * the pairs' ratios):
 *
 * - `autocompact --version` against `node -e 0` (target ≤ 2×);
 * - `autocompact estimate` on a ~60 MB stream, plain and in JP's base64 form,
 *   against `node -e` reading and parsing the same file (target ≤ 2×).
 *
 * The CLI is the BUILT one, laid out as `npm install` leaves it (package.json,
 * cli/bin.mjs and dist/, no sources, no node_modules), built here by
 * scripts/build.ts. The checkout's launcher (its bundle of the sources) is timed
 * in the same pairs, as `checkout_*`, for comparison.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { estimateStream } from "../core/estimate.ts";
import { encodeJpEntries } from "../core/jp-format.ts";
import { buildPackage, ROOT } from "../scripts/build.ts";
import { generateConversation } from "../test/helpers/conversation.ts";

const run = promisify(execFile);

async function once(args: readonly string[]): Promise<number> {
  const start = performance.now();
  await run(process.execPath, args, { maxBuffer: 1 << 26 });
  return performance.now() - start;
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const round2 = (value: number) => Number(value.toFixed(2));

/** `pairs` rounds of baseline, built, checkout; medians and the median paired ratios. */
async function paired(
  pairs: number,
  baseline: readonly string[],
  built: readonly string[],
  checkout: readonly string[],
): Promise<Record<string, number>> {
  const times = { baseline: [] as number[], built: [] as number[], checkout: [] as number[] };
  for (let i = 0; i < pairs; i++) {
    times.baseline.push(await once(baseline));
    times.built.push(await once(built));
    times.checkout.push(await once(checkout));
  }
  const ratios = (of: number[]) => of.map((ms, i) => ms / (times.baseline[i] as number));
  return {
    pairs,
    node_ms: Math.round(median(times.baseline)),
    autocompact_ms: Math.round(median(times.built)),
    ratio: round2(median(ratios(times.built))),
    checkout_ms: Math.round(median(times.checkout)),
    checkout_ratio: round2(median(ratios(times.checkout))),
  };
}

/** A generated stream of about `bytes`, and its turn count. */
function streamOf(bytes: number) {
  let turns = 200;
  let entries = generateConversation({ seed: 50, turns });
  let text = JSON.stringify(entries);
  for (
    let attempt = 0;
    attempt < 4 && Math.abs(Buffer.byteLength(text) - bytes) > bytes * 0.05;
    attempt++
  ) {
    turns = Math.max(1, Math.round(turns * (bytes / Buffer.byteLength(text))));
    entries = generateConversation({ seed: 50, turns });
    text = JSON.stringify(entries);
  }
  return { entries, text, turns };
}

/**
 * The built `autocompact tune` on 50 generated conversations of 200 turns
 * under the default grid (270 configurations), end to end, median of 3. The window is
 * the median conversation's final raw size over 4, so every conversation
 * outgrows it and most configurations fire often (docs/architecture.md §13).
 */
async function benchTune(dir: string, bin: string): Promise<Record<string, unknown>> {
  const corpus = join(dir, "tune");
  await mkdir(corpus);
  const sizes: number[] = [];
  for (let seed = 1; seed <= 50; seed++) {
    const entries = generateConversation({ seed, turns: 200 });
    sizes.push(estimateStream(entries).estimated_tokens);
    await writeFile(join(corpus, `c${seed}.json`), JSON.stringify(entries));
  }
  const window = Math.round((sizes.sort((a, b) => a - b)[25] as number) / 4);
  const args = [bin, "tune", corpus, "--context-window", String(window), "--json"];
  const ms = median([await once(args), await once(args), await once(args)]);
  return {
    bench: "cli.tune_50x200_default_grid",
    conversations: 50,
    turns: 200,
    configurations: 270,
    context_window: window,
    tune_ms: Math.round(ms),
  };
}

export async function benchCli(): Promise<Record<string, unknown>[]> {
  const dir = await mkdtemp(join(tmpdir(), "autocompact-bench-"));
  try {
    const pkg = join(dir, "package");
    await buildPackage(join(pkg, "dist"));
    await mkdir(join(pkg, "cli"));
    await copyFile(join(ROOT, "cli/bin.mjs"), join(pkg, "cli/bin.mjs"));
    await copyFile(join(ROOT, "package.json"), join(pkg, "package.json"));
    const built = join(pkg, "cli/bin.mjs");
    const checkout = join(ROOT, "cli/bin.mjs");

    const results: Record<string, unknown>[] = [];
    results.push({
      bench: "cli.version",
      ...(await paired(9, ["-e", "0"], [built, "--version"], [checkout, "--version"])),
    });

    const { entries, text, turns } = streamOf(60 * 1024 * 1024);
    const plain = join(dir, "plain.json");
    const jp = join(dir, "jp.json");
    await writeFile(plain, text);
    await writeFile(jp, JSON.stringify(encodeJpEntries(entries)));
    const parseOnly = ["-e", "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'))"];
    for (const [name, file] of [
      ["plain", plain],
      ["jp", jp],
    ] as const) {
      results.push({
        bench: `cli.estimate_60mb_${name}`,
        megabytes: Number(((await stat(file)).size / 2 ** 20).toFixed(1)),
        turns,
        ...(await paired(
          3,
          [...parseOnly, file],
          [built, "estimate", file],
          [checkout, "estimate", file],
        )),
      });
    }
    results.push(await benchTune(dir, built));
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
