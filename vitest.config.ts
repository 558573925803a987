import { defineConfig } from "vitest/config";
import ExpectedDurationSequencer from "./test/setup/sequencer.ts";

// Two projects (docs/architecture.md §11). `unit` needs nothing but Node:
// core, the formats, the functions' own tests, the CLI run in process, the
// routes through `app.request()` on the memory store (`npm run test:unit`,
// no Java). `integration` needs DynamoDB Local or moto (each started once
// per run by its global setup), Chromium, or the service running: the
// storage contract, reliability, end-to-end, CDK and moto suites. `npm test`
// runs both.
const INTEGRATION = [
  "test/integration/**/*.test.ts",
  "test/contract/**/*.test.ts",
  "test/reliability/**/*.test.ts",
  "test/e2e/**/*.test.ts",
  "test/cdk/**/*.test.ts",
  "test/package/**/*.test.ts",
  "test/moto/**/*.test.ts",
];

const shared = {
  // One run-count setting for every property (test/helpers/property.ts).
  setupFiles: ["test/setup/property-runs.ts"],
  // The AWS SDK's "releases after January 2027 need Node 22" notice, once per worker (docs/architecture.md §14).
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  // V8 collects garbage on the worker's own thread: with every core busy,
  // its parallel GC threads only contend (unit on 2 cores: 69 and 74 s of
  // CPU with this flag, 77 and 92 s without).
  execArgv: ["--single-threaded-gc"],
  testTimeout: 30_000,
  hookTimeout: 120_000,
  // `expect.poll` waits for what the page or the service does next; vitest's 1 s default
  // ran out on a loaded machine (the console's firings list, seen once), and a
  // failing poll still fails, only later.
  expect: { poll: { timeout: 10_000 } },
};

export default defineConfig({
  test: {
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache),
    // keyed by their content: a run transforms only what changed since the last
    // (in `npm test`, the unit project reuses what integration transformed).
    // Measured over `vitest run --project unit`: transform 6.2 s against 10.5 s
    // summed, 129 s CPU against 140 s. Vitest's own, still experimental.
    experimental: { fsModuleCache: true },
    // Vitest's default is one worker per core less one: a single worker on
    // this project's 2-core machines. The integration suites often wait
    // (DynamoDB Local, a child process, a server), so three workers keep
    // both cores busy while they wait; a fourth costs more CPU (its own
    // imports and JIT) than it fills (docs/architecture.md §11).
    maxWorkers: 3,
    // Longest first, from a committed estimate where vitest has no history (test/setup/sequencer.ts).
    sequence: { sequencer: ExpectedDurationSequencer },
    projects: [
      {
        test: {
          ...shared,
          name: "unit",
          // CPU-bound: one worker per core. More only contend (4 workers:
          // 65 s wall and 126 s CPU against 57 s and 100 s on 2 cores).
          maxWorkers: "100%",
          // In a run of both (`npm test`), after integration: projects'
          // files mixed in one group cost each worker both projects' imports.
          sequence: { groupOrder: 1 },
          include: [
            "core/**/*.test.ts",
            "functions/**/*.test.ts",
            "cli/**/*.test.ts",
            "test/**/*.test.ts",
          ],
          exclude: ["**/node_modules/**", ...INTEGRATION],
          // Pure and in-process tests share their workers' module cache:
          // importing zod, hono and the SDKs once per worker rather than
          // once per file halves the project's time. A test that changes
          // global state undoes it (vi.unstubAllEnvs, a mock's restore).
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: "integration",
          include: INTEGRATION,
          // One in-memory DynamoDB Local for the whole run (needs Java 17+),
          // one moto server for the suites on AWS's SQS, KMS and EventBridge,
          // and the launcher's bundle built once before the tests spawn it.
          globalSetup: [
            "test/setup/checkout-cli.ts",
            "test/setup/dynamodb.ts",
            "test/setup/moto.ts",
          ],
          // As in unit: each worker imports the SDKs, hono and zod once.
          // Entry points read their environment at import (a cold start):
          // only test/cdk/stack.test.ts imports them, under its own stubs.
          isolate: false,
        },
      },
    ],
  },
});
