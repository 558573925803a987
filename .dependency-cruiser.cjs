/**
 * The layer rules (docs/architecture.md §3), checked by `npm run lint`
 * (`depcruise`) and by test/lint/layers.test.ts, which also shows that each
 * rule fails on a tree that breaks it. Tests may reach across the layers
 * (they wire fakes, run entry points), so the rules look at source files only.
 */

/** A test file or a test helper: free to import what it exercises. */
const TESTS = ["[.]test[.]ts$", "^test/"];

/** The Lambda entry points infra bundles (infra/bundling.ts `ENTRY_POINTS`: the layer test checks the two agree). */
const LAMBDA_ENTRY_POINTS = [
  "functions/api/lambda.ts",
  "functions/compactor/index.ts",
  "functions/notifier/index.ts",
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "core-imports-only-core",
      comment:
        "core/ is the pure domain (no I/O, no AWS, no HTTP): it may use npm packages such as zod, but nothing of ours outside core/, so the rules run the same in the API, the compactor, the CLI and the browser.",
      severity: "error",
      from: { path: "^core/", pathNot: TESTS },
      to: { pathNot: ["^core/", "(^|/)node_modules/"], dependencyTypesNot: ["core"] },
    },
    {
      name: "adapters-import-no-use-case-or-http",
      comment:
        "Adapters (store, queue, secrets, summarizers, notifications) implement the ports of functions/ports.ts: they depend on ports, errors and core, never on the use cases (conversations, compactor) or the HTTP layer (api), which depend on them through the ports.",
      severity: "error",
      from: {
        path: "^functions/(store|queue|secrets|summarizers|notifications)/",
        pathNot: TESTS,
      },
      to: { path: "^functions/(conversations|compactor|api)/" },
    },
    {
      name: "no-import-of-a-lambda-entry-point",
      comment:
        "A Lambda entry point is a composition root: importing it runs its cold start (reads the environment, builds AWS clients). Share what it wires from the modules it imports.",
      severity: "error",
      from: { pathNot: TESTS },
      to: { path: LAMBDA_ENTRY_POINTS.map((entry) => `^${entry.replaceAll(".", "[.]")}$`) },
    },
    {
      name: "console-imports-only-the-client",
      comment:
        "The console's browser code talks to the service only through the published client (client/), like any other caller: no copy of the wire types, no server module pulled into the browser bundle.",
      severity: "error",
      from: { path: "^functions/console/client/", pathNot: TESTS },
      to: { pathNot: ["^client/", "^functions/console/client/", "(^|/)node_modules/"] },
    },
    {
      name: "no-circular-import",
      comment:
        "A cycle of imports makes module initialisation order matter (a value read before it is defined) and the layers meaningless. Cycles through a type-only import vanish at run time and are not counted.",
      severity: "error",
      from: { pathNot: TESTS },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only", "type-import"] } },
    },
  ],
  options: {
    doNotFollow: { path: "(^|/)node_modules/" },
    exclude: { path: "^(cdk[.]out|dist|[.]data)/" },
    // Type-only imports are dependencies of the layers too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
    // A run whose files and options are those of the last reuses its result
    // (files compared by content): `npm run lint` 4.8 s -> 1.8 s when nothing
    // changed, and test/lint/layers.test.ts reuses what lint found.
    cache: { folder: "node_modules/.cache/dependency-cruiser", strategy: "content" },
  },
};
