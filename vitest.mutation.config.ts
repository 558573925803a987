import { defineConfig } from "vitest/config";

// Core's unit tests alone, for `npm run mutation`: no DynamoDB Local, nothing
// outside core/ (core is pure, so its tests need no global setup).
export default defineConfig({
  test: {
    include: ["core/**/*.test.ts"],
    setupFiles: ["test/setup/property-runs.ts"],
    testTimeout: 30_000,
  },
});
