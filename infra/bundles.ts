/**
 * The Lambda bundle report (`npm run bundles`; docs/architecture.md §13 "report KB
 * per function"): builds each function with exactly the stack's esbuild
 * options (infra/bundling.ts) and prints its minified size, its source map's,
 * a zipped estimate of the deployment package, and what dominates it (bytes
 * in the output by package, from esbuild's metafile).
 *
 *   npx tsx infra/bundles.ts            the table
 *   npx tsx infra/bundles.ts --json     one JSON object on stdout
 *   npx tsx infra/bundles.ts --with-sdk also what bundling the AWS SDK would weigh
 *
 * Writes nothing: esbuild builds in memory.
 */
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";
import {
  bundlingOptions,
  ENTRY_POINTS,
  entryPath,
  type FunctionName,
  REPO_ROOT,
} from "./bundling.ts";

export interface BundleReport {
  readonly function: FunctionName;
  /** index.mjs, minified, bytes. */
  readonly bytes: number;
  /** index.mjs.map, bytes. */
  readonly mapBytes: number;
  /** gzip -9 of index.mjs: about what the zipped deployment package adds for the code. */
  readonly gzipBytes: number;
  /** Bytes in the output by origin (npm package, or the repository's top-level folder), largest first. */
  readonly origins: ReadonlyArray<{ readonly origin: string; readonly bytes: number }>;
}

/** The package (or repository folder) an esbuild input path comes from. */
export function originOf(input: string): string {
  const nodeModules = input.lastIndexOf("node_modules/");
  if (nodeModules >= 0) {
    const rest = input.slice(nodeModules + "node_modules/".length).split("/");
    const name = rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? input);
    // Translations are a classic accidental weight: shown apart from the code.
    return rest.includes("locales") ? `${name} (locales)` : name;
  }
  const [top] = input.split("/");
  return `${top}/ (this repository)`;
}

function origins(metafile: Metafile, outputName: string) {
  const output = metafile.outputs[outputName];
  if (!output) throw new Error(`esbuild produced no ${outputName}`);
  const totals = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const origin = originOf(input);
    totals.set(origin, (totals.get(origin) ?? 0) + bytesInOutput);
  }
  return [...totals]
    .map(([origin, bytes]) => ({ origin, bytes }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** Builds one function as the stack does (optionally with the AWS SDK inside) and measures it. */
export async function bundleReport(
  name: FunctionName,
  options: { withSdk?: boolean } = {},
): Promise<BundleReport> {
  const bundling = bundlingOptions();
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [entryPath(name)],
    outfile: "index.mjs",
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    target: bundling.target,
    minify: bundling.minify,
    sourcemap: bundling.sourceMap ? "linked" : false,
    sourcesContent: bundling.sourcesContent,
    external: options.withSdk ? [] : [...(bundling.externalModules ?? [])],
    mainFields: bundling.mainFields,
    ...(bundling.banner ? { banner: { js: bundling.banner } } : {}),
    logLevel: "error",
  });
  const file = (suffix: string) => {
    const found = result.outputFiles.find((f) => f.path.endsWith(suffix));
    if (!found) throw new Error(`esbuild produced no ${suffix}`);
    return found.contents;
  };
  const code = file("index.mjs");
  return {
    function: name,
    bytes: code.byteLength,
    mapBytes: file("index.mjs.map").byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
    origins: origins(result.metafile, "index.mjs"),
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

function print(report: BundleReport, label = ""): void {
  console.log(
    `${report.function}${label}: ${kb(report.bytes)} minified (map ${kb(report.mapBytes)}, gzip ${kb(report.gzipBytes)})`,
  );
  for (const { origin, bytes } of report.origins.slice(0, 8)) {
    const share = ((100 * bytes) / report.bytes).toFixed(1).padStart(5);
    console.log(`  ${share}%  ${kb(bytes).padStart(9)}  ${origin}`);
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const names = Object.keys(ENTRY_POINTS) as FunctionName[];
  const reports = await Promise.all(names.map((name) => bundleReport(name)));
  const withSdk = argv.includes("--with-sdk")
    ? await Promise.all(names.map((name) => bundleReport(name, { withSdk: true })))
    : [];
  if (argv.includes("--json")) {
    console.log(JSON.stringify({ bundles: reports, ...(withSdk.length ? { withSdk } : {}) }));
    return;
  }
  for (const report of reports) print(report);
  for (const report of withSdk) print(report, " (AWS SDK bundled, for comparison)");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
