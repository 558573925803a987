/**
 * cli/checkout.mjs: the launcher's bundle of a checkout's sources, kept by
 * their hash. On a scratch tree with a stand-in build (the real one, under
 * tsx, is what cli/bin.test.ts and the spawned `serve` tests run).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cacheFolder, checkoutCli, sourceKey } from "./checkout.mjs";

let root: string;

function put(file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "autocompact-checkout-"));
  put("package.json", '{"name":"autocompact","version":"1.2.3"}');
  put("tsconfig.json", "{}");
  put("node_modules/.package-lock.json", '{"packages":{}}');
  put("cli/main.ts", "export const a = 1;\n");
  put("core/x.ts", "export const x = 1;\n");
  put("functions/console/client/main.ts", "console.log(1);\n");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A stand-in build: writes a cli.js naming its call, and counts the calls. */
function countingBuild() {
  const folders: string[] = [];
  const build = (folder: string) => {
    folders.push(folder);
    mkdirSync(join(folder, "chunks"), { recursive: true });
    writeFileSync(join(folder, "cli.js"), `export const build = ${folders.length};\n`);
  };
  return { build, folders };
}

describe("sourceKey", () => {
  it("changes with a source's content, a new source, the manifest and the installed packages; not with tests or other folders", () => {
    const first = sourceKey(root);
    expect(first).toMatch(/^[0-9a-f]{24}$/);
    expect(sourceKey(root)).toBe(first);

    put("cli/main.test.ts", "test\n");
    put("docs/guide.md", "# guide\n");
    put("test/helpers/x.ts", "export {};\n");
    expect(sourceKey(root)).toBe(first);

    const seen = new Set([first]);
    for (const [file, text] of [
      ["core/x.ts", "export const x = 2;\n"],
      ["functions/new.ts", "export {};\n"],
      ["functions/console/client/main.ts", "console.log(2);\n"],
      ["client/index.ts", "export {};\n"],
      ["scripts/build.ts", "export {};\n"],
      ["package.json", '{"name":"autocompact","version":"1.2.4"}'],
      ["tsconfig.json", '{"compilerOptions":{}}'],
      ["node_modules/.package-lock.json", '{"packages":{"x":{}}}'],
    ] as const) {
      put(file, text);
      const key = sourceKey(root);
      expect(seen.has(key), `after ${file} changed`).toBe(false);
      seen.add(key);
    }
  });

  it("skips what is no regular file: an editor's lock, a link to nowhere", () => {
    const before = sourceKey(root);
    symlinkSync("nowhere", join(root, "cli/.#main.ts"));
    expect(sourceKey(root)).toBe(before);
  });

  it("tells a file's content from its name", () => {
    put("core/ab.ts", "c");
    const before = sourceKey(root);
    rmSync(join(root, "core/ab.ts"));
    put("core/a.ts", "bc");
    expect(sourceKey(root)).not.toBe(before);
  });
});

describe("checkoutCli", () => {
  it("builds once for the same sources, into the cache folder named by their key, and again after a change", () => {
    const { build, folders } = countingBuild();
    const url = checkoutCli(root, build);
    expect(fileURLToPath(url)).toBe(join(cacheFolder(root), sourceKey(root), "cli.js"));
    expect(folders).toHaveLength(1);
    expect(checkoutCli(root, build)).toBe(url);
    expect(folders).toHaveLength(1);

    put("core/x.ts", "export const x = 3;\n");
    const rebuilt = checkoutCli(root, build);
    expect(rebuilt).not.toBe(url);
    expect(folders).toHaveLength(2);
    // The build went to a folder of its own, then moved: nothing half-built is left.
    expect(readdirSync(cacheFolder(root)).filter((name) => name.startsWith("."))).toEqual([]);
    expect(existsSync(fileURLToPath(url))).toBe(true);
  });

  it("runs the bundle of a start that won the race, when its own rename loses", () => {
    const key = sourceKey(root);
    const ours = countingBuild();
    const theirs = countingBuild();
    const url = checkoutCli(root, (folder) => {
      ours.build(folder);
      // Meanwhile another start built the same sources and renamed first.
      theirs.build(join(cacheFolder(root), key));
    });
    expect(fileURLToPath(url)).toBe(join(cacheFolder(root), key, "cli.js"));
    expect(readdirSync(cacheFolder(root))).toEqual([key]);
  });

  it("reports a failed build in one line, keeping nothing of it", () => {
    const failing = (error: Error) => (folder: string) => {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, "partial.js"), "");
      throw error;
    };
    // The build's child exited 1 (execFileSync's error has its status).
    const exited = Object.assign(new Error("Command failed: node --import tsx …\nstderr"), {
      status: 1,
    });
    expect(() => checkoutCli(root, failing(exited))).toThrow(
      /^could not build the CLI from the checkout's sources \(scripts\/build\.ts exited with 1, its errors above\)$/,
    );
    expect(() => checkoutCli(root, failing(new Error("spawnSync node ENOENT\nmore")))).toThrow(
      /^could not build the CLI from the checkout's sources \(spawnSync node ENOENT\)$/,
    );
    expect(readdirSync(cacheFolder(root))).toEqual([]);
  });

  it("keeps no bundle under a hash its sources no longer had when the build ended, and builds again", () => {
    const { build, folders } = countingBuild();
    let edits = 0;
    const url = checkoutCli(root, (folder) => {
      // The first build: a source saved meanwhile.
      if (edits++ === 0) put("core/x.ts", "export const x = 4;\n");
      build(folder);
    });
    expect(folders).toHaveLength(2);
    expect(fileURLToPath(url)).toBe(join(cacheFolder(root), sourceKey(root), "cli.js"));
    expect(readdirSync(cacheFolder(root))).toEqual([sourceKey(root)]);

    let saves = 0;
    put("core/x.ts", "export const x = 5;\n");
    expect(() =>
      checkoutCli(root, (folder) => {
        put("core/x.ts", `export const y = ${saves++};\n`);
        build(folder);
      }),
    ).toThrow(
      /^could not build the CLI from the checkout's sources \(they changed during each of 3 builds\)$/,
    );
    expect(saves).toBe(3);
  });

  it("counts a bundle's age from its last start, so a week-old bundle still in use stays", () => {
    const { build } = countingBuild();
    const inUse = fileURLToPath(checkoutCli(root, build)).replace(/\/cli\.js$/, "");
    const eightDaysAgo = (Date.now() - 8 * 24 * 60 * 60 * 1000) / 1000;
    utimesSync(inUse, eightDaysAgo, eightDaysAgo);
    checkoutCli(root, build); // a start: the same sources
    expect(Date.now() - statSync(inUse).mtimeMs).toBeLessThan(60_000);
    put("core/x.ts", "export const x = 6;\n");
    checkoutCli(root, build); // another build prunes
    expect(existsSync(inUse)).toBe(true);
  });

  it("removes bundles built more than a week ago when it builds, and keeps newer ones", () => {
    const { build } = countingBuild();
    const old = join(cacheFolder(root), "old");
    const recent = join(cacheFolder(root), "recent");
    build(old);
    build(recent);
    const eightDaysAgo = (Date.now() - 8 * 24 * 60 * 60 * 1000) / 1000;
    utimesSync(old, eightDaysAgo, eightDaysAgo);
    checkoutCli(root, build);
    expect(readdirSync(cacheFolder(root)).sort()).toEqual([sourceKey(root), "recent"].sort());
  });
});
