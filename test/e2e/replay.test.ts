/**
 * End to end on the local runtime (DynamoDB Local, HTTP, in-process queue,
 * compactor): a recorded conversation replayed through the webhook turn by
 * turn, each evaluation awaited, must end with exactly the bands and the
 * projected view that `autocompact simulate` computes offline.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Compaction, Entry } from "../../core/events.ts";
import { project } from "../../core/projection.ts";
import { splitTurns } from "../../core/turns.ts";
import { type LocalService, startLocalService } from "../../functions/local/runtime.ts";
import { generateConversation } from "../helpers/conversation.ts";

const run = promisify(execFile);
const KEY = "e2e-key";
const AUTO = {
  enabled: true,
  trigger_ratio: 0.55,
  min_turns: 4,
  rule: { keep_first: 1, keep_last: 2 },
};
const WINDOW = 9_000;

let service: LocalService;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-e2e-"));
  // The runtime's JSON logs and EMF lines are the operator's; keep the test output readable.
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  service = await startLocalService({
    port: 0,
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

/** Waits, by the clock and not by a count of polls, until `turn` has been evaluated. */
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

describe("the local runtime end to end", () => {
  it("replays a conversation through the webhook and ends where `autocompact simulate` ends", async () => {
    const stream: Entry[] = JSON.parse(
      JSON.stringify(generateConversation({ seed: 314, turns: 36 })),
    );
    const conversation = "e2e-replay";
    await api("PUT", `/v1/conversations/${conversation}/config`, {
      conversation: { compaction: { auto: AUTO } },
    });
    for (const [turn, events] of splitTurns(stream).entries()) {
      const answer = await api<{ status: string }>(
        "POST",
        `/v1/conversations/${conversation}/turns`,
        {
          turn,
          model: { id: "recorded-model", context_window: WINDOW },
          events,
        },
      );
      expect(answer.status).toBe("created");
      await waitEvaluated(conversation, turn);
    }

    const file = join(dir, "recorded.json");
    const out = join(dir, "simulated.json");
    await writeFile(file, JSON.stringify(stream));
    const bin = new URL("../../cli/bin.mjs", import.meta.url).pathname;
    const { stdout } = await run(process.execPath, [
      bin,
      "simulate",
      file,
      "--context-window",
      String(WINDOW),
      "--config",
      JSON.stringify({ conversation: { compaction: { auto: AUTO } } }),
      "--out",
      out,
    ]);
    const firings = stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(firings.length).toBeGreaterThanOrEqual(2);

    const { compactions } = await api<{ compactions: (Compaction & { position: number })[] }>(
      "GET",
      `/v1/conversations/${conversation}/compactions`,
    );
    expect(
      compactions.map((c) => ({
        source: c.source,
        turn: c.trigger?.turn,
        from: c.from_turn,
        to: c.to_turn,
      })),
    ).toEqual(
      firings.map((f) => ({ source: "auto", turn: f.turn, from: f.from_turn, to: f.to_turn })),
    );
    compactions.forEach((c, i) => {
      expect(c.trigger?.estimated_tokens).toBe(firings[i].estimated_tokens);
      expect(c.trigger?.estimated_tokens_after).toBe(firings[i].estimated_tokens_after);
    });

    const simulated: Entry[] = JSON.parse(await readFile(out, "utf8"));
    const expected = project(simulated);
    const view = await api<{ events: Entry[]; turns: unknown[]; estimated_tokens: number }>(
      "GET",
      `/v1/conversations/${conversation}/projection`,
    );
    expect(view.events).toEqual(expected.entries);
    expect(view.turns).toEqual(expected.turns);
  }, 180_000);
});
