/**
 * A typed client of the autocompact HTTP API (docs/architecture.md §8), importable as
 * `autocompact/client`: one method per route, each answering the route's body
 * as documented in ./types.ts. It needs only `fetch` (Node 20+, browsers,
 * workers; or the `fetch` option): nothing of the service, no provider SDK.
 *
 * Every non-2xx answer throws a {@link ServiceError} carrying the status and
 * the service's RFC 9457 problem, with the problem's `detail` in its message;
 * a service that cannot be reached throws one with status 0, and a request
 * not answered within the timeout (30 s by default, `timeoutMs`) a
 * {@link RequestTimeoutError}.
 *
 * ```ts
 * const client = new AutocompactClient({ url: "http://127.0.0.1:8787", key });
 * await client.postTurn("conv-1", { turn: 0, events });
 * const { events: view } = await client.projection("conv-1", { afterTurn: 0 });
 * ```
 *
 * Evaluations run after a turn's post is answered. A read with `afterTurn`
 * answers the view as evaluated after that turn: it waits on the service
 * (`after_turn`, `wait`) and asks again on `/problems/evaluation-pending`
 * until its deadline; {@link isEvaluationPending} tells that error apart.
 */

import {
  asProblem,
  isEvaluationPending,
  isRateLimited,
  RequestTimeoutError,
  ServiceError,
} from "./errors.ts";
import { allPages, withCursor } from "./pages.ts";
import { conversationPath, formatQuery, withQuery } from "./paths.ts";
import { TenantSettings } from "./tenant.ts";
import type {
  AppendOutcome,
  CompactionDryRun,
  CompactionRequest,
  Compactions,
  ConfigTree,
  ConversationConfig,
  ConversationList,
  ConversationSummary,
  DeadLetters,
  Events,
  FormatEvents,
  FormatProjection,
  FormatTurnRequest,
  Health,
  ListedCompaction,
  NotificationEndpoint,
  NotificationRequest,
  Projection,
  ProviderFormatIn,
  ProviderFormatName,
  Redriven,
  RegisteredNotificationEndpoint,
  RemovedCompactions,
  ResetRequest,
  Timeline,
  TurnRequest,
  Verification,
  Warning,
} from "./types.ts";
import { HeldViews, withSince } from "./views.ts";
import { reported } from "./warnings.ts";

export { isEvaluationPending, isRateLimited, RequestTimeoutError, ServiceError } from "./errors.ts";
export type { TenantSettings } from "./tenant.ts";
export type * from "./types.ts";

/** How to reach the service. */
export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8787` (a trailing `/` is ignored). */
  readonly url: string;
  /** The tenant's API key, sent as `Authorization: Bearer <key>`. */
  readonly key: string;
  /** The `fetch` to use (default: the global one), e.g. an app's in-process `request`. */
  readonly fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Pauses between the retries of a read with `afterTurn` (default: a timer); for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The time in milliseconds that the deadline of a read with `afterTurn` counts in (default: `Date.now`); for tests. */
  readonly now?: () => number;
  /**
   * How long one request may take, answer body included, in milliseconds
   * (default 30,000), on top of the seconds it asks the service to `wait`.
   * One that takes longer is aborted and throws a {@link RequestTimeoutError}.
   */
  readonly timeoutMs?: number;
  /** Aborts every request of the client (with the signal's reason) once it fires. */
  readonly signal?: AbortSignal;
  /** Hears each {@link Warning} of `postTurn`, `conversation` and `projection` (a paged read once), and the conversation's id. */
  readonly onWarning?: (warning: Warning, conversation: string) => void;
}

/** The longest `wait` the service takes, in seconds (API Gateway gives up at 30 s). */
export const MAX_WAIT_SECONDS = 25;
/** The default total deadline of a read with `afterTurn`, in milliseconds. */
export const DEFAULT_DEADLINE_MS = 30_000;
/** The default timeout of one request, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The pause before asking again when a 503 has no `Retry-After`, in milliseconds. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * Reads the view as evaluated after a turn. Evaluations run asynchronously,
 * so a read right after posting turn N may find its evaluation still to come;
 * with `afterTurn: N` the answer reflects an evaluation that decided (fired
 * or skipped) on a stored state holding turn N or a later one.
 */
export interface AfterTurnOptions {
  /**
   * The turn whose evaluation the view must reflect (`after_turn`). The read
   * waits for it, asking again on `/problems/evaluation-pending` (after the
   * answer's `Retry-After`) until `deadlineMs` is spent, then throws the last
   * {@link ServiceError} ({@link isEvaluationPending} is true of it). A turn
   * not stored yet is a 400.
   */
  readonly afterTurn?: number;
  /**
   * Seconds each request waits on the service (`wait`, at most 25), never
   * past the deadline. Default: 25, or what is left of the deadline if less.
   */
  readonly wait?: number;
  /** The total time to wait, every request and pause included, in milliseconds (default 30,000). */
  readonly deadlineMs?: number;
}

/** Options of {@link AutocompactClient.postTurn}. */
export interface PostTurnOptions {
  /**
   * Headers computed from the exact body text that is sent, e.g. the
   * Standard Webhooks `webhook-id`, `webhook-timestamp` and `webhook-signature`
   * of a tenant that must sign its turn posts.
   */
  readonly sign?: (text: string) => Record<string, string>;
  /**
   * Seconds to wait for the turn's evaluation (`?wait=S`, at most 25): the
   * answer then carries its `decision` (the band fired, or why it skipped;
   * a newer turn's when this turn's evaluation was stale). A wait that runs
   * out throws a 503 {@link ServiceError} ({@link isEvaluationPending}); the
   * turn is stored all the same.
   */
  readonly wait?: number;
}

/** Reads a view as JP events (the default). */
export interface JpFormatOption {
  readonly format?: "jp";
}

/** Reads a view as a provider's messages (in the format's field: `input` for `openai-responses`). */
export interface ProviderFormatOption<F extends ProviderFormatName = ProviderFormatName> {
  readonly format: F;
}

/** A client of one service, with one tenant's key. */
export class AutocompactClient {
  readonly #base: string;
  readonly #key: string;
  readonly #fetch: (input: string, init: RequestInit) => Promise<Response>;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #onWarning: ClientOptions["onWarning"];
  readonly #views = new HeldViews();

  constructor(options: ClientOptions) {
    const base = options.url.replace(/\/+$/, "");
    if (!/^https?:\/\//.test(base)) {
      throw new TypeError(`the service URL must start with http:// or https:// (got "${base}")`);
    }
    this.#base = base;
    this.#key = options.key;
    // Looked up at each call, so a global fetch replaced later (tests, polyfills) is used.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#now = options.now ?? Date.now;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0 && timeoutMs <= 2_147_483_647)) {
      throw new TypeError(`timeoutMs must be from 1 to 2147483647 (got ${timeoutMs})`);
    }
    this.#timeoutMs = timeoutMs;
    this.#signal = options.signal;
    this.#onWarning = options.onWarning;
  }

  /** The tenant's own settings: its default config layer and its models (./tenant.ts). */
  readonly tenant = new TenantSettings((method, path, body) =>
    this.#request(method, path, body === undefined ? {} : { body }),
  );

  /** The service's base URL, without a trailing `/`. */
  get url(): string {
    return this.#base;
  }

  /**
   * `POST /v1/conversations/{id}/turns`: stores a completed turn, given as JP
   * events or in a provider format, and enqueues its evaluation. Turns are
   * posted in order from 0; posting a stored turn again with the same content
   * answers `replayed`. A gap or different content is a 409 whose problem's
   * `expected_turn` is the turn to post next. With `wait`, the answer comes
   * once the turn's evaluation has decided, with the `decision`.
   */
  postTurn<Message = unknown>(
    conversation: string,
    body: TurnRequest | FormatTurnRequest<Message>,
    options: PostTurnOptions = {},
  ): Promise<AppendOutcome> {
    const query = options.wait === undefined ? "" : `?wait=${encodeURIComponent(options.wait)}`;
    return reported<AppendOutcome>(
      conversation,
      this.#request("POST", `${conversationPath(conversation)}/turns${query}`, {
        body,
        ...(options.sign ? { sign: options.sign } : {}),
        ...(options.wait === undefined ? {} : { waitSeconds: options.wait }),
      }),
      this.#onWarning,
    );
  }

  /**
   * `GET /v1/conversations`: one page of the tenant's conversations, most
   * recently active first (`limit` per page, 1 to 100, default 20). Pass the
   * page's `next_cursor` as `cursor` for the next one; it is null on the last.
   */
  listConversations(options: { limit?: number; cursor?: string } = {}): Promise<ConversationList> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.cursor !== undefined) query.set("cursor", options.cursor);
    return this.#request("GET", withQuery("/v1/conversations", query));
  }

  /**
   * `GET /v1/conversations/{id}`: turn count, evaluation progress, estimate
   * and compactions; with `afterTurn`, as they are once that turn's
   * evaluation has decided (see {@link AfterTurnOptions}).
   */
  conversation(conversation: string, options: AfterTurnOptions = {}): Promise<ConversationSummary> {
    const read = this.#read<ConversationSummary>(
      conversationPath(conversation),
      new URLSearchParams(),
      options,
    );
    return reported(conversation, read, this.#onWarning);
  }

  /** `GET …/events`: the raw stream, compactions included (with their source). */
  events(conversation: string, options?: JpFormatOption): Promise<Events>;
  /** `GET …/events?format=X`: the raw stream as the provider's messages (no compactions). */
  events<Message = unknown>(
    conversation: string,
    options: ProviderFormatOption<ProviderFormatIn<"messages">>,
  ): Promise<FormatEvents<Message, ProviderFormatIn<"messages">>>;
  /** `GET …/events?format=openai-responses`: the raw stream as Responses `input` items. */
  events<Message = unknown>(
    conversation: string,
    options: ProviderFormatOption<ProviderFormatIn<"input">>,
  ): Promise<FormatEvents<Message, ProviderFormatIn<"input">>>;
  /** `GET …/events?format=X` for a format known at run time only. */
  events<Message = unknown>(
    conversation: string,
    options: ProviderFormatOption,
  ): Promise<FormatEvents<Message>>;
  events(
    conversation: string,
    options: JpFormatOption | ProviderFormatOption = {},
  ): Promise<Events | FormatEvents> {
    const path = `${conversationPath(conversation)}/events`;
    const query = formatQuery(options);
    return allPages(
      () => this.#request("GET", withQuery(path, query)),
      (cursor) => this.#request("GET", withQuery(path, withCursor(query, cursor))),
    );
  }

  /**
   * `GET …/projection`: the compacted view for the next LLM call, and each turn's origin; with
   * `afterTurn`, as evaluated after that turn ({@link AfterTurnOptions}). The view read last is kept:
   * the next read asks with its `since` and is sent only what changed (./views.ts).
   */
  projection(
    conversation: string,
    options?: JpFormatOption & AfterTurnOptions,
  ): Promise<Projection>;
  /** `GET …/projection?format=X`: the compacted view as the provider's messages. */
  projection<Message = unknown>(
    conversation: string,
    options: ProviderFormatOption<ProviderFormatIn<"messages">> & AfterTurnOptions,
  ): Promise<FormatProjection<Message, ProviderFormatIn<"messages">>>;
  /** `GET …/projection?format=openai-responses`: the compacted view as Responses `input` items. */
  projection<Message = unknown>(
    conversation: string,
    options: ProviderFormatOption<ProviderFormatIn<"input">> & AfterTurnOptions,
  ): Promise<FormatProjection<Message, ProviderFormatIn<"input">>>;
  /** `GET …/projection?format=X` for a format known at run time only. */
  projection<Message = unknown>(
    conversation: string,
    options: ProviderFormatOption & AfterTurnOptions,
  ): Promise<FormatProjection<Message>>;
  projection(
    conversation: string,
    options: (JpFormatOption | ProviderFormatOption) & AfterTurnOptions = {},
  ): Promise<Projection | FormatProjection> {
    const [path, query] = [`${conversationPath(conversation)}/projection`, formatQuery(options)];
    const read = this.#views.read(`${conversation}?${query}`, (since) =>
      allPages<Projection | FormatProjection>(
        () => this.#read(path, withSince(query, since), options),
        (cursor) => this.#request("GET", withQuery(path, withCursor(query, cursor))),
      ),
    );
    return reported(conversation, read, this.#onWarning);
  }

  /** `GET …/compactions`: the compactions in stream order, with their 1-based positions. */
  compactions(conversation: string): Promise<Compactions> {
    return this.#request("GET", `${conversationPath(conversation)}/compactions`);
  }

  /** `GET …/timeline`: per stored turn, raw and projected size, threshold, band fired or skip reason. */
  timeline(conversation: string): Promise<Timeline> {
    return this.#request("GET", `${conversationPath(conversation)}/timeline`);
  }

  /**
   * `POST …/compactions`: adds a manual compaction from a DSL spec or a rule.
   * With `idempotencyKey` (sent as `Idempotency-Key`), a retry of the same
   * request under the same key (after a timeout, say) answers the first
   * result and adds nothing; the key with another request is a 409.
   */
  compact(
    conversation: string,
    request: CompactionRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<ListedCompaction> {
    return this.#request("POST", `${conversationPath(conversation)}/compactions`, {
      body: request,
      ...idempotencyHeader(options.idempotencyKey),
    });
  }

  /**
   * `POST …/compactions?dry_run=true`: the compaction {@link compact} would
   * add (at the position it would take; a summary is generated as it would
   * be) and the estimate before and after it. Nothing is written.
   */
  previewCompaction(
    conversation: string,
    request: CompactionRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<CompactionDryRun> {
    return this.#request("POST", `${conversationPath(conversation)}/compactions?dry_run=true`, {
      body: request,
      ...idempotencyHeader(options.idempotencyKey),
    });
  }

  /**
   * `DELETE …/compactions[?source=]` or `DELETE …/compactions/{position}`:
   * removes every compaction, those of one source, or the one at a 1-based
   * position. The raw events are never touched.
   */
  reset(conversation: string, request: ResetRequest = {}): Promise<RemovedCompactions> {
    const path = `${conversationPath(conversation)}/compactions`;
    if ("position" in request) {
      return this.#request("DELETE", `${path}/${encodeURIComponent(String(request.position))}`);
    }
    const query = request.source ? `?source=${encodeURIComponent(request.source)}` : "";
    return this.#request("DELETE", `${path}${query}`);
  }

  /** `GET …/config`: the conversation's auto config layer and the effective config. */
  getConfig(conversation: string): Promise<ConversationConfig> {
    return this.#request("GET", `${conversationPath(conversation)}/config`);
  }

  /** `PUT …/config`: sets the conversation's auto config layer. */
  putConfig(conversation: string, tree: ConfigTree): Promise<ConversationConfig> {
    return this.#request("PUT", `${conversationPath(conversation)}/config`, { body: tree });
  }

  /** `DELETE /v1/conversations/{id}`: removes everything of it; idempotent. */
  async deleteConversation(conversation: string): Promise<void> {
    await this.#request("DELETE", conversationPath(conversation));
  }

  /**
   * `POST …/verify[?repair=true]`: recomputes the head's counters from the
   * stored turns and compactions and reports drift; with `repair`, a drifted
   * head gets the recomputed counters.
   */
  verify(conversation: string, options: { repair?: boolean } = {}): Promise<Verification> {
    const query = options.repair ? "?repair=true" : "";
    return this.#request("POST", `${conversationPath(conversation)}/verify${query}`);
  }

  /**
   * `PUT /v1/notifications`: registers (or replaces) the tenant's
   * notification endpoint; the answer carries its signing secret, shown only
   * this once.
   */
  putNotifications(request: NotificationRequest): Promise<RegisteredNotificationEndpoint> {
    return this.#request("PUT", "/v1/notifications", { body: request });
  }

  /** `GET /v1/notifications`: the tenant's endpoint, without its secret (a 404 when none is registered). */
  getNotifications(): Promise<NotificationEndpoint> {
    return this.#request("GET", "/v1/notifications");
  }

  /** `DELETE /v1/notifications`: removes the tenant's endpoint; idempotent. */
  async deleteNotifications(): Promise<void> {
    await this.#request("DELETE", "/v1/notifications");
  }

  /** `GET /healthz`. */
  health(): Promise<Health> {
    return this.#request("GET", "/healthz");
  }

  /** `GET /v1/openapi.json`: the OpenAPI 3.1 document of the API. */
  openApi(): Promise<Record<string, unknown>> {
    return this.#request("GET", "/v1/openapi.json");
  }

  /**
   * `GET /local/dead-letters`: the local runtime's dead letters, each with its
   * conversation's last failure (`npm start` only; the client's key must be
   * the dev key).
   */
  deadLetters(): Promise<DeadLetters> {
    return this.#request("GET", "/local/dead-letters");
  }

  /** `POST /local/dead-letters/redrive`: moves the local dead letters back to the queue. */
  redriveDeadLetters(): Promise<Redriven> {
    return this.#request("POST", "/local/dead-letters/redrive");
  }

  /**
   * A `GET` of `path` with `query`; with `afterTurn`, sends `after_turn` and
   * `wait` and asks again on `evaluation-pending` until the deadline.
   */
  async #read<T>(path: string, query: URLSearchParams, options: AfterTurnOptions): Promise<T> {
    const { afterTurn } = options;
    if (afterTurn === undefined) {
      if (options.wait !== undefined || options.deadlineMs !== undefined) {
        throw new TypeError(
          "wait and deadlineMs need afterTurn: the turn whose evaluation to wait for",
        );
      }
      return this.#request("GET", withQuery(path, query));
    }
    const deadline = this.#now() + (options.deadlineMs ?? DEFAULT_DEADLINE_MS);
    for (;;) {
      const leftSeconds = Math.max(0, deadline - this.#now()) / 1000;
      const wait = Math.min(options.wait ?? MAX_WAIT_SECONDS, leftSeconds);
      query.set("after_turn", String(afterTurn));
      // Tenths of a second, rounded down: never past the deadline, never in exponent notation.
      const waitSeconds = Math.floor(Math.max(0, wait) * 10) / 10;
      query.set("wait", String(waitSeconds));
      const answer = await this.#exchange<T>("GET", withQuery(path, query), { waitSeconds });
      if (answer.ok) return answer.body;
      // Not decided yet, or the tenant's waiting reads are all held: ask again after Retry-After.
      const waitingFull =
        isRateLimited(answer.error) && answer.error.problem.type === "/problems/rate-limited";
      if (!isEvaluationPending(answer.error) && !waitingFull) throw answer.error;
      const pause = retryAfterMs(answer.retryAfter, this.#now());
      // Asking again would start at or past the deadline: the wait is spent.
      if (deadline - this.#now() <= pause) throw answer.error;
      await this.#sleep(pause);
    }
  }

  /** Sends one request; answers the parsed body (`undefined` when empty), or throws a {@link ServiceError}. */
  async #request<T>(method: string, path: string, options: ExchangeOptions = {}): Promise<T> {
    const answer = await this.#exchange<T>(method, path, options);
    if (!answer.ok) throw answer.error;
    return answer.body;
  }

  /**
   * Sends one request: the parsed body (`undefined` when empty), or the
   * {@link ServiceError} of a non-2xx answer beside its `Retry-After`.
   * A service that cannot be reached, a timeout, an aborted client or a
   * failing `sign` throws.
   */
  async #exchange<T>(
    method: string,
    path: string,
    options: ExchangeOptions = {},
  ): Promise<
    { ok: true; body: T } | { ok: false; error: ServiceError; retryAfter: string | null }
  > {
    const text = options.body === undefined ? undefined : JSON.stringify(options.body);
    // Outside the try: a failing `sign` is the caller's error, not an unreachable service.
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#key}`,
      ...(text === undefined ? {} : { "content-type": "application/json" }),
      ...(text !== undefined && options.sign ? options.sign(text) : {}),
      ...options.headers,
    };
    // The timeout runs on top of what the request asks the service to wait.
    const timeoutMs = this.#timeoutMs + (options.waitSeconds ?? 0) * 1000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = this.#signal ? AbortSignal.any([timeout, this.#signal]) : timeout;
    /** The error of a failed fetch or body read: the timeout's, the caller's abort, or unreachable. */
    const failure = (error: unknown): Error => {
      if (this.#signal?.aborted) return this.#signal.reason as Error;
      if (timeout.aborted) {
        return new RequestTimeoutError(
          `${method} ${path}: no answer from ${this.#base} within ${timeoutMs / 1000} s (the client's timeout)`,
          timeoutMs,
        );
      }
      // Node's fetch says "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND, …).
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      return new ServiceError(
        `cannot reach ${this.#base} (${reason}): is the service running (npm start)?`,
        0,
      );
    };
    let response: Response;
    let answer: string;
    try {
      response = await this.#fetch(`${this.#base}${path}`, {
        method,
        headers,
        signal,
        ...(text === undefined ? {} : { body: text }),
      });
      answer = await response.text();
    } catch (error) {
      throw failure(error);
    }
    const retryAfter = response.headers.get("retry-after");
    let parsed: unknown;
    try {
      parsed = answer === "" ? undefined : JSON.parse(answer);
    } catch {
      const error = new ServiceError(
        `${method} ${path}: ${response.status} with a non-JSON body`,
        response.status,
      );
      return { ok: false, error, retryAfter };
    }
    if (!response.ok) {
      const problem = asProblem(parsed);
      // The API gateway's throttling answer is `{"message"}`, not a problem.
      const message = (parsed as { message?: unknown } | undefined)?.message;
      const detail =
        problem?.detail ?? (typeof message === "string" ? message : response.statusText);
      const error = new ServiceError(
        `${method} ${path}: ${response.status} ${detail}`,
        response.status,
        problem,
      );
      return { ok: false, error, retryAfter };
    }
    return { ok: true, body: parsed as T };
  }
}

/** What one request sends besides its method and path. */
interface ExchangeOptions {
  readonly body?: unknown;
  readonly sign?: (text: string) => Record<string, string>;
  /** The `wait` the request asks of the service, in seconds: added to the timeout. */
  readonly waitSeconds?: number;
  readonly headers?: Record<string, string>;
}

/** The `Idempotency-Key` header of a request, when it has a key. */
function idempotencyHeader(key: string | undefined): { headers?: Record<string, string> } {
  return key === undefined ? {} : { headers: { "idempotency-key": key } };
}

/** A `Retry-After` in milliseconds: delay-seconds, or an HTTP date; else the default. */
function retryAfterMs(header: string | null, now: number): number {
  if (header === null) return DEFAULT_RETRY_AFTER_MS;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? DEFAULT_RETRY_AFTER_MS : Math.max(0, at - now);
}
