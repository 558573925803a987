/**
 * A platform engineer's first hour (issue 31), scripted: `npm start` as the
 * README says, on a clean data directory and the README's own key and URL
 * (only the port is a free one), then, in order,
 * - the README's "Try it", its shell blocks as written, each printing what
 *   its comments say, the first band among them;
 * - the mistakes a new user makes first: a conversation posted without
 *   turning compaction on, and a model no catalog knows; each says so in the
 *   post's answer, the client's `onWarning`, the CLI and the console, and
 *   says what to do, and doing it clears the warning;
 * - the console's pictures of both at 1280 and 390 px, no page wider than
 *   its viewport;
 * - Ctrl-C (SIGINT; crash-recovery.test.ts sends SIGTERM), which stops the
 *   service and DynamoDB Local within 5 s.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AutocompactClient, type Warning } from "../../client/index.ts";
import { launchChromium } from "../helpers/browser.ts";
import { runCli } from "../helpers/cli.ts";
import { killServed, runtimePidsFor, type Served, serve } from "../helpers/npm-start.ts";
import { expectedOutput, runBlocks, tryItBlocks } from "../helpers/readme.ts";
import { offWarning } from "../helpers/warnings.ts";

/** The README's key: `npm start`'s default dev key, which the CLI also defaults to. */
const README_KEY = "local-dev-key";
/** No key of the test's environment in the way of the defaults. */
const NO_KEYS = { AUTOCOMPACT_DEV_KEY: undefined, AUTOCOMPACT_KEY: undefined };
const OFF = "first-hour-off";
const UNKNOWN = "first-hour-unknown";
const UNKNOWN_MODEL = "acme-coder-9";
const ON = { conversation: { compaction: { auto: { enabled: true } } } };
/** On from the first turn, so the window is what stops it. */
const ON_AT_ONCE = { conversation: { compaction: { auto: { enabled: true, min_turns: 0 } } } };
const UNKNOWN_WARNING = {
  code: "context_window_unknown",
  detail:
    'the context window of model "acme-coder-9" is unknown, so automatic compaction cannot fire: post each turn with `model.context_window` (the window in tokens), or add the model to the service\'s catalog (`MODEL_CATALOG`, e.g. {"acme-coder-9":128000})',
};

let dataDir: string;
let served: Served;
let client: AutocompactClient;
const heard: Array<[string, Warning]> = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "autocompact-first-hour-"));
  served = await serve(join(dataDir, "data"), { viaNpm: true, env: NO_KEYS });
  client = new AutocompactClient({
    url: served.url,
    key: README_KEY,
    onWarning: (warning, conversation) => heard.push([conversation, warning]),
  });
}, 120_000);

afterAll(async () => {
  killServed();
  await rm(dataDir, { recursive: true, force: true });
});

/** A turn of two OpenAI Chat messages, as the README's integration posts them. */
const chatTurn = (turn: number, model: { id: string }) => ({
  turn,
  format: "openai-chat" as const,
  model,
  messages: [
    { role: "user", content: `question ${turn}` },
    { role: "assistant", content: `answer ${turn}` },
  ],
});

/** A PNG's width and height, from its IHDR chunk. */
async function pngSize(file: string): Promise<[number, number]> {
  const bytes = await readFile(file);
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

describe("a new user's first hour on npm start", () => {
  it("runs the README's Try it: each block prints what it says, bands fire", async () => {
    const blocks = tryItBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const ran = await runBlocks(
      blocks,
      (script) => {
        expect(script).toContain("URL=http://127.0.0.1:8787\n");
        return script
          .replace("URL=http://127.0.0.1:8787\n", `URL=${served.url}\n`)
          .replaceAll("/tmp/demo.json", join(dataDir, "demo.json"));
      },
      { ...process.env, ...NO_KEYS },
    );
    for (const [index, { block, printed, expected }] of ran.entries()) {
      expect(printed, `block ${index + 1}:\n${block}`).toEqual(expected);
    }
    // Every block but the first says what it prints; the first band fires at turn 3.
    expect(blocks.slice(1).every((block) => expectedOutput(block).length > 0)).toBe(true);
    expect(ran[1]?.printed).toContain('{"turn":3,"outcome":"fired","reason":null,"band":[1,1]}');
  }, 180_000);

  it("says compaction is off on a conversation posted without turning it on, and how to", async () => {
    heard.length = 0;
    const posted = await client.postTurn(OFF, chatTurn(0, { id: "gpt-4.1" }), { wait: 25 });
    expect(posted.decision).toMatchObject({ outcome: "skipped", reason: "disabled" });
    expect(posted.warnings).toEqual([offWarning(OFF)]);
    expect(heard).toEqual([[OFF, offWarning(OFF)]]);
    const printed = await runCli(["print", "-c", OFF, "--url", served.url], { env: NO_KEYS });
    expect(printed.code).toBe(0);
    expect(printed.stderr).toBe(`warning: auto_disabled: ${offWarning(OFF).detail}\n`);
  });

  it("says a model's window is unknown, and how to give it", async () => {
    await client.putConfig(UNKNOWN, ON_AT_ONCE);
    const posted = await client.postTurn(UNKNOWN, chatTurn(0, { id: UNKNOWN_MODEL }), {
      wait: 25,
    });
    expect(posted.decision).toMatchObject({
      outcome: "skipped",
      reason: "context_window_unknown",
    });
    expect(posted.warnings).toEqual([UNKNOWN_WARNING]);
    expect((await client.conversation(UNKNOWN)).warnings).toEqual([UNKNOWN_WARNING]);
  });

  it("marks both in the console, at 1280 and 390 px, no page wider than its viewport", async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      for (const width of [1280, 390]) {
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        await page.goto(`${served.url}/console`);
        await page.getByLabel("API key").fill(README_KEY);
        await page.getByRole("button", { name: "Sign in" }).click();
        const badges = (id: string) => page.locator(`tr[data-conversation="${id}"] .badge.warning`);
        await expect.poll(() => badges(UNKNOWN).count()).toBe(1);
        expect(await badges(OFF).allTextContents()).toEqual(["auto_disabled"]);
        expect(await badges(UNKNOWN).allTextContents()).toEqual(["context_window_unknown"]);
        // The README's walkthrough deleted its conversations: these two are all there is.
        expect(await page.locator("tr[data-conversation]").count()).toBe(2);
        const list = join(dataDir, `list-${width}.png`);
        await page.screenshot({ path: list });
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBe(width);
        await page.getByRole("link", { name: UNKNOWN }).click();
        const items = page.locator(".warning-list li");
        await expect.poll(() => items.count()).toBe(1);
        expect(await items.textContent()).toBe(`context_window_unknown ${UNKNOWN_WARNING.detail}`);
        const conversation = join(dataDir, `conversation-${width}.png`);
        await page.screenshot({ path: conversation });
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBe(width);
        expect(await pngSize(list)).toEqual([width, 900]);
        expect(await pngSize(conversation)).toEqual([width, 900]);
        await page.close();
      }
    } finally {
      await browser?.close();
    }
  }, 60_000);

  it("clears each warning once its answer is done: the config, then the tenant's models", async () => {
    // What auto_disabled's detail says to send.
    expect(offWarning(OFF).detail).toContain(
      `PUT /v1/conversations/${OFF}/config ${JSON.stringify(ON)}`,
    );
    await client.putConfig(OFF, ON);
    expect((await client.conversation(OFF)).warnings).toEqual([]);
    expect(await client.tenant.putModels({ [UNKNOWN_MODEL]: 8_000 })).toEqual({
      models: { [UNKNOWN_MODEL]: 8_000 },
    });
    expect((await client.conversation(UNKNOWN)).warnings).toEqual([]);
    const next = await client.postTurn(UNKNOWN, chatTurn(1, { id: UNKNOWN_MODEL }), { wait: 25 });
    expect(next.decision).toMatchObject({ outcome: "skipped", reason: "under_threshold" });
    expect(next.warnings).toEqual([]);
    const listed = await client.listConversations();
    expect(listed.conversations.find((c) => c.id === UNKNOWN)?.context_window).toBe(8_000);
  });

  it("stops, service and DynamoDB Local, within 5 s of Ctrl-C (SIGINT) to npm start", async () => {
    const data = join(dataDir, "data");
    expect(runtimePidsFor(data).length).toBeGreaterThanOrEqual(2);
    const exited = new Promise((resolve) => served.child.once("exit", resolve));
    const started = performance.now();
    served.child.kill("SIGINT");
    await exited;
    await expect.poll(() => runtimePidsFor(data), { timeout: 5_000, interval: 50 }).toEqual([]);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
