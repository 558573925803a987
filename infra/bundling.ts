/**
 * How the Lambdas are built: one place for the runtime, the entry points and
 * the esbuild options, shared by the stack (NodejsFunction) and by
 * `npm run bundles` (infra/bundles.ts, the size report), so the report
 * measures exactly what is deployed.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { type BundlingOptions, OutputFormat, SourceMapMode } from "aws-cdk-lib/aws-lambda-nodejs";

/** The repository root (infra/..). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The newest Node.js runtime aws-cdk-lib offers (cdk-nag's AwsSolutions-L1
 * and Serverless-LambdaLatestVersion require the newest of the family). The
 * code stays Node 20-compatible (docs/architecture.md §14), so an older runtime works
 * too.
 */
export const RUNTIME = Runtime.NODEJS_24_X;

/** Graviton: 20% cheaper per GB-second than x86_64; the bundles are pure JavaScript (no native modules). */
export const LAMBDA_ARCH = Architecture.ARM_64;

/**
 * The functions' `NODE_OPTIONS`: stack traces of the minified bundles point
 * at the TypeScript sources (Node reads the source map at load, part of the
 * import time `npm run bundles` measures).
 */
export const LAMBDA_NODE_OPTIONS = "--enable-source-maps";

/** esbuild's target, matching the runtime. */
export const ESBUILD_TARGET = `node${RUNTIME.name.replace(/^nodejs(\d+)\.x$/, "$1")}`;

/**
 * Nothing is left to the Lambda runtime, the AWS SDK v3 included: the
 * runtime's copy loads every package of a client whole from its own
 * node_modules (hundreds of files, each resolved and read), which measured
 * slower than the bundled clients, tree-shaken to what the code calls and
 * read as one file (`npm run bundles` measures both; docs/architecture.md
 * §13).
 */
export const EXTERNAL_MODULES: readonly string[] = [];

/**
 * The built-ins the bundles take through `require` (infra/node/require.ts):
 * on Node 24 the ESM import of `node:http` alone loads undici.
 */
const REQUIRED_BUILTINS = ["child_process", "crypto", "http", "http2", "process", "util"];

/**
 * esbuild's `--alias`, paths from the repository root (where esbuild
 * resolves aliases): the bundles' `zod` is zod without its translations
 * (infra/zod/index.ts), and some built-ins are taken through `require`.
 */
export const ESBUILD_ALIASES: Readonly<Record<string, string>> = {
  zod: "./infra/zod/index.ts",
  ...Object.fromEntries(
    REQUIRED_BUILTINS.flatMap((name) => [
      [`node:${name}`, `./infra/node/${name}.ts`],
      [name, `./infra/node/${name}.ts`],
    ]),
  ),
};

/** The functions' entry points, relative to the repository root. */
export const ENTRY_POINTS = {
  api: "functions/api/lambda.ts",
  compactor: "functions/compactor/index.ts",
  notifier: "functions/notifier/index.ts",
} as const;

export type FunctionName = keyof typeof ENTRY_POINTS;

/**
 * An ESM bundle has no `require`: a CommonJS dependency bundled into it that
 * calls `require("node:…")` fails at load with "Dynamic require of … is not
 * supported". Today's dependencies are all ESM (Hono, zod, Powertools' ESM
 * builds), so the bundles do not carry this banner; test/cdk/bundles.suite.ts
 * fails if one ever needs it, and then `banner: ESM_REQUIRE_BANNER` in
 * {@link bundlingOptions} gives the bundle a real `require`.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __autocompactCreateRequire } from 'node:module'; const require = __autocompactCreateRequire(import.meta.url);";

/**
 * The API's console and API reference assets (functions/console/build.ts),
 * written beside its bundle in `console-assets/`, where the app reads them
 * on the first console request: the browser code is built for the browser,
 * not bundled into the Lambda's own code.
 */
const CONSOLE_ASSETS_HOOKS: NonNullable<BundlingOptions["commandHooks"]> = {
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir, outputDir) => [
    `"${inputDir}/node_modules/.bin/tsx" "${inputDir}/functions/console/build.ts" "${outputDir}/console-assets"`,
  ],
};

/** The NodejsFunction bundling options (local esbuild, never Docker); the API's carry the console's assets. */
export function bundlingOptions(name?: FunctionName): BundlingOptions {
  return {
    ...(name === "api" ? { commandHooks: CONSOLE_ASSETS_HOOKS } : {}),
    format: OutputFormat.ESM,
    target: ESBUILD_TARGET,
    // ESM entry points of dual packages first (smaller, tree-shakable).
    mainFields: ["module", "main"],
    minify: true,
    sourceMap: true,
    sourceMapMode: SourceMapMode.DEFAULT,
    // Mappings only: the sources are in the repository. Keeps the .map (which
    // Node parses at load with --enable-source-maps) about half the size.
    sourcesContent: false,
    externalModules: [...EXTERNAL_MODULES],
    bundleAwsSDK: true,
    esbuildArgs: Object.fromEntries(
      Object.entries(ESBUILD_ALIASES).map(([from, to]) => [`--alias:${from}`, to]),
    ),
    forceDockerBundling: false,
  };
}

/** The entry point's absolute path. */
export function entryPath(name: FunctionName): string {
  return join(REPO_ROOT, ENTRY_POINTS[name]);
}
