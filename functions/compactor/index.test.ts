import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe("compactor Lambda entry point", () => {
  it("wires a handler from the environment at cold start, without calling AWS", async () => {
    vi.stubEnv("TABLE_NAME", "autocompact-test");
    vi.stubEnv("LOG_LEVEL", "warn");
    vi.stubEnv("AWS_REGION", "eu-west-1");
    const module = await import("./index.ts");
    expect(typeof module.handler).toBe("function");
  });

  it("fails the cold start with the name of a missing variable", async () => {
    vi.stubEnv("TABLE_NAME", undefined);
    await expect(import("./index.ts")).rejects.toThrow(/TABLE_NAME/);
  });
});
