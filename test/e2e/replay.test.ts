/**
 * End to end on the local runtime (DynamoDB Local, HTTP, in-process queue,
 * compactor): a recorded conversation replayed through the webhook turn by
 * turn, each evaluation awaited, must end with exactly the bands and the
 * projected view that `autocompact simulate` computes offline.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Compaction, Entry } from "../../core/events.ts";
import { project } from "../../core/projection.ts";
import { cliStdout } from "../helpers/cli.ts";
import { generateConversation } from "../helpers/conversation.ts";
import {
  REPLAY_AUTO,
  REPLAY_WINDOW,
  startTestRuntime,
  type TestRuntime,
} from "../helpers/local-runtime.ts";

let runtime: TestRuntime;

beforeAll(async () => {
  runtime = await startTestRuntime("autocompact-e2e-");
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

describe("the local runtime end to end", () => {
  it("replays a conversation through the webhook and ends where `autocompact simulate` ends", async () => {
    const stream: Entry[] = JSON.parse(
      JSON.stringify(generateConversation({ seed: 314, turns: 36 })),
    );
    const conversation = "e2e-replay";
    const answers = await runtime.replay(conversation, stream);
    expect(answers.map((answer) => answer.status)).toEqual(Array(36).fill("created"));

    const file = join(runtime.dir, "recorded.json");
    const out = join(runtime.dir, "simulated.json");
    await writeFile(file, JSON.stringify(stream));
    const stdout = await cliStdout([
      "simulate",
      file,
      "--context-window",
      String(REPLAY_WINDOW),
      "--config",
      JSON.stringify({ conversation: { compaction: { auto: REPLAY_AUTO } } }),
      "--out",
      out,
    ]);
    const firings = stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(firings.length).toBeGreaterThanOrEqual(2);

    const { compactions } = await runtime.api<{
      compactions: (Compaction & { position: number })[];
    }>("GET", `/v1/conversations/${conversation}/compactions`);
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
    const view = await runtime.api<{ events: Entry[]; turns: unknown[]; estimated_tokens: number }>(
      "GET",
      `/v1/conversations/${conversation}/projection`,
    );
    expect(view.events).toEqual(expected.entries);
    expect(view.turns).toEqual(expected.turns);
  }, 180_000);
});
