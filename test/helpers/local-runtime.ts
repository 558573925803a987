/**
 * The local runtime (functions/local/runtime.ts: DynamoDB Local in memory,
 * HTTP, in-process queue, compactor) as the end-to-end tests start it, its
 * API called as the dev tenant, and a recorded conversation replayed through
 * the webhook turn by turn, each evaluation awaited.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, vi } from "vitest";
import type { Entry } from "../../core/events.ts";
import { splitTurns } from "../../core/turns.ts";
import { randomCredentials } from "../../functions/local/dynamodb-local.ts";
import {
  type LocalService,
  type LocalServiceOptions,
  startLocalService,
} from "../../functions/local/runtime.ts";
import { localEndpoint } from "./dynamodb.ts";

/**
 * A database of its own on the run's DynamoDB Local (test/setup/dynamodb.ts),
 * for a runtime that need not own its Java process: fresh credentials select
 * an empty database (functions/local/dynamodb-local.ts). That holds only on a
 * server without `-sharedDb`, as the run's own is; an external one set by
 * `AUTOCOMPACT_TEST_DYNAMODB_ENDPOINT` must be started the same way.
 */
export function sharedDatabase(): NonNullable<LocalServiceOptions["database"]> {
  return { endpoint: localEndpoint(), credentials: randomCredentials() };
}

/** The dev tenant's API key of a {@link startTestRuntime} runtime. */
export const RUNTIME_KEY = "e2e-key";

/** The automatic compaction {@link TestRuntime.replay} sets: a 30-turn generated conversation fires a few bands. */
export const REPLAY_AUTO = {
  enabled: true,
  trigger_ratio: 0.55,
  min_turns: 4,
  rule: { keep_first: 1, keep_last: 2 },
} as const;

/** The context window the replayed turns declare. */
export const REPLAY_WINDOW = 9_000;

/** A running local runtime and what a test does with it. */
export interface TestRuntime {
  readonly service: LocalService;
  /** A temporary folder of the test's own (the runtime keeps no data in it); removed by `stop`. */
  readonly dir: string;
  /** Calls the API as the dev tenant; throws on any non-2xx answer. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Waits, by the clock and not by a count of polls, until `turn` has been evaluated. */
  waitEvaluated(conversation: string, turn: number): Promise<void>;
  /**
   * Sets {@link REPLAY_AUTO} on `conversation`, then posts `stream` turn by
   * turn under {@link REPLAY_WINDOW}, each turn's evaluation awaited before
   * the next: the webhook's answers, one a turn.
   */
  replay(conversation: string, stream: readonly Entry[]): Promise<{ status: string }[]>;
  /** Stops the runtime, removes the folder and the env stubs. */
  stop(): Promise<void>;
}

/**
 * Starts the local runtime in memory on a free port, its JSON logs kept to
 * errors and its EMF lines off (they are the operator's; the test output stays
 * readable). `prefix` names the temporary folder; `options` are the runtime's
 * own (its notification backoff, its model catalog, its service config layer).
 */
export async function startTestRuntime(
  prefix: string,
  options: Pick<LocalServiceOptions, "notificationBackoff" | "catalog" | "config"> = {},
): Promise<TestRuntime> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  const service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir: dir,
    inMemory: true,
    devKey: RUNTIME_KEY,
    logLevel: "ERROR",
    database: sharedDatabase(),
    ...options,
  });

  async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${RUNTIME_KEY}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as T;
    if (!response.ok)
      throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  }

  async function waitEvaluated(conversation: string, turn: number): Promise<void> {
    await expect
      .poll(
        async () =>
          (
            await api<{ evaluated_through: number | null }>(
              "GET",
              `/v1/conversations/${conversation}`,
            )
          ).evaluated_through,
        { timeout: 60_000, interval: 25, message: `turn ${turn} of ${conversation} evaluated` },
      )
      .toBeGreaterThanOrEqual(turn);
  }

  return {
    service,
    dir,
    api,
    waitEvaluated,
    async replay(conversation, stream) {
      await api("PUT", `/v1/conversations/${conversation}/config`, {
        conversation: { compaction: { auto: REPLAY_AUTO } },
      });
      const answers: { status: string }[] = [];
      for (const [turn, events] of splitTurns(stream).entries()) {
        answers.push(
          await api<{ status: string }>("POST", `/v1/conversations/${conversation}/turns`, {
            turn,
            model: { id: "recorded-model", context_window: REPLAY_WINDOW },
            events,
          }),
        );
        await waitEvaluated(conversation, turn);
      }
      return answers;
    },
    async stop() {
      vi.unstubAllEnvs();
      await service.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
