/**
 * `npm run bench -- limits` (issue 25 item 5): one tenant's waiting reads
 * against another tenant's posts, on the local runtime (DynamoDB Local in
 * memory, the in-process queue). Tenant B posts turns one after another,
 * idle and then while tenant A holds 1,000 concurrent
 * `after_turn=…&wait=25` reads (each of A's 1,000 readers reads again at
 * once when its read ends, and after `Retry-After` when refused). The queue's
 * consumer is stopped first, so A's reads wait their full 25 s and B's
 * posts cost the same work in both phases. Prints B's post p50/p99 in each
 * phase, A's answers by status, and the process's RSS (server and clients).
 *
 * It uses only what the local runtime had before the limits, so the same
 * file measures an older checkout (copied into a worktree of it).
 * `BENCH_READERS` (1,000) and `BENCH_POSTS` (500 a phase) change the sizes.
 */
import { performance } from "node:perf_hooks";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { LOCAL_TABLE, localClientConfig } from "../functions/local/dynamodb-local.ts";
import { startLocalService } from "../functions/local/runtime.ts";
import { LocalSecretSealer } from "../functions/secrets/local.ts";
import { DynamoTenantDirectory } from "../functions/store/tenants-dynamodb.ts";

const READERS = Number(process.env.BENCH_READERS ?? 1_000);
const POSTS = Number(process.env.BENCH_POSTS ?? 500);
const DEV_KEY = "ak_bench_limits_0123456789";

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};
const round = (ms: number) => Number(ms.toFixed(1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function turn(n: number) {
  const at = new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString();
  return {
    turn: n,
    events: [
      { type: "turn_start", timestamp: at },
      { type: "chat_request", timestamp: at, content: `question ${n} ${"x".repeat(400)}` },
      { type: "chat_response", timestamp: at, message: `answer ${n}` },
    ],
  };
}

export async function benchLimits(): Promise<Record<string, unknown>[]> {
  const { readLimitDefaults } = (await import("../functions/env.ts")) as {
    readLimitDefaults?: (env: Record<string, string | undefined>) => unknown;
  };
  const service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir: "",
    inMemory: true,
    devKey: DEV_KEY,
    logLevel: "ERROR",
    // The limits where this checkout has them (ignored by one from before them).
    ...(readLimitDefaults ? { limits: readLimitDefaults(process.env) } : {}),
  } as Parameters<typeof startLocalService>[0]);
  const client = new DynamoDBClient(
    localClientConfig({ endpoint: service.dynamoEndpoint, credentials: service.dynamoCredentials }),
  );
  const bKey = await new DynamoTenantDirectory(
    client,
    LOCAL_TABLE,
    new LocalSecretSealer(Buffer.alloc(32, 7)),
  ).createTenant("tenant-b");
  const headers = (key: string) => ({
    authorization: `Bearer ${key}`,
    "content-type": "application/json",
  });
  const post = async (key: string, conversation: string, n: number) => {
    const started = performance.now();
    const response = await fetch(`${service.url}/v1/conversations/${conversation}/turns`, {
      method: "POST",
      headers: headers(key),
      body: JSON.stringify(turn(n)),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`post ${conversation}/${n}: ${response.status}`);
    return performance.now() - started;
  };

  // A's conversation, then no more evaluations: A's reads of turn 1 wait their whole 25 s.
  await post(DEV_KEY, "a1", 0);
  await service.queue.drain();
  await service.queue.stop();
  await post(DEV_KEY, "a1", 1);

  let next = 0;
  const bPosts = async () => {
    const samples: number[] = [];
    for (let i = 0; i < POSTS; i++) samples.push(await post(bKey, "b1", next++));
    return samples;
  };
  const summary = (phase: string, samples: number[], extra: Record<string, unknown> = {}) => ({
    bench: "limits",
    phase,
    readers: phase === "idle" ? 0 : READERS,
    b_posts: samples.length,
    b_post_p50_ms: round(percentile(samples, 50)),
    b_post_p99_ms: round(percentile(samples, 99)),
    rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
    ...extra,
  });

  await bPosts(); // warm up
  const idle = summary("idle", await bPosts());

  const statuses: Record<string, number> = {};
  let running = true;
  const reader = async () => {
    while (running) {
      try {
        const response = await fetch(
          `${service.url}/v1/conversations/a1/projection?after_turn=1&wait=25`,
          { headers: headers(DEV_KEY) },
        );
        await response.arrayBuffer();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        if (response.status === 429) {
          await sleep(Number(response.headers.get("retry-after") ?? "1") * 1000);
        }
      } catch {
        statuses.error = (statuses.error ?? 0) + 1;
        await sleep(1000);
      }
    }
  };
  const readers = Array.from({ length: READERS }, () => reader());
  await sleep(3_000); // every reader has asked once
  const loaded = summary(`${READERS} waiting reads of tenant A`, await bPosts());
  running = false;
  const result = [idle, { ...loaded, a_answers_by_status: { ...statuses } }];
  await Promise.all(readers);
  client.destroy();
  await service.stop();
  return result;
}
