/**
 * The Lambda bundle report (`npm run bundles`; docs/architecture.md §13):
 * builds each function with exactly the stack's esbuild options
 * (infra/bundling.ts) and prints its minified size, its source map's, a
 * gzipped estimate of the deployment package, what dominates it (bytes in
 * the output by package, from esbuild's metafile), the bytes only a dynamic
 * import reaches (evaluated on first use, not at cold start), and its import
 * time: the median wall time of fresh `node` processes importing the bundle,
 * as a ratio to the same for an empty module, the two interleaved in one run
 * so the machine's load weighs on both alike.
 *
 *   npx tsx infra/bundles.ts                the table
 *   npx tsx infra/bundles.ts --json         one JSON object on stdout
 *   npx tsx infra/bundles.ts --runs N       processes per bundle (default 15)
 *   npx tsx infra/bundles.ts --sizes        no import times
 *   npx tsx infra/bundles.ts --node PATH    import with another Node.js binary (e.g. the runtime's major)
 *   npx tsx infra/bundles.ts --env K=V      set (or, with K=, clear) a variable of the import's environment
 *   npx tsx infra/bundles.ts --before DIR   also the bundles of another checkout (a `git worktree`
 *                                           of an older commit, its node_modules a symlink to this
 *                                           one's), measured in the same run
 *   npx tsx infra/bundles.ts --entry M      also a bundle of module M alone (a repository path such as
 *                                           functions/api/app.ts, or a package), built with the api's
 *                                           options, its every export kept: where a function's import
 *                                           time goes, layer by layer (repeatable)
 *
 * esbuild builds in memory; the import times import the bundles from a
 * temporary directory (removed after) whose `node_modules` links this
 * repository's, where what a bundle leaves external resolves, as the Lambda
 * runtime's modules would.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import type { BundlingOptions } from "aws-cdk-lib/aws-lambda-nodejs";
import { type BuildOptions, build, type Metafile } from "esbuild";
import * as here from "./bundling.ts";

type FunctionName = here.FunctionName;

export interface BundleReport {
  /** The function, or the module an `--entry` bundle imports. */
  readonly function: string;
  /** index.mjs, minified, bytes. */
  readonly bytes: number;
  /** index.mjs.map, bytes. */
  readonly mapBytes: number;
  /** gzip -9 of index.mjs: about what the zipped deployment package adds for the code. */
  readonly gzipBytes: number;
  /** Bytes in the output by origin (npm package, or the repository's top-level folder), largest first. */
  readonly origins: ReadonlyArray<{ readonly origin: string; readonly bytes: number }>;
  /** Bytes of the inputs only a dynamic `import()` reaches: in the file, evaluated on first use. */
  readonly deferredBytes: number;
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

/**
 * The inputs the entry point reaches through static imports alone: what a
 * cold start evaluates. An input outside it is only reached by a dynamic
 * `import()`, run when the code that asks for it runs.
 */
export function staticInputs(metafile: Metafile, entry: string): Set<string> {
  const seen = new Set<string>([entry]);
  const pending = [entry];
  for (let input = pending.pop(); input !== undefined; input = pending.pop()) {
    for (const edge of metafile.inputs[input]?.imports ?? []) {
      if (edge.kind === "dynamic-import" || edge.external || seen.has(edge.path)) continue;
      seen.add(edge.path);
      pending.push(edge.path);
    }
  }
  return seen;
}

function origins(inputs: Metafile["outputs"][string]["inputs"]) {
  const totals = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
    const origin = originOf(input);
    totals.set(origin, (totals.get(origin) ?? 0) + bytesInOutput);
  }
  return [...totals]
    .map(([origin, bytes]) => ({ origin, bytes }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** What `infra/bundling.ts` exports that the report uses (this checkout's, or an older one's). */
type Bundling = Pick<typeof here, "bundlingOptions" | "entryPath" | "ENTRY_POINTS" | "REPO_ROOT">;

/** The `--alias:` flags of the stack's `esbuildArgs`, as esbuild's API takes them. */
function aliases(bundling: BundlingOptions): Record<string, string> {
  const alias: Record<string, string> = {};
  for (const [flag, value] of Object.entries(bundling.esbuildArgs ?? {})) {
    if (flag === "--alias" && typeof value === "string") {
      const [from = "", to = ""] = value.split("=");
      alias[from] = to;
    } else if (flag.startsWith("--alias:") && typeof value === "string") {
      alias[flag.slice("--alias:".length)] = value;
    } else {
      throw new Error(`infra/bundles.ts does not know the esbuild flag ${flag}: teach it`);
    }
  }
  return alias;
}

/** The esbuild options of a function's bundle, as the stack's NodejsFunction runs esbuild. */
export function esbuildOptions(name: FunctionName, bundling: Bundling = here): BuildOptions {
  const options = bundling.bundlingOptions(name);
  const alias = aliases(options);
  return {
    absWorkingDir: bundling.REPO_ROOT,
    entryPoints: [bundling.entryPath(name)],
    outfile: "index.mjs",
    bundle: true,
    platform: "node",
    format: "esm",
    target: options.target,
    minify: options.minify,
    sourcemap: options.sourceMap ? "linked" : false,
    sourcesContent: options.sourcesContent,
    external: [...(options.externalModules ?? [])],
    mainFields: options.mainFields,
    ...(Object.keys(alias).length ? { alias } : {}),
    ...(options.banner ? { banner: { js: options.banner } } : {}),
    logLevel: "error",
  };
}

/** One function built in memory: the code, its map and esbuild's metafile. */
interface Built {
  readonly name: string;
  readonly code: Uint8Array;
  readonly map: Uint8Array;
  readonly metafile: Metafile;
  readonly entry: string;
}

async function buildFunction(name: FunctionName, bundling: Bundling = here): Promise<Built> {
  return buildBundle(name, esbuildOptions(name, bundling));
}

/**
 * Module `module` alone, bundled as the api is: the entry imports its
 * namespace and keeps it, so every export is evaluated (an upper bound of
 * what it adds to a function that imports only some of them).
 */
async function buildModule(module: string): Promise<Built> {
  const specifier = /^(core|functions|infra)\//.test(module) ? `./${module}` : module;
  const { entryPoints: _, ...options } = esbuildOptions("api");
  return buildBundle(module, {
    ...options,
    stdin: {
      contents: `import * as m from ${JSON.stringify(specifier)}; globalThis.autocompactEntry = m;`,
      resolveDir: here.REPO_ROOT,
      loader: "ts",
      sourcefile: "entry.ts",
    },
  });
}

async function buildBundle(name: string, options: BuildOptions): Promise<Built> {
  const result = await build({ ...options, write: false, metafile: true });
  const file = (suffix: string) => {
    const found = result.outputFiles.find((f) => f.path.endsWith(suffix));
    if (!found) throw new Error(`esbuild produced no ${suffix}`);
    return found.contents;
  };
  const output = result.metafile.outputs["index.mjs"];
  if (!output?.entryPoint) throw new Error("esbuild produced no index.mjs");
  return {
    name,
    code: file("index.mjs"),
    map: file("index.mjs.map"),
    metafile: result.metafile,
    entry: output.entryPoint,
  };
}

function report(built: Built): BundleReport {
  const inputs = built.metafile.outputs["index.mjs"]?.inputs ?? {};
  const eager = staticInputs(built.metafile, built.entry);
  let deferredBytes = 0;
  for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
    if (!eager.has(input)) deferredBytes += bytesInOutput;
  }
  return {
    function: built.name,
    bytes: built.code.byteLength,
    mapBytes: built.map.byteLength,
    gzipBytes: gzipSync(built.code, { level: 9 }).byteLength,
    origins: origins(inputs),
    deferredBytes,
  };
}

/** This checkout's bundle of each function, built once per process: the tests read several views of one build. */
const builtHere = new Map<FunctionName, Promise<Built>>();

function builtFunction(name: FunctionName): Promise<Built> {
  let built = builtHere.get(name);
  if (!built) {
    built = buildFunction(name);
    builtHere.set(name, built);
  }
  return built;
}

/** Builds one function as the stack does and measures it. */
export async function bundleReport(name: FunctionName): Promise<BundleReport> {
  return report(await builtFunction(name));
}

/** The metafile of a function's bundle and its entry point's input path (for tests of what it loads). */
export async function bundleMetafile(
  name: FunctionName,
): Promise<{ metafile: Metafile; entry: string }> {
  const { metafile, entry } = await builtFunction(name);
  return { metafile, entry };
}

/**
 * What the functions' cold starts see: the stack's `NODE_OPTIONS` and the
 * variables their entry points require, with placeholder values (creating a
 * client sends nothing), and no summarizer (the default deployment).
 */
const LAMBDA_ENVIRONMENT: Readonly<Record<string, string>> = {
  NODE_OPTIONS: here.LAMBDA_NODE_OPTIONS,
  AWS_REGION: "us-east-1",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "1",
  TABLE_NAME: "autocompact-bundles",
  LOG_LEVEL: "INFO",
  SUMMARIZER: "none",
  POWERTOOLS_METRICS_NAMESPACE: "autocompact",
  QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/autocompact.fifo",
  WEBHOOK_SECRETS_KEY_ARN:
    "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000",
  EVENT_BUS_NAME: "autocompact-bundles",
};

/**
 * Imports its argument, then prints the process's CPU time and exits (an SDK
 * client's sockets, if any, must not keep it alive).
 */
const LOADER = `await import(process.argv[2]);
const { user, system } = process.cpuUsage();
process.stdout.write(String((user + system) / 1000));
process.exit(0);
`;

interface Timed {
  readonly key: string;
  readonly built?: Built;
}

/** One target's medians, ms: wall time of the whole process, and its CPU time (user + system, every thread). */
export interface ImportTime {
  readonly wallMs: number;
  readonly cpuMs: number;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
};

/**
 * The import times of `runs` fresh `node` processes importing each bundle,
 * and an empty module (key `empty`): round after round, each round every
 * target once, starting one further along each round. The CPU time is the
 * steadier figure on a shared machine (another process's load lengthens the
 * wall time, not this one's CPU time) and, on a Lambda of one vCPU
 * (docs/architecture.md §13), what the cold start waits for.
 */
export function importTimes(
  builds: readonly Timed[],
  runs: number,
  options: { node?: string; environment?: Readonly<Record<string, string>> } = {},
): Map<string, ImportTime> {
  const dir = mkdtempSync(join(tmpdir(), "autocompact-bundles-"));
  try {
    symlinkSync(join(here.REPO_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    writeFileSync(join(dir, "loader.mjs"), LOADER);
    const targets: Array<{ key: string; file: string }> = [];
    for (const { key, built } of [{ key: "empty" }, ...builds]) {
      const folder = join(dir, key.replace(/[^a-z0-9-]/gi, "-"));
      mkdirSync(folder);
      writeFileSync(join(folder, "index.mjs"), built?.code ?? "");
      if (built) writeFileSync(join(folder, "index.mjs.map"), built.map);
      targets.push({ key, file: pathToFileURL(join(folder, "index.mjs")).href });
    }
    const env = { PATH: process.env.PATH ?? "", ...LAMBDA_ENVIRONMENT, ...options.environment };
    const node = options.node ?? process.execPath;
    const wall = new Map<string, number[]>(targets.map((t) => [t.key, []]));
    const cpu = new Map<string, number[]>(targets.map((t) => [t.key, []]));
    for (let round = 0; round < runs; round++) {
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(round + i) % targets.length];
        if (!target) continue;
        const started = performance.now();
        const run = spawnSync(node, [join(dir, "loader.mjs"), target.file], {
          cwd: dir,
          env,
          encoding: "utf8",
        });
        const elapsed = performance.now() - started;
        if (run.status !== 0) {
          throw new Error(`importing the ${target.key} bundle failed: ${run.stderr.trim()}`);
        }
        wall.get(target.key)?.push(elapsed);
        cpu.get(target.key)?.push(Number(run.stdout));
      }
    }
    return new Map(
      targets.map(({ key }) => [
        key,
        { wallMs: median(wall.get(key) ?? []), cpuMs: median(cpu.get(key) ?? []) },
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** A bundle's import time as a ratio to the empty module's. */
interface Ratio {
  readonly wall: number;
  readonly cpu: number;
}

function print(r: BundleReport, label: string, time?: ImportTime, ratio?: Ratio): void {
  const timing =
    time && ratio
      ? `; import ${time.cpuMs.toFixed(0)} ms CPU, ${ratio.cpu.toFixed(2)}x empty (wall ${time.wallMs.toFixed(0)} ms, ${ratio.wall.toFixed(2)}x)`
      : "";
  const deferred = r.deferredBytes ? `, ${kb(r.deferredBytes)} deferred` : "";
  console.log(
    `${r.function}${label}: ${kb(r.bytes)} minified (map ${kb(r.mapBytes)}, gzip ${kb(r.gzipBytes)}${deferred})${timing}`,
  );
  for (const { origin, bytes } of r.origins.slice(0, 8)) {
    const share = ((100 * bytes) / r.bytes).toFixed(1).padStart(5);
    console.log(`  ${share}%  ${kb(bytes).padStart(9)}  ${origin}`);
  }
}

function option(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return value;
}

/** The `--env K=V` pairs of the command line. */
function environmentOption(argv: readonly string[]): Record<string, string> {
  const pairs = argv.flatMap((arg, i) => (arg === "--env" ? [argv[i + 1] ?? ""] : []));
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf("=");
      if (at < 1) throw new Error(`--env ${pair}: expected NAME=VALUE`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

async function main(argv: readonly string[]): Promise<void> {
  const runs = Number(option(argv, "--runs") ?? 15);
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs: a whole number, 1 or more");
  const beforeDir = option(argv, "--before");
  const trees: Array<{ label: string; bundling: Bundling }> = [{ label: "", bundling: here }];
  if (beforeDir) {
    const url = pathToFileURL(join(resolve(beforeDir), "infra", "bundling.ts")).href;
    trees.unshift({ label: " (before)", bundling: (await import(url)) as Bundling });
  }
  const names = Object.keys(here.ENTRY_POINTS) as FunctionName[];
  const builds: Array<Timed & { label: string; built: Built }> = [];
  for (const { label, bundling } of trees) {
    for (const name of names) {
      builds.push({ key: `${name}${label}`, label, built: await buildFunction(name, bundling) });
    }
  }
  for (const module of argv.flatMap((arg, i) => (arg === "--entry" ? [argv[i + 1] ?? ""] : []))) {
    builds.push({ key: module, label: "", built: await buildModule(module) });
  }
  const node = option(argv, "--node");
  const times = argv.includes("--sizes")
    ? undefined
    : importTimes(builds, runs, {
        ...(node ? { node } : {}),
        environment: environmentOption(argv),
      });
  const empty = times?.get("empty");
  const rows = builds.map(({ key, label, built }) => {
    const time = times?.get(key);
    const ratio =
      time && empty
        ? { wall: time.wallMs / empty.wallMs, cpu: time.cpuMs / empty.cpuMs }
        : undefined;
    return { label, report: report(built), time, ratio };
  });
  if (argv.includes("--json")) {
    const json = rows.map(({ label, report, time, ratio }) => ({
      ...report,
      ...(label ? { tree: "before" } : {}),
      ...(time && ratio ? { import: { ...time, wallRatio: ratio.wall, cpuRatio: ratio.cpu } } : {}),
    }));
    console.log(JSON.stringify({ bundles: json, ...(empty ? { empty, runs } : {}) }));
    return;
  }
  if (empty) {
    console.log(
      `empty module: ${empty.cpuMs.toFixed(0)} ms CPU, wall ${empty.wallMs.toFixed(0)} ms (medians of ${runs} fresh processes each)`,
    );
  }
  for (const { label, report, time, ratio } of rows) print(report, label, time, ratio);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
