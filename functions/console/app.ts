/**
 * The console's and the API reference's pages and assets, each answered
 * under a strict Content-Security-Policy: everything from the app's own
 * origin, no inline script or style, no eval. The pages are static shells;
 * the console's script reads the API with the key the user signs in with.
 */
import { Hono } from "hono";
import { type Asset, loadAssets } from "./assets.ts";

/** The policy of every console and docs answer. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Swagger UI's stylesheet draws its icons as data: SVGs.
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
} as const;

const HTML = "text/html; charset=utf-8";

/** A page: the shell its script fills. Paths are relative, so a stage prefix (`/prod/console`) works. */
function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

/** The console's page. */
export const CONSOLE_PAGE = page(
  "autocompact console",
  '<link rel="stylesheet" href="console/console.css">\n<script src="console/console.js" defer></script>',
  '<div id="app"><noscript>The console needs JavaScript.</noscript></div>',
);

/** The API reference's page. */
export const DOCS_PAGE = page(
  "autocompact API reference",
  '<link rel="stylesheet" href="docs/swagger-ui.css">\n<link rel="stylesheet" href="docs/docs.css">\n<script src="docs/swagger-ui-bundle.js" defer></script>\n<script src="docs/docs.js" defer></script>',
  '<div id="swagger-ui"></div>',
);

/** The console's app (a plain Hono app; mounted by mount.ts). */
export type ConsoleApp = Hono;

/** Builds the console's app; its assets load on the first request for one. */
export function createConsoleApp(load: () => Promise<Map<string, Asset>> = loadAssets): ConsoleApp {
  const app = new Hono();
  let assets: Promise<Map<string, Asset>> | undefined;
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  });
  app.get("/console", (c) => c.body(CONSOLE_PAGE, 200, { "content-type": HTML }));
  app.get("/docs", (c) => c.body(DOCS_PAGE, 200, { "content-type": HTML }));
  app.get("*", async (c) => {
    // A failed load is tried again by the next request, not remembered.
    assets ??= load().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    const asset = (await assets).get(c.req.path);
    if (!asset) {
      return c.json(
        {
          type: "/problems/not-found",
          title: "Not found",
          status: 404,
          detail: `no console asset at ${c.req.path}`,
        },
        404,
        { "content-type": "application/problem+json" },
      );
    }
    return c.body(asset.body, 200, {
      "content-type": asset.type,
      "cache-control": "public, max-age=300",
    });
  });
  return app;
}
