/**
 * `npm run screenshots`: refreshes the console's pictures in docs/operate.md
 * (docs/console-*.png), the conversation list with its warnings, a
 * conversation page (its estimator fitted to reported usage), the warnings
 * of a conversation left at the defaults, and the confirmation "Reset
 * automatic bands" asks (nothing is removed: the dialog is dismissed) at
 * 1280 and 390 px wide, taken in headless Chromium
 * (test/helpers/browser.ts)
 * from the local runtime with generated conversations replayed through the
 * webhook, as the browser tests do.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalService } from "../functions/local/runtime.ts";
import { callApi, launchChromium, replayGenerated } from "../test/helpers/browser.ts";

const KEY = "screenshots-key";
const DOCS = fileURLToPath(new URL("../docs/", import.meta.url));
const WIDTHS = [1280, 390] as const;
const SHOWN = "support-ticket-4711";
/** Posted without turning compaction on, and with a model no catalog knows: the warnings shown. */
const LEFT_OFF = "onboarding-bot-17";
const UNKNOWN_MODEL = "billing-agent-8";
/** How much of the conversation page the picture shows, px, by width: the chart, the firings and the bands. */
const CONVERSATION_HEIGHT: Record<(typeof WIDTHS)[number], number> = { 1280: 1750, 390: 3800 };

async function main(): Promise<void> {
  process.env.POWERTOOLS_METRICS_DISABLED = "true";
  const dataDir = await mkdtemp(join(tmpdir(), "autocompact-screenshots-"));
  const service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir,
    inMemory: true,
    devKey: KEY,
    logLevel: "ERROR",
  });
  const browser = await launchChromium();
  try {
    await replayGenerated(service.url, KEY, SHOWN, {
      seed: 314,
      turns: 30,
      contextWindow: 16_000,
      reportUsage: true,
    });
    await replayGenerated(service.url, KEY, "code-review-2291", { seed: 27, turns: 12 });
    await replayGenerated(service.url, KEY, LEFT_OFF, { seed: 5, turns: 4, enable: false });
    await replayGenerated(service.url, KEY, UNKNOWN_MODEL, {
      seed: 8,
      turns: 3,
      model: { id: "acme-coder-9" },
    });
    // A manual band beside the automatic ones, so the strip shows both.
    await callApi(service.url, KEY, "POST", `/v1/conversations/${SHOWN}/compactions`, {
      spec: "t=omit:20..24",
    });
    for (const width of WIDTHS) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`${service.url}/console`);
      await page.getByLabel("API key").fill(KEY);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.locator("tr[data-conversation]").first().waitFor();
      await save(page.screenshot({ path: join(DOCS, `console-list-${width}.png`) }), width, "list");
      await page.getByRole("link", { name: SHOWN }).click();
      await page.locator("#firings li").first().waitFor();
      await save(
        page.screenshot({
          path: join(DOCS, `console-conversation-${width}.png`),
          // The chart, the bands and the actions; the reader below goes on for pages.
          fullPage: true,
          clip: { x: 0, y: 0, width, height: CONVERSATION_HEIGHT[width] },
        }),
        width,
        "conversation",
      );
      await page.getByRole("button", { name: "Reset automatic bands" }).click();
      await page.getByRole("dialog").waitFor();
      await save(
        page.screenshot({ path: join(DOCS, `console-confirm-${width}.png`) }),
        width,
        "confirm",
      );
      await page.keyboard.press("Escape");
      await page.goto(`${service.url}/console#/c/${LEFT_OFF}`);
      await page.locator(".warning-list li").first().waitFor();
      await save(
        page.screenshot({ path: join(DOCS, `console-warnings-${width}.png`) }),
        width,
        "warnings",
      );
      await page.close();
    }
  } finally {
    await browser.close();
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function save(shot: Promise<unknown>, width: number, what: string): Promise<void> {
  await shot;
  const file = join(DOCS, `console-${what}-${width}.png`);
  console.log(`${file}: ${((await stat(file)).size / 1024).toFixed(1)} KB`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
