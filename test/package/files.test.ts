/**
 * What `npm pack` ships (issue 18): the file list of `npm pack --dry-run`
 * (which runs `prepack`, the build) held to an allow-list, so no test,
 * infrastructure, fixture, bench, source or docs image slips in; every file
 * the manifest points at (`bin`, each `exports` target, `types`) is shipped.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every file the tarball may hold. */
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^CHANGELOG\.md$/,
  /^cli\/bin\.mjs$/,
  // The CLI bundle and its lazily loaded chunks.
  /^dist\/cli\.js$/,
  /^dist\/chunks\/[\w-]+\.js$/,
  // The console's prebuilt browser assets (functions/console/build.ts).
  /^dist\/chunks\/console-assets\/(\d+\.asset|manifest\.json)$/,
  // The client and the types of `.`, with their declarations.
  /^dist\/client\/(index|types)\.(js|d\.ts)$/,
  /^dist\/(client|core)\/errors\.d\.ts$/,
  // What the client's declarations import: its paging, paths, tenant settings, held views, the events' types and the warnings' hook.
  /^dist\/client\/(pages|paths|tenant|views|events|warnings)\.d\.ts$/,
  // The splice the held views apply.
  /^dist\/core\/splice\.d\.ts$/,
];

/** Files that must be there. */
const REQUIRED = [
  "package.json",
  "README.md",
  "LICENSE",
  "CHANGELOG.md",
  "cli/bin.mjs",
  "dist/cli.js",
  "dist/client/index.js",
  "dist/client/index.d.ts",
  "dist/client/types.js",
  "dist/client/types.d.ts",
];

interface Manifest {
  bin: Record<string, string>;
  types: string;
  typesVersions: Record<string, Record<string, string[]>>;
  exports: Record<string, string | Record<string, string | string[]>>;
}

let files: string[];
let manifest: Manifest;

beforeAll(async () => {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json"], {
    cwd: ROOT,
    maxBuffer: 1 << 24,
  });
  const [packed] = JSON.parse(stdout) as { files: { path: string }[] }[];
  files = (packed?.files ?? []).map((file) => file.path);
  manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as Manifest;
}, 180_000);

/** A TypeScript source, not a declaration file. */
const isSource = (path: string) => path.endsWith(".ts") && !path.endsWith(".d.ts");

describe("npm pack", () => {
  it("ships only allowed files", () => {
    expect(files.filter((path) => !ALLOWED.some((pattern) => pattern.test(path)))).toEqual([]);
  });

  it("ships the required files", () => {
    expect(REQUIRED.filter((path) => !files.includes(path))).toEqual([]);
  });

  it("ships every file package.json points at (bin, types, typesVersions, exports), and none of the checkout's sources", () => {
    const targets = [
      ...Object.values(manifest.bin),
      manifest.types,
      ...Object.values(manifest.typesVersions).flatMap((paths) => Object.values(paths).flat()),
      ...Object.values(manifest.exports).flatMap((entry) =>
        typeof entry === "string" ? [entry] : Object.values(entry).flat(),
      ),
    ].map((target) => target.replace(/^\.\//, ""));
    expect(targets).toContain("dist/client/index.d.ts");
    // A source target is the checkout's types fallback, for use without a build (package.json).
    expect(targets.filter((path) => !isSource(path) && !files.includes(path))).toEqual([]);
    expect(targets.filter((path) => isSource(path) && files.includes(path))).toEqual([]);
  });
});
