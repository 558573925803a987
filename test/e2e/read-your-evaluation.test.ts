/**
 * Read your evaluation (issue 12) under bursts, end to end on the local
 * runtime (DynamoDB Local in memory, HTTP, the in-process queue, the
 * compactor): 5 conversations × 12 turns of about 6 KB (window 16,000 tokens,
 * threshold 8,000), read with `GET …/projection?after_turn=N&wait=25`
 *
 * (a) turn by turn: each turn is read before the next is posted;
 * (b) back to back: every turn is posted first, then every N is read.
 *
 * Every read must answer 200 with `decided_through >= N` (none times out),
 * and none may be over the threshold when the rule could bring it under.
 *
 * "Could bring it under" is computed independently of the service, by core's
 * `simulateStream` (what `autocompact simulate` runs) on the raw stream as
 * the service stored it, cut after turn D = the read's `decided_through`:
 * the state the deciding evaluation saw. Simulate evaluates every turn, so
 * its bands are those of per-turn evaluation; the service's stale rule may
 * have fired fewer, later bands, but a firing at D compacts everything from
 * its last band to D − keep_last with the same policies, so if simulate ends
 * at or under the threshold at D, the service's view of turns 0..D must be at
 * or under it too. The read is measured on those turns only (the view's
 * first D + 1 turns): in mode (b) the view also holds later turns that no
 * evaluation had seen when the read was answered (their own reads wait for
 * theirs). In mode (a) D = N and the view has exactly N + 1 turns.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { estimateStream, estimateView } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import { simulateStream } from "../../core/replay.ts";
import { splitTurns } from "../../core/turns.ts";
import { type LocalService, startLocalService } from "../../functions/local/runtime.ts";
import { prng, text } from "../helpers/conversation.ts";
import { sharedDatabase } from "../helpers/local-runtime.ts";

const KEY = "e2e-key";
const WINDOW = 16_000;
const RATIO = 0.5;
const THRESHOLD = WINDOW * RATIO;
const CONVERSATIONS = 5;
const TURNS = 12;
const TURN_BYTES = 6_000;
const WAIT_SECONDS = 25;
const AUTO = {
  enabled: true,
  trigger_ratio: RATIO,
  min_turns: 3,
  rule: { keep_first: 1, keep_last: 2, tool_calls: "strip" as const },
};

let service: LocalService;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-ryev-"));
  // The runtime's JSON logs and EMF lines are the operator's; keep the test output readable.
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  service = await startLocalService({
    port: 0,
    database: sharedDatabase(),
    host: "127.0.0.1",
    dataDir: dir,
    inMemory: true,
    devKey: KEY,
    logLevel: "ERROR",
  });
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A turn of about `bytes` bytes: a request, reasoning, a tool call with a large result, a message. */
function turnOfSize(turn: number, bytes: number, seed: number): Entry[] {
  const r = prng(seed * 1000 + turn);
  const at = (s: number) =>
    new Date(Date.UTC(2026, 10, 1) + turn * 60_000 + s * 1000).toISOString();
  return [
    { type: "turn_start", timestamp: at(0) },
    { type: "chat_request", timestamp: at(1), content: `step ${turn}: ${text(r, 12)}` },
    { type: "chat_response", timestamp: at(2), reasoning: text(r, 60) },
    {
      type: "tool_call_request",
      timestamp: at(3),
      id: `call_${turn}`,
      name: "fs_read_file",
      arguments: { path: `src/file_${turn}.ts` },
    },
    {
      type: "tool_call_response",
      timestamp: at(4),
      id: `call_${turn}`,
      content: text(r, Math.round(bytes / 7.5)),
      is_error: false,
    },
    { type: "chat_response", timestamp: at(5), message: text(r, 30) },
  ];
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function ok<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await call(method, path, body);
  const json = (await response.json()) as T;
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function configure(conversation: string): Promise<void> {
  await ok("PUT", `/v1/conversations/${conversation}/config`, {
    conversation: { compaction: { auto: AUTO } },
  });
}

async function postTurn(conversation: string, turn: number, seed: number): Promise<void> {
  const answer = await ok<{ status: string }>("POST", `/v1/conversations/${conversation}/turns`, {
    turn,
    model: { context_window: WINDOW },
    events: turnOfSize(turn, TURN_BYTES, seed),
  });
  expect(answer.status).toBe("created");
}

interface Read {
  readonly conversation: string;
  readonly afterTurn: number;
  readonly status: number;
  readonly ms: number;
  readonly body: {
    events?: Entry[];
    estimated_tokens?: number;
    evaluated_through?: number | null;
    decided_through?: number | null;
    type?: string;
  };
}

async function readAfter(conversation: string, afterTurn: number): Promise<Read> {
  const started = performance.now();
  const response = await call(
    "GET",
    `/v1/conversations/${conversation}/projection?after_turn=${afterTurn}&wait=${WAIT_SECONDS}`,
  );
  const body = (await response.json()) as Read["body"];
  return {
    conversation,
    afterTurn,
    status: response.status,
    ms: performance.now() - started,
    body,
  };
}

/** The raw stream as the service stored it, without its compactions. */
async function storedStream(conversation: string): Promise<Entry[]> {
  const { events } = await ok<{ events: Entry[] }>(
    "GET",
    `/v1/conversations/${conversation}/events`,
  );
  return events.filter((entry) => entry.type !== "compaction");
}

/** Whether per-turn evaluation (core's simulate) ends at or under the threshold after turn `last`. */
async function ruleBringsUnder(raw: Entry[], last: number): Promise<boolean> {
  const prefix = splitTurns(raw)
    .slice(0, last + 1)
    .flat();
  const simulated = await simulateStream(prefix, {
    layers: [AUTO],
    model: { context_window: WINDOW },
  });
  return estimateStream(simulated.entries).estimated_tokens <= THRESHOLD;
}

/**
 * Checks every read of `ids`: 200 and decided through its turn, and not over
 * the threshold when the rule can bring the decided state under. Returns
 * how many reads the rule could bring under (all of them were) and how many
 * of those it had to: their turns 0..D, uncompacted, are over the threshold.
 */
async function check(
  ids: readonly string[],
  reads: readonly Read[],
): Promise<{ underByRule: number; neededTheRule: number }> {
  const failures = reads.filter(
    (read) => read.status !== 200 || (read.body.decided_through ?? -1) < read.afterTurn,
  );
  expect(
    failures.map((read) => ({
      conversation: read.conversation,
      after_turn: read.afterTurn,
      status: read.status,
      body: read.status === 200 ? { decided_through: read.body.decided_through } : read.body,
    })),
  ).toEqual([]);
  const raws = new Map<string, Entry[]>();
  for (const id of ids) raws.set(id, await storedStream(id));
  let underByRule = 0;
  let neededTheRule = 0;
  const over: unknown[] = [];
  for (const read of reads) {
    const decided = read.body.decided_through as number;
    const raw = raws.get(read.conversation) as Entry[];
    if (!(await ruleBringsUnder(raw, decided))) continue;
    underByRule++;
    const rawTurns = splitTurns(raw)
      .slice(0, decided + 1)
      .flat();
    if (estimateStream(rawTurns).estimated_tokens > THRESHOLD) neededTheRule++;
    // The view's turns 0..D: what the deciding evaluation saw, with the bands written since.
    const seen = splitTurns(read.body.events ?? [])
      .slice(0, decided + 1)
      .flat();
    const tokens = estimateView(seen).estimated_tokens;
    if (tokens > THRESHOLD) {
      over.push({ conversation: read.conversation, after_turn: read.afterTurn, decided, tokens });
    }
  }
  expect(over).toEqual([]);
  return { underByRule, neededTheRule };
}

describe("read your evaluation under bursts (local runtime)", () => {
  it("(a) each turn read with after_turn before the next is posted: every read decided, none over the threshold the rule can reach", async () => {
    const ids = Array.from({ length: CONVERSATIONS }, (_, c) => `ryev-a-${c}`);
    await Promise.all(ids.map(configure));
    const reads = (
      await Promise.all(
        ids.map(async (id, c) => {
          const mine: Read[] = [];
          for (let turn = 0; turn < TURNS; turn++) {
            await postTurn(id, turn, c);
            mine.push(await readAfter(id, turn));
          }
          return mine;
        }),
      )
    ).flat();

    expect(reads).toHaveLength(CONVERSATIONS * TURNS);
    // Nothing newer than N exists when N is read: the decision is N's own.
    for (const read of reads) {
      if (read.status === 200) expect(read.body.decided_through).toBe(read.afterTurn);
      expect(read.ms).toBeLessThan(WAIT_SECONDS * 1000);
    }
    const { underByRule, neededTheRule } = await check(ids, reads);
    // Every state of these streams can be brought under (so every read was
    // checked), and for most reads only the bands bring it under.
    expect(underByRule).toBe(reads.length);
    expect(neededTheRule).toBeGreaterThanOrEqual(CONVERSATIONS * (TURNS - 6));
    const lastReads = reads.filter((read) => read.afterTurn === TURNS - 1);
    for (const read of lastReads) {
      // 12 raw turns would be about 18,000 tokens: the bands keep the view under 8,000.
      expect(read.body.estimated_tokens).toBeLessThanOrEqual(THRESHOLD);
    }
    const compactions = await Promise.all(
      ids.map((id) => ok<{ compactions: unknown[] }>("GET", `/v1/conversations/${id}/compactions`)),
    );
    for (const { compactions: list } of compactions) expect(list.length).toBeGreaterThan(0);
  }, 180_000);

  it("(b) every turn posted back to back, then each N read with after_turn=N: every read decided, none over the threshold the rule can reach", async () => {
    const ids = Array.from({ length: CONVERSATIONS }, (_, c) => `ryev-b-${c}`);
    await Promise.all(ids.map(configure));
    await Promise.all(
      ids.map(async (id, c) => {
        for (let turn = 0; turn < TURNS; turn++) await postTurn(id, turn, c);
      }),
    );
    const reads = await Promise.all(
      ids.flatMap((id) => Array.from({ length: TURNS }, (_, turn) => readAfter(id, turn))),
    );

    expect(reads).toHaveLength(CONVERSATIONS * TURNS);
    for (const read of reads) expect(read.ms).toBeLessThan(WAIT_SECONDS * 1000);
    const { underByRule, neededTheRule } = await check(ids, reads);
    expect(underByRule).toBe(reads.length);
    expect(neededTheRule).toBeGreaterThan(0);
    // Once everything is evaluated, every conversation's view is under the threshold.
    for (const id of ids) {
      const final = await readAfter(id, TURNS - 1);
      expect(final.status).toBe(200);
      expect(final.body.decided_through).toBe(TURNS - 1);
      expect(final.body.estimated_tokens).toBeLessThanOrEqual(THRESHOLD);
    }
  }, 180_000);
});
