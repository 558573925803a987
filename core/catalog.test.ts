import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  contextWindowOf,
  DEFAULT_MODEL_CATALOG,
  layeredCatalog,
  ModelCatalogLayer,
  resolveContextWindow,
} from "./catalog.ts";
import { BUNDLED_MODELS } from "./catalog-models.ts";

/** The string literals of the type alias `name` in a declaration file of node_modules. */
function unionOf(file: string, name: string): string[] {
  const text = readFileSync(new URL(`../node_modules/${file}`, import.meta.url), "utf8");
  const line = text.split("\n").find((l) => l.startsWith(`export type ${name} = `)) ?? "";
  return [...line.matchAll(/'([^']+)'/g)].map((match) => match[1] as string);
}

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

  it("of two prefixes of one length, takes the full id's over the one after the provider prefix", () => {
    expect(contextWindowOf("q-r/s-t", { q: 1000, s: 2000 })).toBe(1000);
    expect(contextWindowOf("q-r/s-t", { s: 2000, q: 1000 })).toBe(1000);
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

describe("the current models of the pinned SDKs", () => {
  it("knows the models issue 27 found missing, with literal windows", () => {
    expect(contextWindowOf("gpt-5.1")).toBe(400_000);
    expect(contextWindowOf("gpt-5.2")).toBe(400_000);
    expect(contextWindowOf("gpt-5.4")).toBe(1_050_000);
    expect(contextWindowOf("claude-sonnet-5")).toBe(1_000_000);
    expect(contextWindowOf("claude-opus-5")).toBe(1_000_000);
    expect(contextWindowOf("claude-haiku-5-5")).toBe(1_000_000);
  });

  it("matches dated snapshots of dotted and dashed versions", () => {
    expect(contextWindowOf("claude-opus-4-5-20251101")).toBe(200_000);
    expect(contextWindowOf("gpt-5.1-2025-11-13")).toBe(400_000);
    expect(contextWindowOf("gpt-5.2-pro-2025-12-11")).toBe(400_000);
    expect(contextWindowOf("claude-haiku-4-5-20251001")).toBe(200_000);
    expect(contextWindowOf("gpt-3.5-turbo-0613")).toBe(4_096);
    expect(contextWindowOf("gpt-3.5-turbo-0125")).toBe(16_385);
  });

  it("reads a dot between digits as a dash, and a minor version as its family", () => {
    expect(contextWindowOf("claude-opus-4.5")).toBe(200_000);
    expect(contextWindowOf("anthropic/claude-sonnet-4.6")).toBe(1_000_000);
    expect(contextWindowOf("gpt-5.9")).toBe(400_000);
    expect(contextWindowOf("GPT-5.4")).toBe(1_050_000);
    expect(contextWindowOf("gpt-5-1")).toBe(400_000);
    // Only between two digits: a dot beside a letter stays a dot.
    expect(contextWindowOf("v2.x", { "v2-x": 9 })).toBeUndefined();
    expect(contextWindowOf("x.2", { "x-2": 9 })).toBeUndefined();
  });

  it("tells the ChatGPT snapshots from their family", () => {
    expect(contextWindowOf("gpt-5-chat-latest")).toBe(128_000);
    expect(contextWindowOf("gpt-5.3-chat-latest")).toBe(128_000);
    expect(contextWindowOf("gpt-4-1106-preview")).toBe(128_000);
    expect(contextWindowOf("gpt-4-0613")).toBe(8_192);
    expect(contextWindowOf("gpt-4-32k-0613")).toBe(32_768);
  });

  it("reads Bedrock, Vertex and Ollama spellings", () => {
    expect(contextWindowOf("anthropic.claude-opus-4-6-v1")).toBe(1_000_000);
    expect(contextWindowOf("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe(200_000);
    expect(contextWindowOf("claude-haiku-4-5@20251001")).toBe(200_000);
    expect(contextWindowOf("llama3.1:8b")).toBe(131_072);
    expect(contextWindowOf("qwen3-coder:30b")).toBe(262_144);
    // Only the leading vendor and region dots go: a dot inside the name stays.
    expect(contextWindowOf("x-beta.max", { "x-max": 9 })).toBeUndefined();
    expect(contextWindowOf("eu.x-max", { "x-max": 9 })).toBe(9);
  });

  it.each([
    ["openai/resources/shared.d.ts", "ChatModel"],
    ["openai/resources/shared.d.ts", "ResponsesModel"],
    ["@anthropic-ai/sdk/resources/messages/messages.d.ts", "Model"],
  ])("gives every model of %s %s a window", (file, name) => {
    const ids = unionOf(file, name);
    expect(ids.length).toBeGreaterThan(name === "ResponsesModel" ? 10 : 20);
    expect(ids.filter((id) => contextWindowOf(id) === undefined)).toEqual([]);
  });

  it("says for every bundled model where it comes from and when that was read", () => {
    const ids = BUNDLED_MODELS.map((entry) => entry.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const entry of BUNDLED_MODELS) {
      expect(entry.read).toBe("2026-12-02");
      expect(entry.source).toMatch(/; window: \S/);
      expect(Number.isInteger(entry.window) && entry.window > 0).toBe(true);
      expect(DEFAULT_MODEL_CATALOG[entry.id]).toBe(entry.window);
    }
  });

  it("lets an operator's entry win over the bundled one, in any spelling", () => {
    const catalog = { ...DEFAULT_MODEL_CATALOG, "GPT-5.1": 100_000, "my-model": 8_000 };
    expect(contextWindowOf("gpt-5.1-2025-11-13", catalog)).toBe(100_000);
    expect(contextWindowOf("acme/my-model-v2", catalog)).toBe(8_000);
    expect(resolveContextWindow({ id: "gpt-5.1", context_window: 50_000 }, catalog)).toBe(50_000);
  });
});

describe("layered catalogs: bundled < deployment < tenant < model.context_window", () => {
  const deployment = { "my-model": 64_000, "gpt-5-1": 300_000, "acme-coder": 50_000 };
  const tenant = { "my-model": 32_000, "gpt-5.1": 111_000 };

  it("lets the tenant's entry win over the deployment's, and the deployment's over the bundled", () => {
    const catalog = layeredCatalog(deployment, tenant);
    expect(contextWindowOf("my-model", catalog)).toBe(32_000);
    // The tenant spells it as the bundled id does, the deployment otherwise: the tenant still wins.
    expect(contextWindowOf("gpt-5.1", catalog)).toBe(111_000);
    expect(contextWindowOf("openai/gpt-5.1-2025-11-13", catalog)).toBe(111_000);
    expect(contextWindowOf("acme-coder", catalog)).toBe(50_000);
    expect(contextWindowOf("gpt-4.1", catalog)).toBe(1_047_576);
    expect(contextWindowOf("gpt-5.1", layeredCatalog(deployment))).toBe(300_000);
    expect(contextWindowOf("gpt-5.1", layeredCatalog(tenant, deployment))).toBe(300_000);
  });

  it("keeps model.context_window above every layer", () => {
    const catalog = layeredCatalog(deployment, tenant);
    expect(resolveContextWindow({ id: "my-model", context_window: 1_000 }, catalog)).toBe(1_000);
    expect(resolveContextWindow({ id: "my-model" }, catalog)).toBe(32_000);
  });

  it("matches an exact id of any layer before a prefix of any layer", () => {
    const catalog = layeredCatalog(undefined, { "gpt-5": 100_000 });
    expect(contextWindowOf("gpt-5.1", catalog)).toBe(400_000);
    expect(contextWindowOf("gpt-5.9", catalog)).toBe(100_000);
    expect(contextWindowOf("gpt-5-2025-08-07", catalog)).toBe(100_000);
  });

  it("is the bundled catalog without layers, and keeps an id such as __proto__ an entry", () => {
    expect(contextWindowOf("claude-opus-4-5", layeredCatalog())).toBe(200_000);
    expect(contextWindowOf("my-model", layeredCatalog(undefined, undefined))).toBeUndefined();
    const odd = layeredCatalog(JSON.parse('{"__proto__": 7000}') as Record<string, number>);
    expect(contextWindowOf("__proto__", odd)).toBe(7_000);
  });

  it("validates a layer: ids of 1 to 256 characters, whole windows from 1", () => {
    expect(ModelCatalogLayer.safeParse({ "my-model": 64_000 }).success).toBe(true);
    const messages = (value: unknown) =>
      ModelCatalogLayer.safeParse(value).error?.issues.map((issue) => issue.message);
    const object = 'must be a JSON object of model id → context window, e.g. {"my-model":128000}';
    expect(messages("x")).toEqual([object]);
    expect(messages([64_000])).toEqual([object]);
    expect(messages({ "": 1 })).toEqual(["a model id must be 1 to 256 characters"]);
    expect(messages({ ["m".repeat(257)]: 1 })).toEqual(["a model id must be 1 to 256 characters"]);
    expect(messages({ m: 0 })).toEqual(["must be at least 1 token"]);
    expect(messages({ m: 1.5 })).toEqual(["must be a whole number of tokens"]);
    expect(messages({ m: "1" })).toEqual(["must be a context window in tokens"]);
  });
});
