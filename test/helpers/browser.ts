/**
 * Headless Chromium for the console's browser tests: Debian's
 * `chromium-headless-shell` (or its `chromium`; docs/architecture.md §14)
 * driven by playwright-core, started with the flags this
 * machine's closed network needs (no background or component traffic), and a
 * watch on every page for requests that leave the app's origin and for
 * Content-Security-Policy violations.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import type { Entry } from "../../core/events.ts";
import { splitTurns } from "../../core/turns.ts";
import { generateConversation } from "./conversation.ts";

/**
 * Where Debian installs Chromium's headless shell, else the full browser;
 * `CHROMIUM_PATH` overrides both. The shell, built from the same sources
 * without the browser's UI, is what Playwright itself runs headless: the
 * console's suite took 11 s of Chromium CPU under it against 35 s under the
 * full browser (docs/architecture.md §14).
 */
export const CHROMIUM_PATH =
  process.env.CHROMIUM_PATH ??
  ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].find((path) => existsSync(path)) ??
  "/usr/bin/chromium-headless-shell";

const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Starts Chromium headless (Playwright gives each launch a fresh, empty profile). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: install Debian's package (apt-get install -y chromium-headless-shell; .ci/run does) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

/** What a watched page did that it must not. */
export interface PageWatch {
  /** Requests to any other origin than the app's. */
  readonly foreignRequests: string[];
  /** CSP violations: the page's `securitypolicyviolation` events and Chromium's console reports. */
  readonly violations: string[];
  /** Uncaught errors in the page. */
  readonly pageErrors: string[];
  /** Reads the violations the page itself recorded (call before asserting). */
  collect(): Promise<void>;
}

/** Watches `page` for requests leaving `origin`, CSP violations and uncaught errors. */
export async function watchPage(page: Page, origin: string): Promise<PageWatch> {
  const watch = {
    foreignRequests: [] as string[],
    violations: [] as string[],
    pageErrors: [] as string[],
    async collect() {
      const seen = await page
        .evaluate(() => (globalThis as { __cspViolations?: string[] }).__cspViolations ?? [])
        .catch(() => []);
      for (const violation of seen)
        if (!watch.violations.includes(violation)) watch.violations.push(violation);
    },
  };
  page.on("request", (request) => {
    const url = new URL(request.url());
    // data: URLs (Swagger UI's icons) never leave the page.
    if (url.protocol !== "data:" && url.origin !== origin)
      watch.foreignRequests.push(request.url());
  });
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) watch.violations.push(message.text());
  });
  page.on("pageerror", (error) => watch.pageErrors.push(error.message));
  // Runs before the page's own scripts, outside its CSP (injected by the browser).
  // Runs before the page's own scripts, outside its CSP (the browser injects it); page-side
  // code as text, since the test program has no DOM types.
  await page.addInitScript(`
    globalThis.__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      globalThis.__cspViolations.push(event.violatedDirective + ": " + event.blockedURI);
    });
  `);
  return watch;
}

/** The auto config and window the console's pages are shown with: a 30-turn conversation fires a few bands. */
export const CONSOLE_AUTO = {
  enabled: true,
  trigger_ratio: 0.55,
  min_turns: 4,
  rule: { keep_first: 1, keep_last: 2 },
} as const;
/** The context window the replayed turns declare. */
export const CONSOLE_WINDOW = 9_000;

/** Calls the API at `url` with `key`; throws on any non-2xx answer. */
export async function callApi<T>(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T;
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** How {@link replayGenerated} posts a generated conversation. */
export interface ReplayOptions {
  readonly seed: number;
  readonly turns: number;
  /** The window each turn declares (default {@link CONSOLE_WINDOW}). */
  readonly contextWindow?: number;
  /** Turns compaction on with {@link CONSOLE_AUTO} first (default true; false leaves it at the default, off). */
  readonly enable?: boolean;
  /** The model each turn names, instead of `recorded-model` with `contextWindow`. */
  readonly model?: { readonly id: string; readonly context_window?: number };
  /**
   * Reports usage as a provider would on the turns before the first band can
   * fire (`min_turns`; their view is the raw stream), so the calibrated
   * estimator fits: input tokens 0.3 a byte of the stream's JSON so far,
   * plus 400 for a system prompt.
   */
  readonly reportUsage?: boolean;
}

/**
 * Replays a generated conversation (test/helpers/conversation.ts) through the
 * webhook under {@link CONSOLE_AUTO}, each turn answered once evaluated.
 */
export async function replayGenerated(
  url: string,
  key: string,
  conversation: string,
  options: ReplayOptions,
): Promise<void> {
  const path = `/v1/conversations/${conversation}`;
  if (options.enable ?? true) {
    await callApi(url, key, "PUT", `${path}/config`, {
      conversation: { compaction: { auto: CONSOLE_AUTO } },
    });
  }
  const { seed, turns, contextWindow = CONSOLE_WINDOW } = options;
  const model = options.model ?? { id: "recorded-model", context_window: contextWindow };
  const stream: Entry[] = JSON.parse(JSON.stringify(generateConversation({ seed, turns })));
  let bytes = 0;
  for (const [turn, events] of splitTurns(stream).entries()) {
    bytes += Buffer.byteLength(JSON.stringify(events));
    const usage =
      options.reportUsage && turn <= CONSOLE_AUTO.min_turns
        ? { input_tokens: Math.round(0.3 * bytes + 400), output_tokens: 0 }
        : undefined;
    await callApi(url, key, "POST", `${path}/turns?wait=20`, {
      turn,
      model,
      events,
      ...(usage ? { usage } : {}),
    });
  }
}
