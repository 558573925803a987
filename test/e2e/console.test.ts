/**
 * The console (`GET /console`) and the API reference (`GET /docs`) in real
 * headless Chromium (issue 15), against the local runtime (DynamoDB Local,
 * HTTP, in-process queue, compactor) with a generated conversation replayed
 * through the webhook so automatic bands fire. What the browser shows is
 * compared with what the API answers; every page is watched for requests
 * leaving the app's origin and for CSP violations. Screenshots go to a
 * temporary folder (`npm run screenshots` refreshes the README's).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type LocalService, startLocalService } from "../../functions/local/runtime.ts";
import type { Summarizer } from "../../functions/ports.ts";
import {
  CONSOLE_WINDOW,
  callApi,
  launchChromium,
  type PageWatch,
  replayGenerated,
  watchPage,
} from "../helpers/browser.ts";
import { sharedDatabase } from "../helpers/local-runtime.ts";

const KEY = "console-e2e-key";
const REPLAYED = "console-replayed";
const OTHER = "console-other";

/** A summarizer that names the turns it summarized. */
const summarizer: Summarizer = {
  async summarize(request) {
    return {
      text: `turns ${request.from_turn}..${request.to_turn}, summarized`,
      model: "stub-model",
      latency_ms: 1,
    };
  },
};

let service: LocalService;
let dir: string;
let browser: Browser;
let page: Page;
let watch: PageWatch;

const api = <T>(method: string, path: string, body?: unknown) =>
  callApi<T>(service.url, KEY, method, path, body);

interface ListedBand {
  readonly position: number;
  readonly from_turn: number;
  readonly to_turn: number;
  readonly source: "auto" | "manual";
}

const bands = async (conversation: string) =>
  (await api<{ compactions: ListedBand[] }>("GET", `/v1/conversations/${conversation}/compactions`))
    .compactions;

async function signIn(key = KEY): Promise<void> {
  await page.goto(`${service.url}/console`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** The part of a canvas element the pixel count reads (the test's lib has no DOM types). */
interface Canvas {
  readonly width: number;
  readonly height: number;
  getContext(kind: "2d"): {
    getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
  } | null;
}

/** How many pixels of the page's canvases are `rgb` (each channel within 8). */
async function canvasPixels(rgb: readonly [number, number, number]): Promise<number> {
  return page.locator("canvas").evaluateAll((canvases, [r, g, b]) => {
    let count = 0;
    for (const canvas of canvases as unknown as Canvas[]) {
      const data = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height).data;
      if (!data) continue;
      for (let i = 0; i < data.length; i += 4) {
        const near = (value: number | undefined, want: number) =>
          value !== undefined && Math.abs(value - want) <= 8;
        if (near(data[i], r) && near(data[i + 1], g) && near(data[i + 2], b)) count++;
      }
    }
    return count;
  }, rgb);
}

/** The uPlot legend's series labels. */
async function legend(): Promise<string[]> {
  return page.locator(".u-legend .u-label").allTextContents();
}

/** Hovers the chart's right edge (its last turn) and answers the hover box's text. */
async function hoverLastTurn(): Promise<string> {
  const box = await page.locator(".u-over").boundingBox();
  expect(box).not.toBeNull();
  if (box) await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  await expect.poll(() => page.locator(".hover").textContent()).toMatch(/^Turn \d+/);
  return (await page.locator(".hover").textContent()) ?? "";
}

/** Whether the page is no wider than its viewport. */
async function pageWidth(): Promise<number> {
  return page.evaluate<number>("document.documentElement.scrollWidth");
}

async function shot(name: string): Promise<void> {
  // The viewport only: a full page of the projected view at 390 px takes Chromium long.
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autocompact-console-"));
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  service = await startLocalService({
    port: 0,
    database: sharedDatabase(),
    host: "127.0.0.1",
    dataDir: dir,
    inMemory: true,
    devKey: KEY,
    logLevel: "ERROR",
    summarizer,
  });
  await replayGenerated(service.url, KEY, REPLAYED, { seed: 314, turns: 30 });
  await replayGenerated(service.url, KEY, OTHER, { seed: 27, turns: 3 });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await browser?.close();
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Each test gets a fresh page (so a fresh sessionStorage), watched from its first request. */
async function freshPage(): Promise<void> {
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  watch = await watchPage(page, new URL(service.url).origin);
}

afterEach(async () => {
  await watch.collect();
  const { foreignRequests, violations, pageErrors } = watch;
  await page.close();
  expect({ foreignRequests, violations, pageErrors }).toEqual({
    foreignRequests: [],
    violations: [],
    pageErrors: [],
  });
});

describe("the console in headless Chromium", () => {
  // The tests run in order on the replayed conversation, each starting where the last left
  // it: its automatic bands charted, a manual band added, the automatic ones reset, the
  // manual one removed.
  it("refuses a wrong key with a clear message and keeps nothing", async () => {
    await freshPage();
    await signIn("not-a-key");
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain("That API key was not accepted: unknown API key");
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await shot("wrong-key");
  });

  it("signs in and lists the tenant's conversations, searchable", async () => {
    await freshPage();
    await signIn();
    const listed = await api<{ conversations: Array<{ id: string }> }>(
      "GET",
      "/v1/conversations?limit=50",
    );
    const rows = page.locator("tr[data-conversation]");
    await expect.poll(() => rows.count()).toBe(listed.conversations.length);
    expect(
      await rows.evaluateAll((all) => all.map((r) => r.getAttribute("data-conversation"))),
    ).toEqual(listed.conversations.map((c) => c.id));
    expect(listed.conversations.map((c) => c.id).sort()).toEqual([OTHER, REPLAYED].sort());
    // The key is in this tab's session storage, nowhere else.
    expect(await page.evaluate("Object.values(sessionStorage)")).toEqual([KEY]);
    expect(await page.evaluate("localStorage.length")).toBe(0);
    await page.getByLabel("Search conversations").fill("other");
    await expect.poll(() => page.locator("tr[data-conversation]:visible").count()).toBe(1);
    expect(
      await page.locator("tr[data-conversation]:visible").getAttribute("data-conversation"),
    ).toBe(OTHER);
    await shot("list");
  });

  it("charts a replayed conversation: one firing per automatic band, each band on the strip", async () => {
    await freshPage();
    await signIn();
    await page.getByRole("link", { name: REPLAYED }).click();
    const stored = await bands(REPLAYED);
    const auto = stored.filter((band) => band.source === "auto");
    expect(auto.length).toBeGreaterThanOrEqual(2);
    const firings = page.locator("#firings li");
    await expect.poll(() => firings.count()).toBe(auto.length);
    expect(
      await firings.evaluateAll((all) => all.map((li) => Number(li.getAttribute("data-firing")))),
    ).toEqual(auto.map((band) => band.position));
    // Each firing names its band and turns as the API lists them.
    const first = auto[0];
    expect(await firings.first().textContent()).toContain(
      `band #${first?.position} (auto) over turns ${first?.from_turn}–${first?.to_turn}:`,
    );
    expect(await page.locator("[data-band]").count()).toBe(stored.length);
    expect(await page.locator("canvas").count()).toBeGreaterThan(0);
    // The estimator the estimates are in (no usage was posted: D50's).
    expect(await page.locator("p.facts").textContent()).toContain("(estimate: chars / 4)");
    // The window (green, solid) and the threshold (red, dashed) are drawn and labelled.
    expect(await legend()).toEqual(
      expect.arrayContaining(["raw", "projected", "window", "threshold", "firing", "now"]),
    );
    expect(await canvasPixels([26, 127, 55])).toBeGreaterThan(100);
    expect(await canvasPixels([209, 36, 47])).toBeGreaterThan(100);
    // Hovering the chart shows the turn under the cursor, its threshold and window
    // (CONSOLE_WINDOW, the replay's context_window), and at the last turn the estimate now.
    const summary = await api<{ estimated_tokens: number }>("GET", `/v1/conversations/${REPLAYED}`);
    const hovered = await hoverLastTurn();
    expect(hovered).toContain(`window ${CONSOLE_WINDOW.toLocaleString("en")}`);
    expect(hovered).toContain(
      `now ${Math.round(summary.estimated_tokens).toLocaleString("en")} projected`,
    );
    // The reader marks the compacted turns, and shows what the assistant said.
    expect(await page.locator(".reader article[data-compacted]").count()).toBeGreaterThan(0);
    const view = await api<{ events: Array<{ type: string; message?: string }> }>(
      "GET",
      `/v1/conversations/${REPLAYED}/projection`,
    );
    const said = view.events.find((event) => event.type === "chat_response" && event.message);
    expect(said?.message).toBeDefined();
    expect(
      (await page.locator(".reader .event.chat_response p").allTextContents()).join("\n"),
    ).toContain(said?.message?.slice(0, 200));
    await shot("conversation");
  });

  it("is readable at 390 px: no sideways scroll, whole band labels, every Remove in view", async () => {
    await freshPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn();
    await page.locator("tr[data-conversation]").first().waitFor();
    expect(await pageWidth()).toBeLessThanOrEqual(390);
    await page.goto(`${service.url}/console#/c/${REPLAYED}`);
    await page.locator("canvas").first().waitFor();
    const stored = await bands(REPLAYED);
    expect(stored.length).toBeGreaterThan(10);
    expect(await pageWidth()).toBeLessThanOrEqual(390);
    // A band's label is shown whole or not at all (never cut to "#").
    const cut = await page.locator("[data-band]").evaluateAll((marks) =>
      marks
        .filter((mark) => {
          const label = mark.firstElementChild;
          const view = mark.ownerDocument.defaultView;
          const shown = label !== null && view?.getComputedStyle(label).visibility !== "hidden";
          return shown && (label?.getBoundingClientRect().width ?? 0) > mark.clientWidth;
        })
        .map((mark) => mark.textContent),
    );
    expect(cut).toEqual([]);
    // Each band's Remove is inside the viewport's width, no scrolling needed.
    const removes = page.getByRole("button", { name: /^Remove band / });
    expect(await removes.count()).toBe(stored.length);
    const rights = await removes.evaluateAll((buttons) =>
      buttons.map((button) => button.getBoundingClientRect().right),
    );
    expect(rights.filter((right) => right > 390)).toEqual([]);
    expect(
      await page
        .locator(".scroll")
        .evaluateAll((all) =>
          all.filter((el) => el.scrollWidth > el.clientWidth).map((el) => el.className),
        ),
    ).toEqual([]);
    await shot("conversation-390");
  });

  it("works from the keyboard: sign in, open a conversation", async () => {
    await freshPage();
    await page.goto(`${service.url}/console`);
    // The key field has the focus; Enter submits.
    await page.keyboard.type(KEY);
    await page.keyboard.press("Enter");
    await page.locator("tr[data-conversation]").first().waitFor();
    const link = page.getByRole("link", { name: REPLAYED });
    for (let presses = 0; presses < 10; presses++) {
      if (await link.evaluate((element) => element === element.ownerDocument.activeElement)) break;
      await page.keyboard.press("Tab");
    }
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("h1").textContent()).toBe(REPLAYED);
  });

  it("previews a manual compaction by a dry run that writes nothing, then applies exactly it", async () => {
    await freshPage();
    await signIn();
    await page.goto(`${service.url}/console#/c/${REPLAYED}`);
    const before = await api<{ events: unknown[] }>("GET", `/v1/conversations/${REPLAYED}/events`);
    // A spec the API refuses: its message, and nothing to apply.
    await page.getByLabel("Compaction spec (RFD 064 DSL)").fill("x:..-3");
    await page.getByRole("button", { name: "Preview" }).click();
    await expect
      .poll(() => page.locator("#preview [role=alert]").textContent())
      .toContain("invalid compact spec 'x:..-3': unknown policy 'x'");
    expect(await page.getByRole("button", { name: "Apply" }).isDisabled()).toBe(true);
    await page.getByLabel("Compaction spec (RFD 064 DSL)").fill("r+t:..-3");
    await page.getByRole("button", { name: "Preview" }).click();
    const preview = page.locator(".dry-run");
    await preview.waitFor();
    const shown = {
      from: Number(await preview.getAttribute("data-from")),
      to: Number(await preview.getAttribute("data-to")),
      after: Number(await preview.getAttribute("data-after")),
    };
    // The dry run stored nothing.
    expect(await api("GET", `/v1/conversations/${REPLAYED}/events`)).toEqual(before);
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => page.locator("#status").textContent()).toMatch(/^Added band #\d+/);
    const added = (await bands(REPLAYED)).filter((band) => band.source === "manual");
    expect(added.map(({ from_turn, to_turn }) => ({ from: from_turn, to: to_turn }))).toEqual([
      { from: shown.from, to: shown.to },
    ]);
    const summary = await api<{ estimated_tokens: number }>("GET", `/v1/conversations/${REPLAYED}`);
    expect(summary.estimated_tokens).toBe(shown.after);
  });

  it("shows the API's validation message for a bad config", async () => {
    await freshPage();
    await signIn();
    await page.goto(`${service.url}/console#/c/${REPLAYED}`);
    await page
      .getByLabel("Automatic compaction config (JSON)")
      .fill(JSON.stringify({ conversation: { compaction: { auto: { trigger_ratio: 2 } } } }));
    await page.getByRole("button", { name: "Save config" }).click();
    const alert = page.locator("#config-error [role=alert]");
    await alert.waitFor();
    // The located error once, under the problem's title (its detail repeats it: not shown).
    expect(await alert.textContent()).toBe(
      "Invalid configuration (400):conversation.compaction.auto.trigger_ratio: must be at most 1",
    );
  });

  it("resets the automatic bands, keeping the manual one", async () => {
    await freshPage();
    await signIn();
    await page.goto(`${service.url}/console#/c/${REPLAYED}`);
    const auto = (await bands(REPLAYED)).filter((band) => band.source === "auto");
    expect(auto.length).toBeGreaterThan(0);
    const reset = page.getByRole("button", { name: "Reset automatic bands" });
    // The confirmation names every band it will remove; Escape declines and removes nothing.
    await reset.click();
    const dialog = page.getByRole("dialog", { name: "Reset the automatic bands?" });
    await dialog.waitFor();
    expect(await dialog.locator(".removes li").allTextContents()).toEqual(
      auto.map(
        (band) =>
          `band #${band.position} (auto), turns ${band.from_turn}–${band.to_turn}: tool calls strip, reasoning strip`,
      ),
    );
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Cancel");
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await page.locator("#status").textContent()).toBe(
      "Reset automatic bands: cancelled, nothing removed.",
    );
    expect((await bands(REPLAYED)).length).toBe(auto.length + 1);
    await reset.click();
    await dialog.getByRole("button", { name: `Remove ${auto.length} bands` }).click();
    await expect
      .poll(() => page.locator("#status").textContent())
      .toBe(`Reset automatic bands: removed ${auto.length} bands.`);
    expect((await bands(REPLAYED)).map((band) => band.source)).toEqual(["manual"]);
    expect(await page.locator("tr[data-band-row][data-source=auto]").count()).toBe(0);
    expect(await page.locator("tr[data-band-row][data-source=manual]").count()).toBe(1);
    // The firings stay, each named as a band since removed (never "band #null"), and the
    // chart tells the curve the evaluations saw then from what the next call sends now.
    const firings = page.locator("#firings li");
    expect(await firings.count()).toBe(auto.length);
    expect(await page.locator("#firings li[data-removed]").count()).toBe(auto.length);
    for (const text of await firings.allTextContents()) {
      expect(text).toMatch(/^after turn \d+, a band since removed \(auto\) over turns \d+–\d+$/);
    }
    expect(await legend()).toEqual(
      expect.arrayContaining(["projected then (bands since removed)", "firing, band removed"]),
    );
    const summary = await api<{ estimated_tokens: number }>("GET", `/v1/conversations/${REPLAYED}`);
    expect(await page.locator("#chart-hint").textContent()).toContain(
      `${auto.length} of them removed since`,
    );
    expect(await hoverLastTurn()).toContain(
      `now ${Math.round(summary.estimated_tokens).toLocaleString("en")} projected`,
    );
  });

  it("removes one band by its button", async () => {
    await freshPage();
    await signIn();
    await page.goto(`${service.url}/console#/c/${REPLAYED}`);
    const [manual] = await bands(REPLAYED);
    expect(manual).toBeDefined();
    const remove = page.getByRole("button", { name: `Remove band ${manual?.position}` });
    // Its confirmation names the band; Cancel removes nothing.
    await remove.click();
    const dialog = page.getByRole("dialog", { name: `Remove band #${manual?.position}?` });
    expect(await dialog.locator(".removes li").allTextContents()).toEqual([
      `band #${manual?.position} (manual), turns ${manual?.from_turn}–${manual?.to_turn}: tool calls strip, reasoning strip`,
    ]);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await bands(REPLAYED)).toEqual([manual]);
    // From the keyboard: Cancel has the focus, Tab reaches the removal, Enter confirms.
    await remove.focus();
    await page.keyboard.press("Enter");
    await dialog.waitFor();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.locator("#status").textContent())
      .toBe(`Removed band ${manual?.position}: removed 1 band.`);
    expect(await bands(REPLAYED)).toEqual([]);
  });

  it("shows a summary in the projected view, with the summary's text", async () => {
    await callApi(service.url, KEY, "POST", `/v1/conversations/${OTHER}/compactions`, {
      spec: "s:0..1",
    });
    await freshPage();
    await signIn();
    await page.goto(`${service.url}/console#/c/${OTHER}`);
    const summary = page.locator(".reader article.summarized");
    await summary.waitFor();
    expect(await summary.locator("h3").textContent()).toBe("Summary of turns 0–1");
    expect(await summary.locator(".event.chat_response p").allTextContents()).toEqual([
      "turns 0..1, summarized",
    ]);
  });

  it("badges the conversations with warnings in the list, and lists them on the conversation's page", async () => {
    // Compaction off (the default) and a model the catalog does not know: two warnings.
    const warned = "console-warned";
    await api("POST", `/v1/conversations/${warned}/turns`, {
      turn: 0,
      model: { id: "unknown-model" },
      events: [
        { type: "turn_start", timestamp: "2026-12-01T10:00:00Z" },
        { type: "chat_request", timestamp: "2026-12-01T10:00:01Z", content: "hello" },
      ],
    });
    const off =
      'automatic compaction is off (the default): enable it with PUT /v1/conversations/console-warned/config {"conversation":{"compaction":{"auto":{"enabled":true}}}}';
    const unknown =
      'the context window of model "unknown-model" is unknown, so automatic compaction cannot fire: post each turn with `model.context_window` (the window in tokens), or add the model to the service\'s catalog (`MODEL_CATALOG`, e.g. {"unknown-model":128000})';
    await freshPage();
    await signIn();
    const badges = page.locator(`tr[data-conversation="${warned}"] .badge.warning`);
    await expect.poll(() => badges.count()).toBe(2);
    expect(await badges.allTextContents()).toEqual(["auto_disabled", "context_window_unknown"]);
    expect(await badges.evaluateAll((all) => all.map((b) => b.getAttribute("title")))).toEqual([
      off,
      unknown,
    ]);
    // Every other row shows what the API says of it: its codes, or none.
    const listed = await api<{
      conversations: Array<{ id: string; warnings: { code: string }[] }>;
    }>("GET", "/v1/conversations?limit=50");
    for (const conversation of listed.conversations) {
      const row = page.locator(`tr[data-conversation="${conversation.id}"] .badge.warning`);
      expect(await row.allTextContents(), conversation.id).toEqual(
        conversation.warnings.map((w) => w.code),
      );
    }
    // At 1280 px the whole list fits, warnings column included: no sideways scroll to read them.
    const list = page.locator(".scroll:has(.conversations)");
    expect(await list.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
    await shot("list-warnings");
    await page.getByRole("link", { name: warned }).click();
    const items = page.locator(".warning-list li");
    await expect.poll(() => items.count()).toBe(2);
    expect(await items.allTextContents()).toEqual([
      `auto_disabled ${off}`,
      `context_window_unknown ${unknown}`,
    ]);
    await shot("conversation-warnings");
  });
});

describe("the API reference at /docs", () => {
  it("renders every operation of the OpenAPI document", async () => {
    await freshPage();
    const document = (await (await fetch(`${service.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const methods = new Set(["get", "put", "post", "delete", "patch", "head", "options"]);
    const operations = Object.values(document.paths).flatMap((item) =>
      Object.keys(item).filter((key) => methods.has(key)),
    );
    await page.goto(`${service.url}/docs`);
    const blocks = page.locator(".opblock");
    await expect.poll(() => blocks.count(), { timeout: 20_000 }).toBe(operations.length);
    await shot("docs");
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(pageWidth).toBeLessThanOrEqual(390);
  });
});
