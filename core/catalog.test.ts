import { describe, expect, it } from "vitest";
import { contextWindowOf, resolveContextWindow } from "./catalog.ts";

describe("the model catalog", () => {
  it("finds models by id, without a provider prefix, and by dated snapshot", () => {
    expect(contextWindowOf("claude-sonnet-4-5")).toBe(200_000);
    expect(contextWindowOf("anthropic/claude-sonnet-4-5")).toBe(200_000);
    expect(contextWindowOf("gpt-4o-2024-08-06")).toBe(128_000);
    expect(contextWindowOf("gpt-4o-mini-2024-07-18")).toBe(128_000);
    expect(contextWindowOf("openai/gpt-4.1-2025-04-14")).toBe(1_047_576);
  });

  it("knows nothing of unknown models", () => {
    expect(contextWindowOf("my-local-model")).toBeUndefined();
    expect(contextWindowOf(undefined)).toBeUndefined();
    expect(contextWindowOf("")).toBeUndefined();
    expect(contextWindowOf("constructor")).toBeUndefined();
    expect(contextWindowOf("gpt-4omni")).toBeUndefined();
  });

  it("prefers an exact match to a catalogued prefix", () => {
    expect(contextWindowOf("m-large", { m: 1000, "m-large": 2000 })).toBe(2000);
    expect(contextWindowOf("acme/m-large", { m: 1000, "m-large": 2000 })).toBe(2000);
  });

  it("takes the longest catalogued prefix, whatever the catalog's order", () => {
    expect(contextWindowOf("m-large-2025", { m: 1000, "m-large": 2000 })).toBe(2000);
    expect(contextWindowOf("m-large-2025", { "m-large": 2000, m: 1000 })).toBe(2000);
  });

  it("matches catalog ids that carry a provider prefix", () => {
    expect(contextWindowOf("acme/m", { "acme/m": 1000, m: 2000 })).toBe(1000);
    expect(contextWindowOf("acme/m-2025", { "acme/m": 1000 })).toBe(1000);
  });

  it("prefers the turn's explicit window and accepts overrides", () => {
    expect(resolveContextWindow({ id: "gpt-4o", context_window: 1000 })).toBe(1000);
    expect(resolveContextWindow({ id: "gpt-4o" })).toBe(128_000);
    expect(resolveContextWindow({ id: "mine" }, { mine: 4096 })).toBe(4096);
  });

  it("knows no window for a turn without a model", () => {
    expect(resolveContextWindow(undefined)).toBeUndefined();
    expect(resolveContextWindow({})).toBeUndefined();
  });
});
