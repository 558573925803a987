/**
 * `npm run bench -- burst` (issue 28, the local queue): 20 conversations
 * posting 30 turns of ~6 KB each, all at once (each conversation's turns one
 * after another, the 20 side by side), against the local runtime as
 * `npm start` runs it: DynamoDB Local and the queue's journal under a fresh
 * data directory (window 16,000 tokens, `trigger_ratio` 0.5, `min_turns` 3,
 * `keep_first` 1, `keep_last` 2, tool calls stripped). Prints, per checkout,
 * the evaluations skipped as stale (a newer turn was stored before the
 * evaluation ran: `projected_tokens` null in the timeline once every
 * message is done), the bands fired, the posts' p50/p99, the time until the
 * last post was answered, the time until every message was evaluated (the
 * queue drained), and the difference: the queue's tail after the burst.
 *
 * Old and new in one run: the checkout at `BENCH_BASELINE` (default
 * e9a4bf1, the queue before issue 28: one batch at a time, the whole journal
 * rewritten and fsynced on every change) is exported with `git archive` into
 * a temporary directory with this checkout's node_modules linked, and each
 * checkout is measured in a process of its own, the baseline first.
 * `BENCH_BASELINE=none` measures this checkout only; `BENCH_BURST_RUNS`
 * (1) repeats the pair.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { exportCheckout } from "./baseline.ts";
import { turnOfSize } from "./service.ts";

const run = promisify(execFile);
const HERE = fileURLToPath(import.meta.url);
const ROOT = dirname(dirname(HERE));
const CONVERSATIONS = 20;
const TURNS = 30;
const TURN_BYTES = 6_000;
const WINDOW = 16_000;
const DEV_KEY = "ak_bench_burst_0123456789";

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};
const round = (ms: number) => Number(ms.toFixed(1));

/** The runtime's entry point, as every checkout since the local runtime has it. */
type StartLocalService = (options: Record<string, unknown>) => Promise<{
  readonly url: string;
  readonly queue: { drain(): Promise<void>; deadLetters(): unknown[] };
  stop(): Promise<void>;
}>;

/** One burst against the runtime of the checkout at `root`, in this process. */
async function measure(root: string): Promise<Record<string, unknown>> {
  const runtime = pathToFileURL(join(root, "functions/local/runtime.ts")).href;
  const { startLocalService } = (await import(runtime)) as { startLocalService: StartLocalService };
  const dataDir = await mkdtemp(join(tmpdir(), "autocompact-burst-"));
  const service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir,
    inMemory: false,
    devKey: DEV_KEY,
    logLevel: "ERROR",
    config: {
      enabled: true,
      trigger_ratio: 0.5,
      min_turns: 3,
      rule: { keep_first: 1, keep_last: 2, tool_calls: "strip" },
    },
  });
  const headers = { authorization: `Bearer ${DEV_KEY}`, "content-type": "application/json" };
  const ids = Array.from({ length: CONVERSATIONS }, (_, c) => `burst-${c}`);
  try {
    const posts: number[] = [];
    const started = performance.now();
    await Promise.all(
      ids.map(async (id, c) => {
        for (let turn = 0; turn < TURNS; turn++) {
          const body = JSON.stringify({
            turn,
            model: { context_window: WINDOW },
            events: turnOfSize(turn, TURN_BYTES, c),
          });
          const sent = performance.now();
          const response = await fetch(`${service.url}/v1/conversations/${id}/turns`, {
            method: "POST",
            headers,
            body,
          });
          await response.arrayBuffer();
          if (response.status !== 202) throw new Error(`post ${id}/${turn}: ${response.status}`);
          posts.push(performance.now() - sent);
        }
      }),
    );
    const postedMs = performance.now() - started;
    await service.queue.drain();
    const evaluatedMs = performance.now() - started;

    let stale = 0;
    let fired = 0;
    for (const id of ids) {
      const response = await fetch(`${service.url}/v1/conversations/${id}/timeline`, { headers });
      const { turns } = (await response.json()) as {
        turns: { projected_tokens: number | null; fired: unknown }[];
      };
      stale += turns.filter((t) => t.projected_tokens === null).length;
      fired += turns.filter((t) => t.fired !== null).length;
    }
    return {
      conversations: CONVERSATIONS,
      turns: TURNS,
      turn_bytes: TURN_BYTES,
      evaluations: CONVERSATIONS * TURNS,
      stale_skips: stale,
      bands_fired: fired,
      dead_letters: service.queue.deadLetters().length,
      post_p50_ms: round(percentile(posts, 50)),
      post_p99_ms: round(percentile(posts, 99)),
      all_posted_ms: round(postedMs),
      all_evaluated_ms: round(evaluatedMs),
      evaluated_after_last_post_ms: round(evaluatedMs - postedMs),
    };
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Measures the checkout at `root` in a process of its own (fresh heap, JIT and DynamoDB Local). */
async function measureApart(root: string, checkout: string): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), "autocompact-burst-out-"));
  try {
    const out = join(dir, "result.json");
    await run(process.execPath, ["--import", "tsx", HERE, "--measure", root, out], {
      cwd: ROOT,
      // The compactor's EMF lines would otherwise go to the child's stdout.
      env: { ...process.env, POWERTOOLS_METRICS_DISABLED: "true" },
      maxBuffer: 64 * 2 ** 20,
    });
    return { bench: "burst", checkout, ...JSON.parse(await readFile(out, "utf8")) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchBurst(): Promise<Record<string, unknown>[]> {
  const baseline = process.env.BENCH_BASELINE ?? "e9a4bf1";
  const runs = Number(process.env.BENCH_BURST_RUNS ?? 1);
  const old = baseline === "none" ? undefined : await exportCheckout(baseline);
  const results: Record<string, unknown>[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      if (old) results.push(await measureApart(old, `${baseline} (before)`));
      results.push(await measureApart(ROOT, "this checkout"));
    }
  } finally {
    if (old) await rm(old, { recursive: true, force: true });
  }
  return results;
}

if (process.argv[2] === "--measure" && process.argv[1] === HERE) {
  const [root, out] = process.argv.slice(3) as [string, string];
  const { writeFile } = await import("node:fs/promises");
  await writeFile(out, JSON.stringify(await measure(root)));
}
