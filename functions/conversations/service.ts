/**
 * Conversation operations behind the HTTP API: append a turn (idempotent,
 * gap- and conflict-checked), manual compaction, reset, config, and the read
 * models. Writes are optimistic: each is conditional on the head it was
 * computed from, and retried from a fresh read when it loses a race.
 */
import { createHash } from "node:crypto";
import type { ModelInfo } from "../../core/catalog.ts";
import {
  type AutoConfigLayer,
  ConfigError,
  mergeLayers,
  parseConfigTree,
} from "../../core/config.ts";
import {
  InvalidInputError,
  PROBLEM_VARIANTS,
  SummaryRequiredError,
  UnprocessableError,
} from "../../core/errors.ts";
import { estimateView, tokensFromChars } from "../../core/estimate.ts";
import type { Compaction, Entry } from "../../core/events.ts";
import { type ManualRequest, planManualCompaction } from "../../core/manual.ts";
import { project } from "../../core/projection.ts";
import { buildCompaction, nextCompactionTimestamp } from "../../core/rules.ts";
import { measureTurn, type TurnSize } from "../../core/sizes.ts";
import { indexTurns, isConversationEvent } from "../../core/turns.ts";
import {
  ConditionFailedError,
  ContentionError,
  NotFoundError,
  TurnConflictError,
} from "../errors.ts";
import {
  type Clock,
  type ConversationHead,
  type ConversationRef,
  type ConversationStore,
  EMPTY_HEAD,
  type StoredCompaction,
  type StoredTurn,
  type Summarizer,
  type SummaryResult,
  systemClock,
  type Tenant,
  type TurnQueue,
} from "../ports.ts";
import {
  effectiveConfig,
  interleave,
  listedCompactions,
  manualKey,
  maxCompactedTurn,
  projectedChars,
  rawChars,
  readStream,
  type ServiceSettings,
  turnSizes,
} from "./state.ts";
import { missingSummarizerError, summarizeBand } from "./summaries.ts";

/** How many times an optimistic write is retried from a fresh read. */
const MAX_ATTEMPTS = 8;
/** Compactions removed per transaction (DynamoDB allows 100 items, one is the head). */
const REMOVE_BATCH = 90;

/** A turn as the webhook receives it (already schema-validated). */
export interface TurnInput {
  readonly turn: number;
  readonly model?: ModelInfo;
  readonly events: Entry[];
}

/** The outcome of posting a turn. */
export interface AppendOutcome {
  readonly status: "created" | "replayed";
  readonly turn: number;
  readonly turn_count: number;
  /** Whether an evaluation was enqueued by this call. */
  readonly evaluation_enqueued: boolean;
}

/** Dependencies of the service. */
export interface ConversationServiceDeps {
  readonly store: ConversationStore;
  readonly queue: TurnQueue;
  readonly clock?: Clock;
  readonly settings?: ServiceSettings;
  readonly summarizer?: Summarizer;
}

/** SHA-256 of a turn's canonical content: equal digests are identical replays. */
export function turnDigest(input: TurnInput): string {
  return createHash("sha256")
    .update(JSON.stringify({ model: input.model ?? null, events: input.events }))
    .digest("hex");
}

/** Checks that posted events form exactly one turn of a stream. */
export function checkTurnShape(input: TurnInput): void {
  const compaction = input.events.findIndex((e) => e.type === "compaction");
  if (compaction >= 0) {
    throw new InvalidInputError(
      `events[${compaction}] is a compaction: add compactions with POST /v1/conversations/{id}/compactions, not in a turn`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  const { turnCount } = indexTurns(input.events);
  if (turnCount === 0) {
    const types = [...new Set(input.events.map((e) => e.type))].join(", ");
    throw new InvalidInputError(
      `a turn needs at least one conversation event (turn_start, chat_request, chat_response, tool_call_request, tool_call_response, inquiry_*); got only: ${types}`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  if (turnCount > 1) {
    throw new InvalidInputError(
      `events hold ${turnCount} turns: post one turn per request (each turn_start after an event starts a new turn)`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  const first = input.events.find(isConversationEvent);
  if (input.turn > 0 && first?.type !== "turn_start") {
    throw new InvalidInputError(
      `turn ${input.turn} must begin with a turn_start event (only turn 0 may start implicitly)`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
}

export class ConversationService {
  readonly #store: ConversationStore;
  readonly #queue: TurnQueue;
  readonly #clock: Clock;
  readonly #settings: ServiceSettings;
  readonly #summarizer: Summarizer | undefined;

  constructor(deps: ConversationServiceDeps) {
    this.#store = deps.store;
    this.#queue = deps.queue;
    this.#clock = deps.clock ?? systemClock;
    this.#settings = deps.settings ?? {};
    this.#summarizer = deps.summarizer;
  }

  /**
   * Stores a turn and enqueues its evaluation. An identical replay succeeds
   * (and re-enqueues the evaluation if it has not finished); a gap or
   * different content for a stored turn is a {@link TurnConflictError}.
   */
  async appendTurn(tenant: Tenant, conversation: string, input: TurnInput): Promise<AppendOutcome> {
    checkTurnShape(input);
    const streamLayers = input.events.flatMap((entry, index) => {
      if (entry.type !== "config_delta") return [];
      const layer = parseTurnConfig(entry, index);
      return Object.keys(layer).length > 0 ? [layer] : [];
    });
    const ref = { tenant: tenant.id, conversation };
    const digest = turnDigest(input);
    const created = async (): Promise<AppendOutcome> => {
      await this.#queue.enqueue({ tenant: tenant.id, conversation, turn: input.turn });
      return {
        status: "created",
        turn: input.turn,
        turn_count: input.turn + 1,
        evaluation_enqueued: true,
      };
    };
    if (streamLayers.length === 0 && !answersEarlierTurns(input)) {
      // The common case needs no read: the next turn, not covered by any
      // compaction, adds its characters to the cached projection. Anything
      // else (a replay, a gap, a covered turn) fails the condition and takes
      // the path below, which reads the head first.
      const size = measureTurn(input.events, new Map());
      try {
        await this.#store.appendTurn(
          ref,
          storedTurn(input, size, digest),
          { uncompacted: true, add_projected_chars: rawChars(size) },
          input.model ? { model: input.model } : {},
        );
        return await created();
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
      }
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const head = await this.#store.getHead(ref);
      const count = head?.turn_count ?? 0;
      if (input.turn < count)
        return this.#replay(ref, head as ConversationHead, input.turn, digest);
      if (input.turn > count) {
        throw new TurnConflictError(
          `turn ${input.turn} would leave a gap: the conversation has ${count} turn(s), so the next turn is ${count}`,
          count,
        );
      }
      const size = measureTurn(input.events, await this.#toolNamesBefore(ref, input));
      const maxCompacted = head?.max_compacted_turn ?? -1;
      const projected =
        input.turn > maxCompacted
          ? (head?.projected_chars ?? 0) + rawChars(size)
          : projectedChars(
              [...(await turnSizes(this.#store, ref)), size],
              await this.#store.listCompactions(ref),
            );
      const model = input.model ?? head?.model;
      const streamConfig =
        streamLayers.length > 0
          ? mergeLayers(head?.stream_config ?? {}, ...streamLayers)
          : undefined;
      if (streamConfig) {
        try {
          effectiveConfig(this.#settings, tenant, {
            ...(head ?? EMPTY_HEAD),
            stream_config: streamConfig,
          });
        } catch (error) {
          if (error instanceof ConfigError) {
            throw new InvalidInputError(`the turn's config_delta: ${error.message}`, {
              ...PROBLEM_VARIANTS.invalidTurn,
              cause: error,
            });
          }
          throw error;
        }
      }
      try {
        await this.#store.appendTurn(
          ref,
          storedTurn(input, size, digest),
          { compactions_version: head?.compactions_version ?? 0 },
          {
            projected_chars: projected,
            ...(streamConfig ? { stream_config: streamConfig } : {}),
            ...(model ? { model } : {}),
          },
        );
      } catch (error) {
        if (error instanceof ConditionFailedError) continue;
        throw error;
      }
      return await created();
    }
    throw new ContentionError(`turn ${input.turn}: too many concurrent writes, retry the request`);
  }

  async #replay(
    ref: ConversationRef,
    head: ConversationHead,
    turn: number,
    digest: string,
  ): Promise<AppendOutcome> {
    const stored = await this.#store.getTurn(ref, turn);
    if (stored?.digest !== digest) {
      throw new TurnConflictError(
        `turn ${turn} is already stored with different content (events or model differ); the next turn is ${head.turn_count}`,
        head.turn_count,
      );
    }
    const pending = head.evaluated_through < turn;
    if (pending)
      await this.#queue.enqueue({ tenant: ref.tenant, conversation: ref.conversation, turn });
    return { status: "replayed", turn, turn_count: head.turn_count, evaluation_enqueued: pending };
  }

  /** Tool names of earlier turns, read only when a response answers a request outside its own turn. */
  async #toolNamesBefore(ref: ConversationRef, input: TurnInput): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    if (!answersEarlierTurns(input)) return names;
    for (const turn of await this.#store.readTurns(ref, 0, input.turn - 1)) {
      for (const e of turn.events) {
        if (e.type === "tool_call_request")
          names.set((e as { id: string }).id, (e as { name: string }).name);
      }
    }
    return names;
  }

  async #requireHead(ref: ConversationRef): Promise<ConversationHead> {
    const head = await this.#store.getHead(ref);
    if (!head || (head.turn_count === 0 && head.config === undefined)) {
      throw new NotFoundError(`no conversation "${ref.conversation}"`);
    }
    return head;
  }

  /** Turn count, evaluation progress, estimate and compactions of a conversation. */
  async summary(tenant: Tenant, conversation: string) {
    const ref = { tenant: tenant.id, conversation };
    const head = await this.#requireHead(ref);
    const compactions = await this.#store.listCompactions(ref);
    return {
      turn_count: head.turn_count,
      evaluated_through: head.evaluated_through < 0 ? null : head.evaluated_through,
      estimated_tokens: tokensFromChars(head.projected_chars),
      compactions: listedCompactions(compactions),
    };
  }

  /** The raw stream, compactions included. */
  async events(tenant: Tenant, conversation: string): Promise<Entry[]> {
    const ref = { tenant: tenant.id, conversation };
    await this.#requireHead(ref);
    return readStream(this.#store, ref);
  }

  /** The projected view the next LLM call should see. */
  async projection(tenant: Tenant, conversation: string) {
    const ref = { tenant: tenant.id, conversation };
    await this.#requireHead(ref);
    const { entries, turns } = project(await readStream(this.#store, ref));
    return { events: entries, turns, estimated_tokens: estimateView(entries).estimated_tokens };
  }

  /** The compactions, with their 1-based positions. */
  async compactions(tenant: Tenant, conversation: string) {
    const ref = { tenant: tenant.id, conversation };
    await this.#requireHead(ref);
    return listedCompactions(await this.#store.listCompactions(ref));
  }

  /**
   * Adds a manual compaction from a DSL spec or a rule. A summary is
   * generated from the raw events of the (extended) range before anything is
   * written.
   */
  async compact(
    tenant: Tenant,
    conversation: string,
    request: ManualRequest,
  ): Promise<Compaction & { position: number }> {
    const ref = { tenant: tenant.id, conversation };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const head = await this.#requireHead(ref);
      if (head.turn_count === 0)
        throw new UnprocessableError("the conversation has no turns to compact yet");
      const stored = await this.#store.listCompactions(ref);
      const existing = stored.map((c) => c.compaction);
      const config = effectiveConfig(this.#settings, tenant, head);
      const plan = planManualCompaction(request, head.turn_count, existing, config.rule);
      // A DSL `s` has no settings of its own: it summarizes with the configured rule's prompt and model.
      const summaryRule = plan.rule.summary
        ? { ...config.rule.summary, ...plan.rule.summary }
        : undefined;
      let summary: SummaryResult | undefined;
      if (summaryRule) {
        if (!this.#summarizer) throw missingSummarizerError(plan.range);
        summary = await summarizeBand(this.#summarizer, this.#store, ref, plan.range, summaryRule);
      }
      const compaction = buildCompaction({
        rule: plan.rule,
        range: plan.range,
        timestamp: nextCompactionTimestamp(existing, this.#clock.nowMillis()),
        source: "manual",
        ...(summary ? { summaryText: summary.text } : {}),
      });
      const seq = head.compactions_version + 1;
      const entry = { key: manualKey(seq), after_turn: head.turn_count - 1, seq, compaction };
      const all = [...stored, entry];
      try {
        await this.#store.addCompaction(ref, entry, head, {
          projected_chars: projectedChars(await turnSizes(this.#store, ref), all),
          max_compacted_turn: maxCompactedTurn(all),
        });
      } catch (error) {
        if (error instanceof ConditionFailedError) continue;
        throw error;
      }
      return { position: all.length, ...compaction };
    }
    throw new ContentionError("too many concurrent writes, retry the request");
  }

  /** Removes compactions: all, one by 1-based position, or all of one source. */
  async reset(
    tenant: Tenant,
    conversation: string,
    selector: { position?: number; source?: "auto" | "manual" },
  ): Promise<{ removed: (Compaction & { position: number })[] }> {
    const ref = { tenant: tenant.id, conversation };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const head = await this.#requireHead(ref);
      const stored = await this.#store.listCompactions(ref);
      const listed = listedCompactions(stored);
      if (
        selector.position !== undefined &&
        (selector.position < 1 || selector.position > stored.length)
      ) {
        throw new UnprocessableError(
          stored.length === 0
            ? `no compaction at position ${selector.position}: the conversation has no compactions`
            : `no compaction at position ${selector.position}: positions are 1 to ${stored.length}`,
        );
      }
      const removing = stored.filter(
        (c, i) =>
          (selector.position === undefined || selector.position === i + 1) &&
          (selector.source === undefined || c.compaction.source === selector.source),
      );
      if (removing.length === 0) return { removed: [] };
      const keys = new Set(removing.map((c) => c.key));
      try {
        await this.#removeInBatches(ref, head, stored, [...keys]);
      } catch (error) {
        if (error instanceof ConditionFailedError) continue;
        throw error;
      }
      return { removed: listed.filter((_, i) => keys.has((stored[i] as { key: string }).key)) };
    }
    throw new ContentionError("too many concurrent writes, retry the request");
  }

  /**
   * Removes compactions a batch at a time (one DynamoDB transaction holds at
   * most 100 items): every batch is one atomic step from one consistent head
   * to the next, so a concurrent reader or writer never sees a wrong estimate.
   */
  async #removeInBatches(
    ref: ConversationRef,
    head: ConversationHead,
    stored: readonly StoredCompaction[],
    keys: readonly string[],
  ): Promise<void> {
    const sizes = await turnSizes(this.#store, ref);
    let remaining = stored;
    let version = { turn_count: head.turn_count, compactions_version: head.compactions_version };
    for (let start = 0; start < keys.length; start += REMOVE_BATCH) {
      const batch = new Set(keys.slice(start, start + REMOVE_BATCH));
      remaining = remaining.filter((c) => !batch.has(c.key));
      await this.#store.removeCompactions(ref, [...batch], version, {
        projected_chars: projectedChars(sizes, remaining),
        max_compacted_turn: maxCompactedTurn(remaining),
      });
      version = { ...version, compactions_version: version.compactions_version + 1 };
    }
  }

  /** The conversation's own config layer and the effective config. */
  async getConfig(tenant: Tenant, conversation: string) {
    const head = await this.#store.getHead({ tenant: tenant.id, conversation });
    return {
      conversation: { compaction: { auto: head?.config ?? {} } },
      effective: effectiveConfig(this.#settings, tenant, head),
    };
  }

  /** Replaces the conversation's own config layer (creating the conversation if needed). */
  async putConfig(tenant: Tenant, conversation: string, layer: AutoConfigLayer) {
    const ref = { tenant: tenant.id, conversation };
    // The layer must leave a usable effective config (ConfigError → 400).
    const effective = effectiveConfig(this.#settings, tenant, {
      ...((await this.#store.getHead(ref)) ?? EMPTY_HEAD),
      config: layer,
    });
    if (effective.rule.summary && !this.#summarizer) {
      throw new SummaryRequiredError(
        "conversation.compaction.auto.rule.summary: this service has no summarizer configured, so a summary rule could never run (set SUMMARIZER locally, or the stack's summarizer setting)",
      );
    }
    await this.#store.putConfig(ref, layer);
    return this.getConfig(tenant, conversation);
  }

  /** Interleaves turns and compactions (exposed for the read paths of tests and tools). */
  static interleave = interleave;
}

/** The turn as the store keeps it. */
function storedTurn(input: TurnInput, size: TurnSize, digest: string): StoredTurn {
  return {
    turn: input.turn,
    events: input.events,
    size,
    digest,
    ...(input.model ? { model: input.model } : {}),
  };
}

/** Whether a turn has a tool response whose request is not in the turn (its name is in an earlier turn). */
function answersEarlierTurns(input: TurnInput): boolean {
  if (input.turn === 0) return false;
  const requested = new Set(
    input.events.flatMap((e) => (e.type === "tool_call_request" ? [(e as { id: string }).id] : [])),
  );
  return input.events.some(
    (e) => e.type === "tool_call_response" && !requested.has((e as { id: string }).id),
  );
}

function parseTurnConfig(entry: Entry, index: number): AutoConfigLayer {
  try {
    return parseConfigTree((entry as { delta?: unknown }).delta ?? {});
  } catch (error) {
    if (error instanceof ConfigError) {
      const issues = error.messages.map((message) => `events[${index}].delta: ${message}`);
      throw new InvalidInputError(issues.join("; "), {
        ...PROBLEM_VARIANTS.invalidTurn,
        cause: error,
      });
    }
    throw error;
  }
}
