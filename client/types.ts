/**
 * The bodies of the autocompact HTTP API (docs/architecture.md §8, §15) as plain
 * TypeScript types, for {@link AutocompactClient} and its users. They are
 * written by hand so that the client (and its published declarations)
 * depends on nothing of the service (no zod, no hono); test/client/types.test.ts
 * checks at compile time (`npm run typecheck`) that each type and the route
 * schema it stands for (functions/api/schemas.ts for requests,
 * response-schemas.ts, problem-schemas.ts) are each assignable to the other,
 * so the two cannot drift apart.
 *
 * Provider messages (`openai-chat`, `anthropic-messages`) are kept generic
 * (`unknown` unless a type parameter says more): the client does not depend
 * on provider SDKs.
 */

// Events: the JP-compatible stream (docs/architecture.md §4), in events.ts.
export type * from "./events.ts";

import type { CompactionEvent, CompactionSource, EventInput, JpEvent } from "./events.ts";

// ---------------------------------------------------------------------------
// Formats (docs/architecture.md §15)

/** The provider formats a turn can be posted and read in besides JP events. */
export type ProviderFormatName =
  | "openai-chat"
  | "openai-responses"
  | "anthropic-messages"
  | "ai-sdk";

/**
 * The body field that carries a provider format's messages, in posts and
 * answers alike: the provider's own request parameter (`input` for the
 * OpenAI Responses API, `messages` for the others).
 */
export type MessagesField<F extends ProviderFormatName = ProviderFormatName> =
  F extends "openai-responses" ? "input" : "messages";

/** The provider formats whose messages travel in `field`. */
export type ProviderFormatIn<Field extends MessagesField> = {
  [F in ProviderFormatName]: MessagesField<F> extends Field ? F : never;
}[ProviderFormatName];

/** `{messages: Message[]}`, or `{input: Message[]}` for `openai-responses`. */
export type FormatMessages<F extends ProviderFormatName, Message = unknown> = {
  [K in MessagesField<F>]: Message[];
};

/** Every format a view can be read in: `jp` (the stored form, the default) or a provider format. */
export type FormatName = "jp" | ProviderFormatName;

// ---------------------------------------------------------------------------
// Requests

/** The model a turn was produced with. */
export interface ModelInfo {
  id?: string;
  context_window?: number;
}

/** `POST /v1/conversations/{id}/turns` with JP events. */
export interface TurnRequest {
  /** Turns are posted in order from 0. */
  turn: number;
  model?: ModelInfo;
  events: EventInput[];
  usage?: TurnUsage;
}

/**
 * What the provider reported for the turn's last model call: kept with the
 * turn to calibrate the estimate, never in its events.
 */
export interface TurnUsage {
  /** Every input token of the call, cached ones included. */
  input_tokens: number;
  output_tokens?: number;
  /** The part of `input_tokens` read from the provider's prompt cache. */
  cached_input_tokens?: number;
  /** How many model calls the turn made. */
  calls?: number;
}

/** The fields of a turn post in a provider format besides `format` and its messages. */
export interface FormatTurnFields {
  turn: number;
  model?: ModelInfo;
  usage?: TurnUsage;
  /**
   * The provider SDK's response object of the turn's last call (a Chat
   * `ChatCompletion`, a Responses `Response`, an Anthropic `Message`, an AI
   * SDK `generateText` result): the service reads its usage; not with `usage`.
   */
  response?: unknown;
  /** Drop leading system/developer messages instead of refusing the turn (422). */
  drop_system?: boolean;
  /** The timestamp of the turn's events (RFC 3339; default: the service's clock). */
  timestamp?: string;
}

/**
 * `POST /v1/conversations/{id}/turns` in a provider format: the turn's
 * messages as the platform holds them for its provider, in the format's
 * field ({@link MessagesField}); one member per format `F`.
 */
export type FormatTurnRequest<
  Message = unknown,
  F extends ProviderFormatName = ProviderFormatName,
> = F extends ProviderFormatName
  ? FormatTurnFields & { format: F } & FormatMessages<F, Message>
  : never;

/** Either form of a turn post. */
export type AnyTurnRequest<Message = unknown> = TurnRequest | FormatTurnRequest<Message>;

/** `POST /v1/conversations/{id}/compactions`: a DSL spec (`"r+t:..-3"`) or a rule. */
export type CompactionRequest = { spec: string } | { rule: RuleLayer };

/** Tool call modes of a rule (RFD 064). */
export type ToolCallMode = "strip" | "strip-requests" | "strip-responses" | "omit";

/** The summarizer settings of a rule: a `summary` block makes a rule summarize. */
export interface SummaryRuleConfig {
  instructions?: string;
  model?: { id: string };
}

/** One layer of `auto.rule`: every key optional. */
export interface RuleLayer {
  keep_first?: number;
  keep_last?: number;
  reasoning?: "strip" | null;
  tool_calls?: ToolCallMode | null;
  summary?: SummaryRuleConfig | null;
}

/** One layer of `conversation.compaction.auto`: every key optional. */
export interface AutoConfigLayer {
  enabled?: boolean;
  trigger_ratio?: number;
  min_turns?: number;
  rule?: RuleLayer;
  estimator?: EstimatorSetting;
  reserve_tokens?: number;
  min_gain_tokens?: number;
  min_band_turns?: number;
  /** `"idle"` defers a firing below `hard_ratio` until the conversation rests `idle_seconds` (30–3600). */
  when?: FiringWhen;
  idle_seconds?: number;
  hard_ratio?: number;
}

/** When a firing below `hard_ratio` happens: right after the turn (D50) or once the conversation rests. */
export type FiringWhen = "turn" | "idle";

/** How the trigger turns characters into tokens: D50's chars / 4, a fit to reported usage, or the fit once 3 turns carry usage. */
export type EstimatorSetting = "chars" | "calibrated" | "auto";

/** `PUT /v1/conversations/{id}/config`: the D50 config tree. */
export interface ConfigTree {
  conversation: { compaction: { auto: AutoConfigLayer } };
}

/** What `DELETE …/compactions` removes: all of them, all of one source, or the one at a position. */
export type ResetRequest = { source?: CompactionSource } | { position: number };

// ---------------------------------------------------------------------------
// Responses

/** `POST …/turns`: 202 `created`, or 200 `replayed` (an identical turn was stored already). */
export interface AppendOutcome extends EvaluationProgress {
  status: "created" | "replayed";
  turn: number;
  turn_count: number;
  evaluation_enqueued: boolean;
  /** A {@link FormatTurnRequest} with `drop_system`: how many leading system/developer messages were dropped. */
  dropped_system?: number;
  /** With `wait`: what the evaluation that covered the posted turn decided. */
  decision?: EvaluationDecision;
  /** What keeps compaction from doing its job, as of this answer (see {@link Warning}). */
  warnings: Warning[];
}

/** A warning's code: each is described once, in docs/architecture.md §8 (Warnings). */
export type WarningCode =
  | "auto_disabled"
  | "context_window_unknown"
  | "over_window"
  | "still_over_threshold";

/**
 * What keeps automatic compaction from doing its job (compaction turned off,
 * an unknown window, a view past the window or left over the threshold by
 * its last band), with what to do in `detail`. Answers about a
 * conversation's state always carry `warnings`, empty when there are none.
 */
export interface Warning {
  code: WarningCode;
  /** What it means and the one thing to do. */
  detail: string;
}

/** How far evaluations had got when an answer was made. */
export interface EvaluationProgress {
  /** The latest turn whose evaluation finished (fired or skipped for any reason, `stale` included), or null. */
  evaluated_through: number | null;
  /** The latest turn an evaluation decided on a state holding it (fired or skipped, not `stale`), or null. */
  decided_through: number | null;
  /** While the newest turn's firing waits for the conversation to rest (`when: "idle"`): when its band is due. */
  deferred_until?: string;
}

/** Why an evaluation did not fire. */
export type SkipReason =
  | "disabled"
  | "min_turns"
  | "context_window_unknown"
  | "under_threshold"
  | "empty_range"
  | "short_range"
  | "low_gain"
  | "deferred_until_idle";

/** What an evaluation decided: the band it fired, or why it skipped; `turn` is the turn it ran after. */
export type EvaluationDecision =
  | { turn: number; outcome: "fired"; band: { key: string; from_turn: number; to_turn: number } }
  | {
      turn: number;
      outcome: "skipped";
      reason: SkipReason;
      /** With `low_gain`: the estimated tokens the band would have removed. */
      gain_tokens?: number;
      /** With `deferred_until_idle`: when the idle re-evaluation is due (RFC 3339). */
      deferred_until?: string;
    };

/** A compaction as listed, with its 1-based position in stream order. */
export interface ListedCompaction extends CompactionEvent {
  position: number;
}

/** `GET /v1/conversations/{id}`. */
export interface ConversationSummary extends EvaluationProgress {
  turn_count: number;
  /** In the estimator's tokens: its fitted overhead included, the config's reserve not. */
  estimated_tokens: number;
  estimator: Estimator;
  compactions: ListedCompaction[];
  warnings: Warning[];
}

/** How a conversation's estimate turns characters into tokens: chars / 4, or fitted to reported usage. */
export interface Estimator {
  kind: "chars" | "calibrated";
  tokens_per_char: number;
  overhead_tokens: number;
  turns_with_usage: number;
}

/** `GET …/events`: the raw stream, compactions included (with their source). */
export interface Events {
  events: JpEvent[];
  /** More turns follow (a page of the service's answer): the client's reads page through them and never return it. */
  next_cursor?: string;
}

/**
 * `GET …/events?format=X`: the raw stream as the provider's messages
 * (compaction entries are left out: read them at `/compactions`).
 */
export type FormatEvents<
  Message = unknown,
  F extends ProviderFormatName = ProviderFormatName,
> = F extends ProviderFormatName
  ? { format: F; next_cursor?: string } & FormatMessages<F, Message>
  : never;

/** Where a turn of the projected view comes from: kept as is, or a summary of a range. */
export type ProjectionTurn = { kept: number } | { summary: { from: number; to: number } };

/**
 * What an answer to `since` replaces in the view it named: its items
 * (`events`, `messages` or `input`) `[from, to)` and its origins `[from, to)`.
 * The client applies it to the view it holds and never returns it.
 */
export interface ViewDelta {
  since: string;
  items: { from: number; to: number };
  turns: { from: number; to: number };
}

/** `GET …/projection`: the compacted view for the next LLM call, and each turn's origin. */
export interface Projection extends EvaluationProgress {
  events: JpEvent[];
  turns: ProjectionTurn[];
  estimated_tokens: number;
  warnings: Warning[];
  /** The version of the whole view (its `ETag`): `since` with it answers only what changed. */
  etag: string;
  /** On an answer to `since` only (see {@link ViewDelta}): never in what the client returns. */
  delta?: ViewDelta;
  /** More turns follow (see {@link Events}): never in what the client returns. */
  next_cursor?: string;
}

/** `GET …/projection?format=X`: the compacted view as the provider's messages. */
export type FormatProjection<
  Message = unknown,
  F extends ProviderFormatName = ProviderFormatName,
> = F extends ProviderFormatName
  ? EvaluationProgress & {
      format: F;
      estimated_tokens: number;
      turns: ProjectionTurn[];
      warnings: Warning[];
      etag: string;
      delta?: ViewDelta;
      next_cursor?: string;
    } & FormatMessages<F, Message>
  : never;

/** `GET …/compactions`. */
export interface Compactions {
  compactions: ListedCompaction[];
}

/** `DELETE …/compactions[/{position}]`. */
export interface RemovedCompactions {
  removed: ListedCompaction[];
}

/** The resolved `conversation.compaction.auto`. */
export interface EffectiveConfig {
  enabled: boolean;
  trigger_ratio: number;
  min_turns: number;
  rule: {
    keep_first: number;
    keep_last: number;
    reasoning: "strip" | null;
    tool_calls: ToolCallMode | null;
    summary: SummaryRuleConfig | null;
  };
  estimator: EstimatorSetting;
  reserve_tokens: number;
  min_gain_tokens: number;
  min_band_turns: number;
  when: FiringWhen;
  idle_seconds: number;
  hard_ratio: number;
}

/** A conversation as `GET /v1/conversations` lists it. */
export interface ListedConversation {
  id: string;
  turn_count: number;
  estimated_tokens: number;
  /** The latest turn's model's window (its `context_window`, else the catalog's); null when unknown. */
  context_window: number | null;
  /** `estimated_tokens / context_window`; null when the window is unknown. */
  utilization: number | null;
  /** How many compactions of each source it has. */
  bands: { auto: number; manual: number };
  /** The timestamp of the latest automatic band written (kept after a reset); null when none was. */
  last_fired_at: string | null;
  warnings: Warning[];
}

/** `GET /v1/conversations`: one page of the tenant's conversations, most recently active first. */
export interface ConversationList {
  conversations: ListedConversation[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

/** One turn of `GET …/timeline`: its sizes and what the evaluation after it did. */
export interface TimelineTurn {
  turn: number;
  /** The estimate of turns 0..turn with no compaction (a running total). */
  raw_tokens: number;
  /** The estimate the evaluation after this turn saw, before its own band; null where unknown. */
  projected_tokens: number | null;
  /** `context_window * trigger_ratio` as that evaluation saw it; null where unknown. */
  threshold: number | null;
  /** The band that evaluation appended; its `position` is null once the band has been removed. */
  fired: { position: number | null; from_turn: number; to_turn: number; source: "auto" } | null;
  /** Why that evaluation did not fire; null when it fired or is unknown. */
  skip_reason: SkipReason | null;
  /** With `low_gain`: the estimated tokens the band would have removed. */
  gain_tokens?: number;
  /** With `deferred_until_idle`: when the idle re-evaluation is due (RFC 3339). */
  deferred_until?: string;
}

/** `GET …/timeline`: one entry per stored turn. */
export interface Timeline {
  turns: TimelineTurn[];
}

/** `POST …/compactions?dry_run=true`: the compaction that would be added, and the estimate before and after it. */
export interface CompactionDryRun {
  compaction: ListedCompaction;
  estimated_tokens_before: number;
  estimated_tokens_after: number;
}

/** `GET`/`PUT …/config`: the conversation's layer (empty if none) and the effective config. */
export interface ConversationConfig {
  conversation: { compaction: { auto: AutoConfigLayer } };
  effective: EffectiveConfig;
}

/** `GET`/`PUT /v1/tenant/models`: the tenant's context windows in tokens, by model id. */
export interface TenantModels {
  models: Record<string, number>;
}

/** One stored number that differs from its recomputed value. */
export interface Drift {
  /** A head counter (`turn_count`, …) or a stored turn size (`turns[3].size.tool_responses`). */
  field: string;
  stored: number;
  expected: number;
}

/** `POST …/verify`. */
export interface Verification {
  drift: Drift[];
  /** Whether the head's counters were rewritten (only with `repair`). */
  repaired: boolean;
}

/** The events a notification endpoint can receive (docs/architecture.md §16). */
export type NotificationType =
  | "compaction.fired"
  | "compaction.still_over_threshold"
  | "compactions.reset";

/** `PUT /v1/notifications`: where to POST the events, and which (all of them when absent). */
export interface NotificationRequest {
  url: string;
  events?: NotificationType[];
}

/** `GET /v1/notifications`: the tenant's endpoint, without its secret. */
export interface NotificationEndpoint {
  url: string;
  events?: NotificationType[];
}

/** `PUT /v1/notifications`: the endpoint stored, with the Standard Webhooks secret (`whsec_…`) shown only here. */
export interface RegisteredNotificationEndpoint extends NotificationEndpoint {
  secret: string;
}

/** `GET /healthz`. */
export interface Health {
  ok: true;
}

/** One located problem of an invalid request. */
export interface ProblemIssue {
  pointer?: string;
  detail: string;
}

/** An RFC 9457 problem document; extensions (`expected_turn`, …) are kept. */
export interface Problem {
  /** `/problems/<slug>`. */
  type: string;
  title: string;
  status: number;
  /** What went wrong and how to fix it. */
  detail: string;
  /** Each problem of an invalid request, located by JSON pointer (the first 100). */
  errors?: ProblemIssue[];
  /** How many problems are not listed in `errors`. */
  errors_omitted?: number;
  [key: string]: unknown;
}

/** The 409 of a turn post: `expected_turn` is the turn to post next. */
export interface TurnConflictProblem extends Problem {
  expected_turn: number;
}

/**
 * The 503 of a read with `after_turn` (or a post with `wait`) whose wait ran
 * out before an evaluation had decided on a state holding `after_turn`:
 * `evaluated_through` and `decided_through` say how far evaluations had got.
 * The answer's `Retry-After` says when to ask again.
 */
export interface EvaluationPendingProblem extends Problem, EvaluationProgress {
  type: "/problems/evaluation-pending";
  /** The turn whose evaluation the request waited for. */
  after_turn: number;
}

/**
 * The 429 of a tenant over one of its limits on the instance that answered:
 * its requests a second, or its concurrent waiting reads (`limit`). Retry
 * after `retry_after` seconds (the answer's `Retry-After`).
 */
export interface RateLimitedProblem extends Problem {
  type: "/problems/rate-limited";
  limit: "requests_per_second" | "waiting_reads";
  retry_after: number;
}

/**
 * The 429 of a manual or dry-run summary once the tenant's summary tokens of
 * the UTC day are used up: they resume at `resets_at` (the next UTC midnight).
 */
export interface SummaryBudgetProblem extends Problem {
  type: "/problems/summary-budget";
  summary_tokens_per_day: number;
  summary_tokens_used: number;
  resets_at: string;
}

/** What the deployed stack's API gateway answers when it throttles (429; not a problem). */
export interface GatewayMessage {
  message: string;
}

// ---------------------------------------------------------------------------
// The local runtime's admin routes (`npm start` only; the dev key)

/** A conversation's last failed evaluation, as the compactor recorded it. */
export interface EvaluationFailure {
  turn: number;
  /** The error's class name (e.g. `SummaryTimeoutError`). */
  error: string;
  /** Its message, at most 1024 characters. */
  message: string;
  /** When it failed (ISO 8601). */
  at: string;
}

/** One dead letter of the evaluation queue, beside its conversation's last failure. */
export type DeadLetterEntry = {
  message_id: string;
  receive_count: number;
  sent_at: string;
} & (
  | {
      tenant: string;
      conversation: string;
      turn: number;
      last_failure: EvaluationFailure | null;
    }
  | { invalid: string; body: string }
);

/** `GET /local/dead-letters`, oldest first. */
export interface DeadLetters {
  dead_letters: DeadLetterEntry[];
}

/** `POST /local/dead-letters/redrive`. */
export interface Redriven {
  moved: number;
}
