/**
 * `npm start` as a user runs it: killed with SIGKILL in the middle of a burst
 * of turns and started again on the same data, it has lost no acknowledged
 * turn and finishes every pending evaluation; SIGTERM to `npm start` then
 * stops it without leaving the service or DynamoDB Local's Java behind.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { splitTurns } from "../../core/turns.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { javaPidsFor, killServed, runtimePidsFor, serve as start } from "../helpers/npm-start.ts";

const KEY = "crash-key";

afterAll(killServed);

/** Starts `autocompact serve` with the test's dev key (through `npm start` with `viaNpm`). */
const serve = (dataDir: string, viaNpm = false) =>
  start(dataDir, { viaNpm, env: { AUTOCOMPACT_DEV_KEY: KEY } });

function api(url: string) {
  return async <T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as T };
  };
}

describe("npm start under SIGKILL", () => {
  it("loses no acknowledged turn and finishes every pending evaluation after a restart", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "autocompact-crash-"));
    try {
      const first = await serve(dataDir);
      const call = api(first.url);
      const conversations = ["a", "b", "c", "d"];
      const streams = conversations.map((_, i) =>
        splitTurns(JSON.parse(JSON.stringify(generateConversation({ seed: 700 + i, turns: 14 })))),
      );
      for (const id of conversations) {
        await call("PUT", `/v1/conversations/${id}/config`, {
          conversation: {
            compaction: { auto: { enabled: true, trigger_ratio: 0.5, min_turns: 3 } },
          },
        });
      }
      const acknowledged = new Map<string, number>();
      await Promise.all(
        conversations.map(async (id, i) => {
          for (const [turn, events] of (streams[i] ?? []).entries()) {
            const { status } = await call("POST", `/v1/conversations/${id}/turns`, {
              turn,
              model: { context_window: 6_000 },
              events,
            });
            if (status !== 202) throw new Error(`turn ${turn} of ${id}: ${status}`);
            acknowledged.set(id, turn + 1);
          }
        }),
      );
      first.child.kill("SIGKILL");
      await new Promise((resolve) => first.child.once("exit", resolve));

      const second = await serve(dataDir, true);
      const again = api(second.url);
      for (const id of conversations) {
        let summary: { turn_count: number; evaluated_through: number | null } | undefined;
        // Polled until a deadline, not a count: a loaded machine only makes it slower.
        await expect
          .poll(
            async () => {
              summary = (
                await again<{ turn_count: number; evaluated_through: number | null }>(
                  "GET",
                  `/v1/conversations/${id}`,
                )
              ).body;
              return summary.turn_count - 1 - (summary.evaluated_through ?? -1);
            },
            { timeout: 60_000, interval: 50, message: `every turn of ${id} evaluated` },
          )
          .toBe(0);
        expect(summary?.turn_count).toBe(acknowledged.get(id));
        expect(summary?.evaluated_through).toBe((acknowledged.get(id) ?? 0) - 1);
        const events = (await again<{ events: unknown[] }>("GET", `/v1/conversations/${id}/events`))
          .body.events;
        expect(events.filter((e) => (e as { type: string }).type !== "compaction")).toEqual(
          streams[conversations.indexOf(id)]?.flat(),
        );
      }

      expect(javaPidsFor(dataDir)).toHaveLength(1);

      // A start that fails (the port is taken) says why in one line and leaves no Java behind.
      const busyDir = await mkdtemp(join(tmpdir(), "autocompact-busy-"));
      try {
        const port = new URL(second.url).port;
        // The port flag comes last, so it wins over the helper's `--port 0`.
        await expect(
          start(busyDir, { env: { AUTOCOMPACT_DEV_KEY: KEY }, args: ["--port", port] }),
        ).rejects.toThrow(
          new Error(
            `serve exited (1) before starting: autocompact: port ${port} is in use: choose another with --port or PORT\n`,
          ),
        );
        expect(javaPidsFor(busyDir)).toEqual([]);
      } finally {
        await rm(busyDir, { recursive: true, force: true });
      }

      // SIGTERM to `npm start` (a process manager's stop) stops the service and its Java, not npm alone.
      second.child.kill("SIGTERM");
      await new Promise((resolve) => second.child.once("exit", resolve));
      await expect
        .poll(() => runtimePidsFor(dataDir), {
          timeout: 10_000,
          message: "the service and DynamoDB Local stopped",
        })
        .toEqual([]);
      expect(() => readFileSync(join(dataDir, "dynamodb", ".dynamodb-local.pid"))).toThrow();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
