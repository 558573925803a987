/**
 * Reading a stored conversation back as a JP stream, and the numbers derived
 * from it that the head caches. Shared by the API and the compactor.
 */

import type { TriggerState } from "../../core/auto-compaction.ts";
import { type Estimator, resolveEstimator } from "../../core/calibration.ts";
import {
  DEFAULT_MODEL_CATALOG,
  layeredCatalog,
  type ModelCatalog,
  resolveContextWindow,
} from "../../core/catalog.ts";
import { type AutoConfig, type AutoConfigLayer, resolveAutoConfig } from "../../core/config.ts";
import { tokensFromChars } from "../../core/estimate.ts";
import type { Compaction, Entry } from "../../core/events.ts";
import { conversationWarnings, type Warning } from "../../core/warnings.ts";
import type {
  ConversationHead,
  ConversationRef,
  ConversationStore,
  StoredCompaction,
  Tenant,
} from "../ports.ts";

/** Service-wide settings: the service config layer and the model catalog. */
export interface ServiceSettings {
  /** The service's auto config layer (TOML file or environment), below tenants and conversations. */
  readonly config?: AutoConfigLayer;
  /** The deployment's catalog: the bundled models with `MODEL_CATALOG`'s over them (functions/env.ts). */
  readonly catalog?: ModelCatalog;
}

/**
 * The auto config in force for a conversation: defaults → service → tenant →
 * the stream's config deltas → the conversation's API config (an explicit PUT
 * is the last word).
 */
export function effectiveConfig(
  settings: ServiceSettings,
  tenant: Tenant | undefined,
  head: ConversationHead | undefined,
): AutoConfig {
  return resolveAutoConfig(
    settings.config ?? {},
    tenant?.config ?? {},
    head?.stream_config ?? {},
    head?.config ?? {},
  );
}

/**
 * The model catalog of a tenant's conversations: the deployment's, with the
 * tenant's models over it (`layeredCatalog` states the order). A turn's
 * `model.context_window` still wins over both (`resolveContextWindow`).
 */
export function catalogFor(settings: ServiceSettings, tenant: Tenant | undefined): ModelCatalog {
  const deployment = settings.catalog ?? DEFAULT_MODEL_CATALOG;
  return tenant?.models ? layeredCatalog(deployment, tenant.models) : deployment;
}

/**
 * The estimator a conversation's estimates are in (core/calibration.ts): its
 * config's `estimator` over the head's calibration sample, chars / 4 until
 * enough turns carry usage. The API's estimates (the summary, the
 * projection, the timeline, a dry run) are all in its tokens.
 */
export function conversationEstimator(
  settings: ServiceSettings,
  tenant: Tenant | undefined,
  head: ConversationHead,
): Estimator {
  const { estimator } = effectiveConfig(settings, tenant, head);
  return resolveEstimator(estimator, { kind: "sample", sample: head.calibration });
}

/** What an evaluation of the conversation would decide on now: the head's numbers, no events. */
export function triggerStateOf(
  settings: ServiceSettings,
  tenant: Tenant | undefined,
  head: ConversationHead,
): TriggerState {
  return {
    config: effectiveConfig(settings, tenant, head),
    turn_count: head.turn_count,
    after_last_compaction: head.max_compacted_turn + 1,
    estimated_tokens: tokensFromChars(head.projected_chars),
    context_window: resolveContextWindow(head.model, catalogFor(settings, tenant)),
    calibration: { kind: "sample", sample: head.calibration },
  };
}

/**
 * The warnings of `conversation` (core/warnings.ts) as its head gives them.
 * The last decision counts as a band only while the band stands: a reset
 * that removed it leaves nothing to be still over.
 */
export function warningsOf(
  settings: ServiceSettings,
  tenant: Tenant | undefined,
  conversation: string,
  head: ConversationHead,
): Warning[] {
  const decision = head.last_decision;
  const stands = decision?.outcome === "fired" && head.max_compacted_turn >= decision.band.to_turn;
  // The last layer that says `enabled` decides it (effectiveConfig's order).
  const layers = [
    ["service", settings.config],
    ["tenant", tenant?.config],
    ["stream", head.stream_config],
    ["conversation", head.config],
  ] as const;
  const deciding = layers.filter(([, layer]) => layer?.enabled !== undefined).at(-1);
  return conversationWarnings({
    conversation,
    state: triggerStateOf(settings, tenant, head),
    ...(deciding?.[1]?.enabled === false ? { disabled_by: deciding[0] } : {}),
    ...(head.config ? { layer: head.config } : {}),
    ...(head.model?.id ? { model_id: head.model.id } : {}),
    ...(decision ? { last_outcome: stands ? "fired" : "skipped" } : {}),
  });
}

/** The raw stream: every turn's events with each compaction after the turn it was added after. */
export async function readStream(store: ConversationStore, ref: ConversationRef): Promise<Entry[]> {
  const [turns, compactions] = await Promise.all([
    store.readTurns(ref),
    store.listCompactions(ref),
  ]);
  return interleave(
    turns.map((t) => t.events),
    compactions,
  );
}

/**
 * Places compactions after the turn they were added after, in stream order;
 * `turnEvents` are the turns from `first` on (a page of them, functions/conversations/paged-reads.ts).
 */
export function interleave(
  turnEvents: readonly Entry[][],
  compactions: readonly StoredCompaction[],
  first = 0,
): Entry[] {
  const out: Entry[] = [];
  let next = 0;
  const flush = (turn: number) => {
    while (
      next < compactions.length &&
      (compactions[next] as StoredCompaction).after_turn <= turn
    ) {
      out.push((compactions[next] as StoredCompaction).compaction);
      next++;
    }
  };
  flush(first - 1);
  turnEvents.forEach((events, index) => {
    out.push(...events);
    flush(first + index);
  });
  for (; next < compactions.length; next++)
    out.push((compactions[next] as StoredCompaction).compaction);
  return out;
}

/** Compactions as the API lists them: 1-based position in stream order. */
export function listedCompactions(
  compactions: readonly StoredCompaction[],
): (Compaction & { position: number })[] {
  return compactions.map((c, i) => ({ position: i + 1, ...c.compaction }));
}

/** The storage key of the automatic band fired by `turn`. */
export function autoKey(turn: number): string {
  return `AUTO#${String(turn).padStart(6, "0")}`;
}

/** The storage key of a manual compaction written as version `seq`. */
export function manualKey(seq: number): string {
  return `MAN#${String(seq).padStart(6, "0")}`;
}
