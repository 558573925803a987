/**
 * The page `tune --html` writes, opened in headless Chromium from a file:
 * its Content-Security-Policy admits its own stylesheet (the style applies)
 * and nothing else, and it fetches nothing.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium, watchPage } from "../helpers/browser.ts";
import { runCli } from "../helpers/cli.ts";
import { generateConversation } from "../helpers/conversation.ts";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-tune-page-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("renders the verdict, the table and the curves under its own CSP, fetching nothing", async () => {
  const files: string[] = [];
  for (const seed of [1, 2, 3, 4, 5]) {
    const file = join(dir, `c${seed}.json`);
    await writeFile(file, JSON.stringify(generateConversation({ seed, turns: 20 })));
    files.push(file);
  }
  const html = join(dir, "tune.html");
  const grid = "trigger_ratio=0.5,0.8 keep_first=0 keep_last=1,2 tool_calls=omit";
  const result = await runCli([
    "tune",
    ...files,
    "--context-window",
    "20000",
    "--grid",
    grid,
    "--html",
    html,
  ]);
  expect(result.code).toBe(0);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const url = pathToFileURL(html).href;
    const watch = await watchPage(page, new URL(url).origin);
    await page.goto(url);
    await watch.collect();
    expect(watch.violations).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    expect(watch.foreignRequests.filter((request) => request !== url)).toEqual([]);
    // The stylesheet applied: the body's width is the page's own.
    expect(await page.evaluate("getComputedStyle(document.body).maxWidth")).toBe("1100px");
    expect(await page.locator("table tr").count()).toBe(5);
    expect(await page.locator("figure").count()).toBe(5);
    expect(await page.locator("h2").allTextContents()).toContain("Verdict");
  } finally {
    await browser.close();
  }
}, 60_000);
