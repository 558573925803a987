/**
 * `autocompact tune --url --key --conversation` (issue 17) on the local
 * runtime: conversations replayed through the webhook, where the service's
 * own automatic bands fire, tune to exactly the lines `tune` prints for the
 * same streams read from files (tune drops automatic bands and replays the
 * rule itself, so the bands the service fired change nothing).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import { cliStdout } from "../helpers/cli.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { RUNTIME_KEY, startTestRuntime, type TestRuntime } from "../helpers/local-runtime.ts";

const GRID = "trigger_ratio=0.5,0.8 keep_first=0,1 keep_last=2 tool_calls=strip,omit";
const WINDOW = "9000";
const CONVERSATIONS = [
  { id: "tune-a", seed: 21 },
  { id: "tune-b", seed: 22 },
];

let runtime: TestRuntime;

beforeAll(async () => {
  runtime = await startTestRuntime("autocompact-tune-online-");
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

const tune = (...args: string[]) =>
  cliStdout(["tune", ...args, "--json", "--context-window", WINDOW, "--grid", GRID]);

describe("autocompact tune on a running service", () => {
  it("prints the lines tune prints for the same streams read from files", async () => {
    const files: string[] = [];
    for (const { id, seed } of CONVERSATIONS) {
      const stream = generateConversation({ seed, turns: 30 });
      await runtime.replay(id, stream);
      const file = join(runtime.dir, `${id}.json`);
      await writeFile(file, JSON.stringify(stream));
      files.push(file);
      // The service's stream carries the bands it fired itself.
      const { events } = await runtime.api<{ events: Entry[] }>(
        "GET",
        `/v1/conversations/${id}/events`,
      );
      expect(
        events.filter((e) => e.type === "compaction" && "source" in e && e.source === "auto"),
      ).not.toEqual([]);
    }

    const online = await tune(
      ...CONVERSATIONS.flatMap(({ id }) => ["--conversation", id]),
      "--url",
      runtime.service.url,
      "--key",
      RUNTIME_KEY,
    );
    const offline = await tune(...files);
    expect(online).toBe(offline);

    const lines = online
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    // A line per configuration, then the summary (2 conversations: too few to answer).
    expect(lines).toHaveLength(9);
    expect(lines.pop().summary.warnings.map((w: { code: string }) => w.code)).toEqual([
      "too_few_firing",
    ]);
    for (const line of lines) expect([line.conversations, line.turns]).toEqual([2, 60]);
    expect(lines.some((line) => line.firings > 0)).toBe(true);
  }, 180_000);
});
