/**
 * Context windows of well-known models, used when a turn does not carry
 * `model.context_window` (which always wins). The bundled models and where
 * each window comes from are in `core/catalog-models.ts`; operators extend
 * or override them per deployment (`MODEL_CATALOG`) and per tenant, in the
 * one order {@link layeredCatalog} states (docs/architecture.md §6).
 *
 * Ids are compared in one spelling: lower case, a dot between digits read
 * as `-` (`gpt-5.1` and `claude-opus-4.5` as `gpt-5-1` and `claude-opus-4-5`)
 * and a Vertex `@` snapshot or an Ollama `:` tag as `-`. They match exactly, then without a
 * provider prefix (`anthropic/claude-sonnet-4-5`, Bedrock's
 * `us.anthropic.claude-…-v1:0`), then by the longest catalogued prefix
 * followed by `-`: a dated snapshot (`gpt-5.1-2025-11-13`), and a minor
 * version of a catalogued family (`gpt-5.9` reads `gpt-5`'s window).
 */
import * as z from "zod";
import { BUNDLED_MODELS } from "./catalog-models.ts";
import { MAX_MODEL_ID_LENGTH } from "./config.ts";

/** Model id → context window in tokens. */
export type ModelCatalog = Readonly<Record<string, number>>;

/**
 * Models an operator or a tenant adds (`MODEL_CATALOG`, a tenant's `models`):
 * ids of 1 to 256 characters, windows whole numbers of tokens from 1.
 */
export const ModelCatalogLayer = z.record(
  z.string().min(1).max(MAX_MODEL_ID_LENGTH),
  z
    .number({ error: "must be a context window in tokens" })
    .int("must be a whole number of tokens")
    .positive("must be at least 1 token")
    .max(Number.MAX_SAFE_INTEGER, "must be at most 9007199254740991"),
  {
    error: (issue) =>
      issue.code === "invalid_key"
        ? `a model id must be 1 to ${MAX_MODEL_ID_LENGTH} characters`
        : 'must be a JSON object of model id → context window, e.g. {"my-model":128000}',
  },
);

/** The bundled catalog: {@link BUNDLED_MODELS} by id. Operators can extend or override it (service config). */
export const DEFAULT_MODEL_CATALOG: ModelCatalog = Object.freeze(
  Object.fromEntries(BUNDLED_MODELS.map((entry) => [entry.id, entry.window])),
);

/** `id` in the one spelling ids are compared in. */
function spelling(id: string): string {
  return id
    .toLowerCase()
    .replace(/(?<=\d)\.(?=\d)/g, "-")
    .replace(/[@:]/g, "-");
}

// A catalog's ids in their compared spelling, built once per catalog object.
const spelled = new WeakMap<ModelCatalog, Map<string, number>>();

function spelledCatalog(catalog: ModelCatalog): Map<string, number> {
  let map = spelled.get(catalog);
  // Stryker disable next-line ConditionalExpression: a cache; a map built again for a catalog is the same map.
  if (map === undefined) {
    map = new Map();
    for (const [id, window] of Object.entries(catalog)) {
      // Of two spellings of one id, the later wins: an operator's entries come after the bundled ones.
      map.set(spelling(id), window);
    }
    // Stryker disable next-line CallExpression: a cache; a map not kept is built again, the same.
    spelled.set(catalog, map);
  }
  return map;
}

/**
 * The catalog in force: the bundled models, then each layer in order, a
 * later layer winning for an id in any spelling (`GPT-5.1` replaces
 * `gpt-5-1`). The service passes the deployment's layer (`MODEL_CATALOG`)
 * then the tenant's (`models`): the narrower scope wins, as a tenant's
 * config layer wins over the service's, and a tenant's entries reach only
 * its own conversations. An exact id of any layer beats a prefix match of
 * any layer, so a tenant's `gpt-5` does not reach a catalogued `gpt-5.1`.
 * Above them all, a turn's `model.context_window` ({@link resolveContextWindow}).
 *
 * @example
 * layeredCatalog({ "my-model": 64_000 }, { "my-model": 32_000 })["my-model"] // 32000
 */
export function layeredCatalog(...layers: readonly (ModelCatalog | undefined)[]): ModelCatalog {
  const merged = new Map<string, number>();
  for (const layer of [DEFAULT_MODEL_CATALOG, ...layers]) {
    for (const [id, window] of Object.entries(layer ?? {})) merged.set(spelling(id), window);
  }
  // fromEntries: an id such as `__proto__` stays an entry, never a prototype.
  return Object.freeze(Object.fromEntries(merged));
}

/** The id, without what comes before its last `/`, and without Bedrock's vendor and region dots. */
function candidatesOf(modelId: string): string[] {
  const id = spelling(modelId);
  const bare = id.slice(id.lastIndexOf("/") + 1);
  return [id, bare, bare.replace(/^(?:[a-z]+\.)+/, "")];
}

/** Looks a model id up in a catalog; `undefined` when the window is unknown. */
export function contextWindowOf(
  modelId: string | undefined,
  catalog: ModelCatalog = DEFAULT_MODEL_CATALOG,
): number | undefined {
  if (!modelId) return undefined;
  const known = spelledCatalog(catalog);
  const candidates = candidatesOf(modelId);
  for (const id of candidates) {
    const window = known.get(id);
    if (window !== undefined) return window;
  }
  let longest = 0;
  let window: number | undefined;
  for (const id of candidates) {
    for (const [key, value] of known) {
      if (id.startsWith(`${key}-`) && key.length > longest) {
        longest = key.length;
        window = value;
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
