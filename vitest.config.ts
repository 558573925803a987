import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "core/**/*.test.ts",
      "functions/**/*.test.ts",
      "cli/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    // One in-memory DynamoDB Local for the whole run (needs Java 17+).
    globalSetup: ["test/setup/dynamodb.ts"],
    // The AWS SDK's "releases after January 2027 need Node 22" notice, once per worker (§14).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
