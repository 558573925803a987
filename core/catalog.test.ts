import { describe, expect, it } from "vitest";
import { contextWindowOf, resolveContextWindow } from "./catalog.ts";

describe("the model catalog", () => {
  it("finds models by id, without a provider prefix, and by dated snapshot", () => {
    expect(contextWindowOf("claude-sonnet-4-5")).toBe(200_000);
    expect(contextWindowOf("anthropic/claude-sonnet-4-5")).toBe(200_000);
    expect(contextWindowOf("gpt-4o-2024-08-06")).toBe(128_000);
    expect(contextWindowOf("gpt-4o-mini-2024-07-18")).toBe(128_000);
  });

  it("knows nothing of unknown models", () => {
    expect(contextWindowOf("my-local-model")).toBeUndefined();
    expect(contextWindowOf(undefined)).toBeUndefined();
    expect(contextWindowOf("constructor")).toBeUndefined();
  });

  it("prefers the turn's explicit window and accepts overrides", () => {
    expect(resolveContextWindow({ id: "gpt-4o", context_window: 1000 })).toBe(1000);
    expect(resolveContextWindow({ id: "mine" }, { mine: 4096 })).toBe(4096);
  });
});
