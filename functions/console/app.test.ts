import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { harness } from "../../test/helpers/service.ts";
import { CONSOLE_PAGE, CONTENT_SECURITY_POLICY, createConsoleApp, DOCS_PAGE } from "./app.ts";
import { loadAssets } from "./assets.ts";
import { buildAssets, writeAssets } from "./build.ts";

const POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The same-origin paths a page's `src` and `href` attributes name, resolved from `page`. */
function referenced(html: string, page: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
    .map(([, path]) => new URL(path ?? "", `http://app${page}`))
    .filter((url) => url.protocol === "http:")
    .map((url) => url.pathname);
}

describe("the console's app", () => {
  const fake = async () =>
    new Map([["/console/console.js", { type: "text/javascript; charset=utf-8", body: "1" }]]);

  it("answers the pages and assets under the strict policy, with no inline script or style", async () => {
    expect(CONTENT_SECURITY_POLICY).toBe(POLICY);
    const app = createConsoleApp(fake);
    for (const path of ["/console", "/docs", "/console/console.js"]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-security-policy"), path).toBe(POLICY);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    for (const html of [CONSOLE_PAGE, DOCS_PAGE]) {
      expect(html).not.toMatch(/<script>|<script [^>]*>[^<]|<style|style=/);
    }
  });

  it("answers an unknown asset with a 404 problem, under the same policy", async () => {
    const response = await createConsoleApp(fake).request("/console/nothing.js");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("content-security-policy")).toBe(POLICY);
    expect(await response.json()).toMatchObject({ status: 404, type: "/problems/not-found" });
  });

  it("is mounted on the API's app, outside the API key's reach", async () => {
    const { app } = harness();
    const response = await app.request("/console");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toBe(POLICY);
    expect((await app.request("/docs")).status).toBe(200);
  });
});

describe("the console's assets", () => {
  it("hold every file the pages name, and read back from a prebuilt folder as built", async () => {
    const built = await buildAssets();
    // Small enough for a slow link: uPlot is most of the console's script.
    expect(built.get("/console/console.js")?.body.length).toBeLessThan(80 * 1024);
    expect(built.get("/console/console.css")?.body.length).toBeLessThan(16 * 1024);
    const named = [...referenced(CONSOLE_PAGE, "/console"), ...referenced(DOCS_PAGE, "/docs")];
    expect(named.sort()).toEqual([...built.keys()].sort());
    const folder = await mkdtemp(join(tmpdir(), "autocompact-console-assets-"));
    try {
      const sizes = await writeAssets(folder);
      expect(Object.keys(sizes).sort()).toEqual([...built.keys()].sort());
      expect(await loadAssets(pathToFileURL(`${folder}/`))).toEqual(built);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
