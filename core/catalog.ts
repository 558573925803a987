/**
 * Context windows of well-known models, used when a turn does not carry
 * `model.context_window`. Ids are matched exactly, then without a provider
 * prefix (`anthropic/claude-sonnet-4-5` → `claude-sonnet-4-5`), then by the
 * longest catalogued prefix (dated snapshots such as `gpt-4o-2024-08-06`).
 */

/** Model id → context window in tokens. */
export type ModelCatalog = Readonly<Record<string, number>>;

/** The bundled catalog. Operators can extend or override it (service config). */
export const DEFAULT_MODEL_CATALOG: ModelCatalog = Object.freeze({
  "claude-opus-4-5": 200_000,
  "claude-opus-4-1": 200_000,
  "claude-opus-4": 200_000,
  "claude-sonnet-4-5": 200_000,
  "claude-sonnet-4": 200_000,
  "claude-haiku-4-5": 200_000,
  "claude-3-7-sonnet": 200_000,
  "claude-3-5-sonnet": 200_000,
  "claude-3-5-haiku": 200_000,
  "gpt-5": 400_000,
  "gpt-5-mini": 400_000,
  "gpt-4.1": 1_047_576,
  "gpt-4.1-mini": 1_047_576,
  "gpt-4o": 128_000,
  "gpt-4o-mini": 128_000,
  o3: 200_000,
  "o4-mini": 200_000,
  "gemini-2.5-pro": 1_048_576,
  "gemini-2.5-flash": 1_048_576,
  "llama3.1": 131_072,
  "qwen3-coder": 262_144,
});

/** Looks a model id up in a catalog; `undefined` when the window is unknown. */
export function contextWindowOf(
  modelId: string | undefined,
  catalog: ModelCatalog = DEFAULT_MODEL_CATALOG,
): number | undefined {
  if (!modelId) return undefined;
  // The id, then the id without its provider prefix (the id again if it has none).
  const candidates = [modelId, modelId.slice(modelId.lastIndexOf("/") + 1)];
  for (const id of candidates) {
    if (Object.hasOwn(catalog, id)) return catalog[id];
  }
  let longest = 0;
  let window: number | undefined;
  for (const id of candidates) {
    for (const known of Object.keys(catalog)) {
      if (id.startsWith(`${known}-`) && known.length > longest) {
        longest = known.length;
        window = catalog[known];
      }
    }
  }
  return window;
}

/** The model a turn names, as posted by a platform. */
export interface ModelInfo {
  readonly id?: string | undefined;
  readonly context_window?: number | undefined;
}

/** The window of a turn's model: its explicit `context_window`, else the catalog's. */
export function resolveContextWindow(
  model: ModelInfo | undefined,
  catalog: ModelCatalog = DEFAULT_MODEL_CATALOG,
): number | undefined {
  return model?.context_window ?? contextWindowOf(model?.id, catalog);
}
