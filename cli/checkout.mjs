// How cli/bin.mjs runs the CLI in a checkout: as the package runs it, from
// the bundle `npm run build` makes (scripts/build.ts `buildCli`), built from
// the sources as they are at this start. Bundles are kept under
// node_modules/.cache/autocompact-cli/, each in a folder named by a hash of
// the sources it was built from: a start whose sources hash the same runs the
// kept bundle with no TypeScript loader (tsx's module hooks cost about 1.4 s
// of CPU a start, `serve`'s start 2.0 s against 0.6 s: docs/architecture.md
// §12); any change to them builds a new one first. Not in the package, which
// ships the bundle itself (dist/).
import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The folders a bundle is built from (their tests aside): the CLI's and the console's inputs, and the build script. */
export const SOURCE_FOLDERS = ["cli", "client", "core", "functions", "scripts"];

/** The files a bundle is built from besides: the version, the module paths, and the installed packages. */
export const SOURCE_FILES = ["package.json", "tsconfig.json", "node_modules/.package-lock.json"];

/** Kept bundles no start has run for this long are removed by the next build (a `serve` started before may still load a chunk late). */
const KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/** The folder the bundles of `root`'s sources are kept in. */
export function cacheFolder(root) {
  return join(root, "node_modules", ".cache", "autocompact-cli");
}

/**
 * The hash of the sources under `root` that a bundle is built from: every
 * file of {@link SOURCE_FOLDERS} but tests, and {@link SOURCE_FILES}, by
 * path and content.
 * @param {string} root
 * @returns {string}
 */
export function sourceKey(root) {
  const files = SOURCE_FILES.filter((file) => fs.existsSync(join(root, file)));
  for (const folder of SOURCE_FOLDERS) {
    if (!fs.existsSync(join(root, folder))) continue;
    for (const name of fs.readdirSync(join(root, folder), { recursive: true })) {
      const file = join(folder, String(name));
      // Regular files only: an editor's lock (a link to nowhere) or a file gone since the listing is no source.
      if (
        !file.endsWith(".test.ts") &&
        fs.lstatSync(join(root, file), { throwIfNoEntry: false })?.isFile()
      ) {
        files.push(file);
      }
    }
  }
  const hash = createHash("sha256");
  for (const file of files.sort()) {
    let content;
    try {
      content = fs.readFileSync(join(root, file));
    } catch (error) {
      if (error?.code === "ENOENT") continue; // removed since the listing
      throw error;
    }
    hash.update(file).update("\0").update(content).update("\0");
  }
  return hash.digest("hex").slice(0, 24);
}

/**
 * Builds the CLI into `folder` with scripts/build.ts (under tsx: the one
 * start after a change pays for it); its errors go to this process's stderr.
 * @param {string} root
 * @returns {(folder: string) => void}
 */
export function buildWithTsx(root) {
  return (folder) => {
    execFileSync(
      process.execPath,
      ["--import", "tsx", join(root, "scripts", "build.ts"), "--cli", folder],
      { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
    );
  };
}

/** Builds at most this many times while the sources change under the build. */
const BUILD_ATTEMPTS = 3;

/**
 * The file URL of the CLI bundle of `root`'s sources as they are now, built
 * by `build` first when none is kept. A build goes into a folder of its own,
 * renamed into place once complete: starts that miss at the same time each
 * build, one rename wins, and all run the same bundle. A build during which
 * the sources changed is not kept under either hash; the next attempt
 * builds what they are then.
 * @param {string} root
 * @param {(folder: string) => void} [build]
 * @returns {string}
 */
export function checkoutCli(root, build = buildWithTsx(root)) {
  const cache = cacheFolder(root);
  for (let attempt = 1; ; attempt++) {
    const key = sourceKey(root);
    const folder = join(cache, key);
    const entry = join(folder, "cli.js");
    if (fs.existsSync(entry)) {
      // A bundle's age is its last start's: pruning spares the ones in use.
      refresh(folder);
      return pathToFileURL(entry).href;
    }
    if (buildInto(cache, folder, entry, build, () => sourceKey(root) === key)) {
      prune(cache, folder);
      return pathToFileURL(entry).href;
    }
    if (attempt === BUILD_ATTEMPTS) {
      throw new Error(
        `could not build the CLI from the checkout's sources (they changed during each of ${BUILD_ATTEMPTS} builds)`,
      );
    }
  }
}

/**
 * Builds into a folder of its own and renames it to `folder` if the sources
 * are still `unchanged()`; false when they changed meanwhile (nothing kept).
 */
function buildInto(cache, folder, entry, build, unchanged) {
  const building = join(cache, `.building-${process.pid}-${randomUUID()}`);
  try {
    fs.mkdirSync(cache, { recursive: true });
    fs.accessSync(cache, fs.constants.W_OK);
    build(building);
    if (!unchanged()) return false;
    try {
      fs.renameSync(building, folder);
    } catch (error) {
      // Another start's build won the rename: the same sources, the same bundle.
      if (!fs.existsSync(entry)) throw error;
    }
    return true;
  } catch (error) {
    // The build's child exited non-zero after printing its errors (esbuild's, located in the sources).
    const why =
      typeof error?.status === "number"
        ? `scripts/build.ts exited with ${error.status}, its errors above`
        : error instanceof Error
          ? error.message.split("\n")[0]
          : String(error);
    throw new Error(`could not build the CLI from the checkout's sources (${why})`, {
      cause: error,
    });
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

/** Marks a kept bundle as used now. */
function refresh(folder) {
  const now = new Date();
  try {
    fs.utimesSync(folder, now, now);
  } catch {
    // A cache this user may not write: the bundle still runs.
  }
}

/** Removes the kept bundles (and abandoned builds) but `current` that no start has used for {@link KEEP_MS}. */
function prune(cache, current) {
  const now = Date.now();
  for (const name of fs.readdirSync(cache)) {
    const path = join(cache, name);
    if (path === current) continue;
    try {
      if (now - fs.statSync(path).mtimeMs > KEEP_MS)
        fs.rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by another start.
    }
  }
}
