/**
 * Dead letters end to end on the local runtime (DynamoDB Local, HTTP,
 * in-process queue, compactor), with `autocompact dlq` given the command
 * line an operator types (run in process: test/helpers/cli.ts): a turn whose
 * summary fails 5 times is dead-lettered, `dlq list` shows its tenant,
 * conversation and turn beside the failure the compactor recorded, and once
 * the summarizer is fixed `dlq redrive` moves it back and it evaluates: the
 * band is written.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SummarizerError } from "../../functions/errors.ts";
import { type LocalService, startLocalService } from "../../functions/local/runtime.ts";
import type { Summarizer } from "../../functions/ports.ts";
import { runCli } from "../helpers/cli.ts";
import { sharedDatabase } from "../helpers/local-runtime.ts";

const KEY = "dlq-e2e-key";
const CONVERSATION = "dlq-e2e";

let service: LocalService;
let dir: string;
/** The cause to fix: while true every summary fails. */
let summarizerDown = true;
const summarizer: Summarizer = {
  async summarize(request) {
    if (summarizerDown) {
      throw new SummarizerError("the summarizer is down (injected)", { upstreamStatus: 503 });
    }
    return {
      text: `turns ${request.from_turn}..${request.to_turn}, summarized`,
      model: "stub-model",
      latency_ms: 1,
    };
  },
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-dlq-"));
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  service = await startLocalService({
    port: 0,
    database: sharedDatabase(),
    host: "127.0.0.1",
    dataDir: dir,
    inMemory: true,
    devKey: KEY,
    logLevel: "CRITICAL",
    summarizer,
    // 5 receives of a failing message take 5 visibility timeouts.
    visibilityTimeoutMs: 1_000,
  });
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T;
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** `autocompact dlq …`: exit code and its JSON lines (none when it fails). */
async function dlq(...args: string[]): Promise<{ code: number; lines: unknown[]; stderr: string }> {
  const { code, stdout, stderr } = await runCli(["dlq", ...args], {
    env: { AUTOCOMPACT_KEY: "not-the-dev-key" },
  });
  if (code !== 0) return { code, lines: [], stderr };
  const lines =
    stdout.trim() === ""
      ? []
      : stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l));
  return { code: 0, lines, stderr };
}

const turn = (t: number) => ({
  turn: t,
  model: { id: "my-model", context_window: 4_000 },
  events: [
    { type: "turn_start", timestamp: `2026-11-29T10:0${t}:00Z` },
    { type: "chat_request", timestamp: `2026-11-29T10:0${t}:01Z`, content: `step ${t}` },
    {
      type: "chat_response",
      timestamp: `2026-11-29T10:0${t}:02Z`,
      message: `${"line ".repeat(600)}done with step ${t}`,
    },
  ],
});

describe("dead letters on the local runtime", () => {
  it("lists a dead letter with its recorded error, and redrives it to a successful evaluation", async () => {
    await api("PUT", `/v1/conversations/${CONVERSATION}/config`, {
      conversation: {
        compaction: {
          auto: {
            enabled: true,
            trigger_ratio: 0.5,
            min_turns: 1,
            rule: { keep_first: 1, keep_last: 1, summary: {} },
          },
        },
      },
    });
    for (const t of [0, 1, 2]) {
      await api("POST", `/v1/conversations/${CONVERSATION}/turns`, turn(t));
    }
    // Turn 2 fires a summary that fails on each of its 5 receives.
    await expect
      .poll(() => service.queue.deadLetters().length, { timeout: 60_000, interval: 50 })
      .toBe(1);

    const listed = await dlq("list", "--url", service.url, "--key", KEY);
    expect(listed).toEqual({ code: 0, lines: [expect.any(Object)], stderr: "" });
    expect(listed.lines[0]).toEqual({
      message_id: expect.any(String),
      receive_count: 5,
      sent_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      tenant: "dev",
      conversation: "dlq-e2e",
      turn: 2,
      last_failure: {
        turn: 2,
        error: "SummarizerError",
        message: "the summarizer is down (injected)",
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    // The admin routes take the dev key only (the CLI defaults to it, not to AUTOCOMPACT_KEY).
    const refused = await dlq("list", "--url", service.url, "--key", "someone-else");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("401");
    expect(
      (await api<{ evaluated_through: number }>("GET", `/v1/conversations/${CONVERSATION}`))
        .evaluated_through,
    ).toBe(1);

    // The cause is fixed; the dead letter goes back and evaluates.
    summarizerDown = false;
    expect(await dlq("redrive", "--url", service.url, "--key", KEY)).toEqual({
      code: 0,
      lines: [{ moved: 1 }],
      stderr: "",
    });
    await expect
      .poll(
        async () =>
          (await api<{ evaluated_through: number }>("GET", `/v1/conversations/${CONVERSATION}`))
            .evaluated_through,
        { timeout: 30_000, interval: 50 },
      )
      .toBe(2);
    const { compactions } = await api<{ compactions: unknown[] }>(
      "GET",
      `/v1/conversations/${CONVERSATION}`,
    );
    expect(compactions).toEqual([
      expect.objectContaining({
        from_turn: 1,
        to_turn: 1,
        source: "auto",
        summary: { summary: "turns 1..1, summarized" },
      }),
    ]);
    expect(service.queue.deadLetters()).toEqual([]);
    expect(await dlq("list", "--url", service.url, "--key", KEY)).toEqual({
      code: 0,
      lines: [],
      stderr: "",
    });
  }, 120_000);
});
