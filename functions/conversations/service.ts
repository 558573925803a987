import { estimateTokens } from "../../core/calibration.ts";
import { type AutoConfigLayer, mergeLayers } from "../../core/config.ts";
import type { Compaction, Entry } from "../../core/events.ts";
import type { ProviderFormat } from "../../core/formats/format.ts";
import { providerFormat } from "../../core/formats/index.ts";
import type { ManualRequest } from "../../core/manual.ts";
import { resetSelection } from "../../core/rules.ts";
import { measureTurn } from "../../core/sizes.ts";
import { CorruptDataError, TurnConflictError } from "../errors.ts";
import {
  type Clock,
  type ConversationHead,
  type ConversationRef,
  type ConversationStore,
  EMPTY_HEAD,
  type IdempotentAnswer,
  type StoredCompaction,
  type Summarizer,
  systemClock,
  type Tenant,
  type TurnQueue,
} from "../ports.ts";
import { projectedRead } from "./conditional-reads.ts";
import { countersOf, type Drift, storedDrift } from "./counters.ts";
import {
  awaitDecision,
  type EvaluationWait,
  progressOf,
  type WaitDeps,
} from "./evaluation-wait.ts";
import { type OnceAnswer, requestDigest, runOnce } from "./idempotency.ts";
import { type ConversationList, listConversations } from "./listing.ts";
import { ConversationLog, type Decision, deletingError, type RetryPolicy } from "./log.ts";
import {
  type DryRun,
  dryRunCompaction,
  type ManualCompactionDeps,
  prepareManualCompaction,
  requireHead,
} from "./manual-compaction.ts";
import { materializedDrift } from "./materialized.ts";
import { cursorField, type PageRequest, rawPage } from "./paged-reads.ts";
import {
  type AppendOutcome,
  answersEarlierTurns,
  latestEventMillis,
  type PreparedTurn,
  prepareTurn,
  type Stored,
  storedTurn,
  type TurnInput,
  type TurnPost,
} from "./posted-turn.ts";
import { checkStreamConfig, type RunnableConfigDeps, runnableConfig } from "./runnable-config.ts";
import {
  conversationEstimator,
  effectiveConfig,
  listedCompactions,
  manualKey,
  type ServiceSettings,
  warningsOf,
} from "./state.ts";
import type { DryRunCache, SummaryBudget } from "./summary-budget.ts";
import { conversationTimeline, type TimelineTurn } from "./timeline.ts";

/** Dependencies of the service. */
export interface ConversationServiceDeps {
  readonly store: ConversationStore;
  readonly queue: TurnQueue;
  readonly clock?: Clock;
  readonly settings?: ServiceSettings;
  readonly summarizer?: Summarizer;
  /** How long a write that keeps losing races is retried (defaults in {@link ConversationLog}). */
  readonly retry?: RetryPolicy;
  /** Pauses a read that waits for an evaluation (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The tenants' budget for manual and dry-run summaries (summary-budget.ts); none without it. */
  readonly summaryBudget?: SummaryBudget;
  /** Dry-run answers kept for identical requests on an unchanged conversation; none without it. */
  readonly dryRuns?: DryRunCache<DryRun>;
}

export class ConversationService {
  readonly #store: ConversationStore;
  readonly #log: ConversationLog;
  readonly #queue: TurnQueue;
  readonly #clock: Clock;
  readonly #settings: ServiceSettings;
  readonly #summarizer: Summarizer | undefined;
  readonly #wait: WaitDeps;
  readonly #budget: Pick<ManualCompactionDeps, "budget" | "dryRuns">;

  constructor(deps: ConversationServiceDeps) {
    this.#store = deps.store;
    this.#log = new ConversationLog(deps.store, deps.retry);
    this.#queue = deps.queue;
    this.#clock = deps.clock ?? systemClock;
    this.#settings = deps.settings ?? {};
    this.#summarizer = deps.summarizer;
    this.#budget = { budget: deps.summaryBudget, dryRuns: deps.dryRuns };
    this.#wait = {
      clock: this.#clock,
      sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    };
  }

  /**
   * Stores a turn and enqueues its evaluation. An identical replay succeeds
   * (and re-enqueues the evaluation if it has not finished); a gap or
   * different content for a stored turn is a {@link TurnConflictError}.
   */
  async appendTurn(
    tenant: Tenant,
    conversation: string,
    post: TurnPost,
    options: { readonly waitMs?: number } = {},
  ): Promise<AppendOutcome> {
    const prepared = prepareTurn(post);
    const ref = { tenant: tenant.id, conversation };
    // A new turn changes no evaluation progress: the head is read beside the
    // write, not before it. That read also names the conversation's life
    // (its incarnation) for the evaluation message, except when the write
    // created the head (or gave an older one its first incarnation): then
    // the head is read again, after the write. No read is added to the post.
    // The write starts first (a store that writes at once is read after it);
    // the append may wait for the read once its own read is in flight.
    const besideRead = { head: Promise.resolve<ConversationHead | undefined>(undefined) };
    const appending = this.#append(tenant, ref, prepared, () => besideRead.head);
    besideRead.head = this.#store.getHead(ref);
    const [appended, beside] = await Promise.all([appending, besideRead.head]);
    let stored = appended;
    let read = beside;
    if (stored.status === "created") {
      if (read?.incarnation === undefined || read.deleting) read = await this.#store.getHead(ref);
      stored = { ...stored, evaluation_enqueued: await this.#enqueue(ref, stored.turn, read) };
    }
    const warnings = (head: ConversationHead) =>
      warningsOf(this.#settings, tenant, conversation, head);
    if (options.waitMs === undefined) {
      // The head read beside the write may predate it: the posted model is the latest.
      const head = read ?? EMPTY_HEAD;
      const model = post.model ? { model: post.model } : {};
      return { ...stored, ...progressOf(head), warnings: warnings({ ...head, ...model }) };
    }
    const head = await awaitDecision(
      () => this.#requireHead(ref),
      { afterTurn: stored.turn, waitMs: options.waitMs },
      this.#wait,
    );
    return {
      ...stored,
      ...progressOf(head),
      ...(head.last_decision ? { decision: head.last_decision } : {}),
      warnings: warnings(head),
    };
  }

  async #append(
    tenant: Tenant,
    ref: ConversationRef,
    prepared: PreparedTurn,
    head: () => Promise<ConversationHead | undefined>,
  ): Promise<Stored> {
    const input = prepared.at(this.#clock.nowMillis());
    const { digest, configLayers: streamLayers } = prepared;
    const answered = (outcome: Stored): Stored =>
      prepared.droppedSystem > 0 ? { ...outcome, dropped_system: prepared.droppedSystem } : outcome;
    // Not enqueued yet: appendTurn enqueues a created turn once it knows the conversation's life.
    const created = async (): Promise<Stored> =>
      answered({
        status: "created",
        turn: input.turn,
        turn_count: input.turn + 1,
        evaluation_enqueued: false,
      });
    // The common case needs no read: the next turn, not covered by any
    // compaction and no older than the stored events, adds its characters to
    // the cached projection. Anything else (a replay, a gap, a covered turn,
    // a config delta, a clock behind the stored events) is decided from the head.
    if (
      streamLayers.length === 0 &&
      // Reported usage is kept with the view it saw, which only the head knows.
      prepared.usage === undefined &&
      !answersEarlierTurns(input) &&
      (await this.#log.appendUncovered(
        ref,
        storedTurn(input, measureTurn(input.events, new Map()), digest),
        latestEventMillis(input.events),
        head,
      ))
    ) {
      return created();
    }
    const outcome = await this.#log.update(
      ref,
      `turn ${input.turn}`,
      async ({ head, deleting }): Promise<Decision<Stored | undefined>> => {
        // The platform retries; once the delete has finished, turn 0 starts afresh.
        if (deleting) throw deletingError(ref);
        const count = head?.turn_count ?? 0;
        if (input.turn < count) {
          return {
            result: answered(await this.#replay(ref, head as ConversationHead, input.turn, digest)),
          };
        }
        if (input.turn > count) {
          throw new TurnConflictError(
            `turn ${input.turn} would leave a gap: the conversation has ${count} turn(s), so the next turn is ${count}`,
            count,
          );
        }
        const stamped = prepared.at(this.#clock.nowMillis(), head?.latest_event_ms);
        const size = measureTurn(stamped.events, await this.#toolNamesBefore(ref, stamped));
        const streamConfig =
          streamLayers.length > 0
            ? mergeLayers(head?.stream_config ?? {}, ...streamLayers)
            : undefined;
        if (streamConfig) checkStreamConfig(this.runnable, tenant, head, streamConfig);
        const latest = Math.max(
          head?.latest_event_ms ?? Number.NEGATIVE_INFINITY,
          latestEventMillis(stamped.events),
        );
        return {
          write: {
            kind: "append_turn",
            turn: storedTurn(stamped, size, digest),
            ...(prepared.usage ? { usage: prepared.usage } : {}),
            ...(streamConfig ? { stream_config: streamConfig } : {}),
            ...(Number.isFinite(latest) ? { latest_event_ms: latest } : {}),
          },
          result: undefined,
        };
      },
    );
    return outcome ?? created();
  }

  async #replay(
    ref: ConversationRef,
    head: ConversationHead,
    turn: number,
    digest: string,
  ): Promise<Stored> {
    const stored = await this.#store.getTurn(ref, turn);
    if (stored?.digest !== digest) {
      throw new TurnConflictError(
        `turn ${turn} is already stored with different content (events or model differ); the next turn is ${head.turn_count}`,
        head.turn_count,
      );
    }
    // A replay of a turn not evaluated yet re-enqueues it (the first message may have been lost).
    const pending = head.evaluated_through < turn && (await this.#enqueue(ref, turn, head));
    return { status: "replayed", turn, turn_count: head.turn_count, evaluation_enqueued: pending };
  }

  /**
   * Enqueues the evaluation of `turn` in the life of the conversation `head`
   * is; false, enqueueing nothing, when the conversation is gone (deleted
   * since the turn was stored). Its lag runs from now (the compactor's
   * EvaluationLagMs).
   */
  async #enqueue(
    ref: ConversationRef,
    turn: number,
    head: ConversationHead | undefined,
  ): Promise<boolean> {
    if (!head || head.deleting) return false;
    await this.#queue.enqueue({
      tenant: ref.tenant,
      conversation: ref.conversation,
      turn,
      posted_at_ms: this.#clock.nowMillis(),
      ...(head.incarnation === undefined ? {} : { incarnation: head.incarnation }),
    });
    return true;
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
    return requireHead(ref, await this.#store.getHead(ref));
  }

  /**
   * The head, once an evaluation has decided on a state holding
   * `wait.afterTurn` when there is a wait (see evaluation-wait.ts).
   */
  async #headAfter(ref: ConversationRef, wait?: EvaluationWait): Promise<ConversationHead> {
    const read = () => this.#requireHead(ref);
    return wait ? awaitDecision(read, wait, this.#wait) : read();
  }

  /**
   * `read` of the head (see {@link #headAfter}) and what follows it. A delete
   * running meanwhile can remove chunks the read was following
   * ({@link CorruptDataError}): then the answer is what it is once the delete
   * is done, not found.
   */
  async #afterHead<T>(
    ref: ConversationRef,
    wait: EvaluationWait | undefined,
    read: (head: ConversationHead) => Promise<T>,
  ): Promise<T> {
    const head = await this.#headAfter(ref, wait);
    try {
      return await read(head);
    } catch (error) {
      if (error instanceof CorruptDataError) await this.#requireHead(ref);
      throw error;
    }
  }

  /** Turn count, evaluation progress, estimate and compactions of a conversation. */
  async summary(tenant: Tenant, conversation: string, wait?: EvaluationWait) {
    const ref = { tenant: tenant.id, conversation };
    const head = await this.#headAfter(ref, wait);
    const compactions = await this.#store.listCompactions(ref);
    const resolved = conversationEstimator(this.#settings, tenant, head);
    return {
      turn_count: head.turn_count,
      ...progressOf(head),
      // The estimator's tokens, its fitted overhead included, the reserve not.
      estimated_tokens: estimateTokens(resolved, head.projected_chars),
      estimator: resolved,
      compactions: listedCompactions(compactions),
      warnings: warningsOf(this.#settings, tenant, conversation, head),
    };
  }

  /** A page of the raw stream, compactions included (functions/conversations/paged-reads.ts). */
  async events(
    tenant: Tenant,
    conversation: string,
    page: PageRequest = {},
  ): Promise<{ events: Entry[]; next_cursor?: string }> {
    const read = await this.#rawPage({ tenant: tenant.id, conversation }, page);
    return { events: read.items as Entry[], ...cursorField(read) };
  }

  /**
   * A page of the projected view the next LLM call should see, each of its
   * turns' origins, the whole view's estimate, and how far evaluations had got.
   */
  async projection(
    tenant: Tenant,
    conversation: string,
    wait?: EvaluationWait,
    page: PageRequest = {},
  ) {
    const { read, ...rest } = await this.#projectedPage(tenant, conversation, wait, page);
    return { events: read.items as Entry[], ...rest, ...cursorField(read) };
  }

  /**
   * A page of a view in a provider format (docs/architecture.md §15): the
   * projected one, ready for the next call, with its turns' origins and
   * estimate; or the raw one, compactions left out (read them at `/compactions`).
   */
  async inFormat(
    tenant: Tenant,
    conversation: string,
    format: string,
    view: "raw" | "projected",
    options: { readonly wait?: EvaluationWait; readonly page?: PageRequest } = {},
  ): Promise<Record<string, unknown>> {
    const codec = providerFormat(format);
    const ref = { tenant: tenant.id, conversation };
    const page = options.page ?? {};
    if (view === "raw") {
      const read = await this.#rawPage(ref, page, codec);
      return { format: codec.name, [codec.field]: read.items, ...cursorField(read) };
    }
    const { read, ...rest } = await this.#projectedPage(
      tenant,
      conversation,
      options.wait,
      page,
      codec,
    );
    return { format: codec.name, [codec.field]: read.items, ...rest, ...cursorField(read) };
  }

  /** A page of the raw stream. */
  #rawPage(ref: ConversationRef, page: PageRequest, codec?: ProviderFormat) {
    return this.#afterHead(ref, undefined, (head) => rawPage(this.#store, ref, head, page, codec));
  }

  /** A page of the projected view, its turns' origins, the whole view's estimate, the progress and the warnings. */
  #projectedPage(
    tenant: Tenant,
    conversation: string,
    wait: EvaluationWait | undefined,
    page: PageRequest,
    codec?: ProviderFormat,
  ) {
    const ref = { tenant: tenant.id, conversation };
    return this.#afterHead(ref, wait, async (head) => {
      const warnings = warningsOf(this.#settings, tenant, conversation, head);
      const answer = await projectedRead(this.#store, ref, head, page, {
        estimator: conversationEstimator(this.#settings, tenant, head),
        ...(codec ? { format: codec } : {}),
        warnings,
      });
      return { ...answer, warnings };
    });
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
    return this.#log.update(ref, "compaction", async (snapshot) => {
      const head = requireHead(ref, snapshot.head);
      const stored = await snapshot.compactions();
      const compaction = await prepareManualCompaction(
        this.#manualDeps,
        tenant,
        ref,
        head,
        stored,
        request,
      );
      const seq = head.compactions_version + 1;
      return {
        write: {
          kind: "add_compaction",
          compaction: { key: manualKey(seq), after_turn: head.turn_count - 1, seq, compaction },
        },
        result: { position: stored.length + 1, ...compaction },
      };
    });
  }

  /** What {@link compact} would add and the estimate it would leave; writes nothing. */
  dryRun(tenant: Tenant, conversation: string, request: ManualRequest): Promise<DryRun> {
    return dryRunCompaction(this.#manualDeps, tenant, conversation, request);
  }

  /**
   * Runs `run` once per `Idempotency-Key` `key` of the conversation
   * (idempotency.ts): a retry of the same `request` gets the first answer,
   * another request under the key a 409. `onUnkept` hears of an answer that
   * could not be kept (the request still answers).
   */
  once(
    tenant: Tenant,
    conversation: string,
    key: string,
    request: unknown,
    run: () => Promise<IdempotentAnswer>,
    onUnkept?: (error: unknown) => void,
  ): Promise<OnceAnswer> {
    const ref = { tenant: tenant.id, conversation };
    const nowSeconds = Math.floor(this.#clock.nowMillis() / 1000);
    return runOnce(this.#store, ref, key, requestDigest(request), nowSeconds, run, onUnkept);
  }

  /** What decides whether a config can run here (runnable-config.ts): a conversation's, or a tenant's default. */
  get runnable(): RunnableConfigDeps {
    return { settings: this.#settings, summarizer: this.#summarizer };
  }

  get #manualDeps(): ManualCompactionDeps {
    return {
      store: this.#store,
      clock: this.#clock,
      settings: this.#settings,
      summarizer: this.#summarizer,
      ...this.#budget,
    };
  }

  /** A page of the tenant's conversations, most recently active first (listing.ts). */
  list(tenant: Tenant, page: { limit: number; cursor?: string }): Promise<ConversationList> {
    return listConversations(this.#store, this.#settings, tenant, page);
  }

  /** Per turn: raw and projected size, threshold, and what its evaluation did (timeline.ts). */
  timeline(tenant: Tenant, conversation: string): Promise<{ turns: TimelineTurn[] }> {
    return conversationTimeline(this.#store, { tenant: tenant.id, conversation }, (head) =>
      conversationEstimator(this.#settings, tenant, head),
    );
  }

  /** Removes compactions: all, one by 1-based position, or all of one source. */
  async reset(
    tenant: Tenant,
    conversation: string,
    selector: { position?: number; source?: "auto" | "manual" },
  ): Promise<{ removed: (Compaction & { position: number })[] }> {
    const ref = { tenant: tenant.id, conversation };
    type Removed = { removed: (Compaction & { position: number })[] };
    return this.#log.update(ref, "reset", async (snapshot): Promise<Decision<Removed>> => {
      requireHead(ref, snapshot.head);
      const stored = await snapshot.compactions();
      const indices = resetSelection(
        stored.map((c) => c.compaction),
        selector,
      );
      const removed = indices.map((i) => ({
        position: i + 1,
        ...(stored[i] as StoredCompaction).compaction,
      }));
      if (indices.length === 0) return { result: { removed } };
      const keys = indices.map((i) => (stored[i] as StoredCompaction).key);
      return { write: { kind: "remove_compactions", keys }, result: { removed } };
    });
  }

  /**
   * Recomputes the head's counters from the stored turns and compactions,
   * each turn's sizes from its events and each band's materialized form
   * that holds from its turns, and reports every number that differs. With
   * `repair`, a drifted head gets the recomputed counters in one write
   * conditional on the head it was checked against (the stored turn sizes
   * and forms are reported, never rewritten).
   */
  async verify(
    tenant: Tenant,
    conversation: string,
    options: { repair?: boolean } = {},
  ): Promise<{ drift: Drift[]; repaired: boolean }> {
    const ref = { tenant: tenant.id, conversation };
    type Verified = { drift: Drift[]; repaired: boolean };
    return this.#log.update(ref, "verify", async (snapshot): Promise<Decision<Verified>> => {
      const head = countersOf(requireHead(ref, snapshot.head));
      const [sizes, compactions, turns, forms] = await Promise.all([
        snapshot.turnSizes(),
        snapshot.compactions(),
        this.#store.readTurns(ref),
        this.#store.listMaterialized(ref),
      ]);
      const stored = storedDrift(head, sizes, compactions, turns);
      const drift = [...stored.all, ...materializedDrift(forms, compactions, turns)];
      if (!options.repair || stored.head.length === 0)
        return { result: { drift, repaired: false } };
      return { write: { kind: "repair_head" }, result: { drift, repaired: true } };
    });
  }

  /** The conversation's own config layer and the effective config. */
  async getConfig(tenant: Tenant, conversation: string) {
    const read = await this.#store.getHead({ tenant: tenant.id, conversation });
    const head = read?.deleting ? undefined : read;
    return {
      conversation: { compaction: { auto: head?.config ?? {} } },
      effective: effectiveConfig(this.#settings, tenant, head),
    };
  }

  /** Replaces the conversation's own config layer (creating the conversation if needed). */
  async putConfig(tenant: Tenant, conversation: string, layer: AutoConfigLayer) {
    const ref = { tenant: tenant.id, conversation };
    const head = await this.#store.getHead(ref);
    if (head?.deleting) throw deletingError(ref);
    runnableConfig(this.runnable, tenant, { ...(head ?? EMPTY_HEAD), config: layer });
    await this.#log.putConfig(ref, layer);
    return this.getConfig(tenant, conversation);
  }

  /**
   * Deletes the conversation: its stream, compactions, config and sizes.
   * Idempotent: nothing happens for a conversation that does not exist, and
   * a delete interrupted earlier is finished. Evaluations still queued for
   * it find no conversation and skip; turns posted while it runs get a 503
   * (contention) and, retried after it, start afresh.
   */
  async deleteConversation(tenant: Tenant, conversation: string): Promise<void> {
    await this.#log.delete({ tenant: tenant.id, conversation });
  }
}
