/**
 * Response schemas of the HTTP API: what each route answers on success
 * (routes.ts declares them; the OpenAPI document is generated from them, and
 * test/client/types.test.ts holds the client's types to them). Problems are
 * in problem-schemas.ts.
 */
import { z } from "@hono/zod-openapi";
import { SKIP_REASONS } from "../../core/auto-compaction.ts";
import {
  type AutoConfig,
  AutoConfigLayer,
  Estimator,
  SummaryRuleConfig,
  ToolCallMode,
} from "../../core/config.ts";
import { Compaction } from "../../core/events.ts";
import { PROVIDER_FORMATS } from "../../core/formats/index.ts";
import { WARNING_CODES } from "../../core/warnings.ts";
import {
  ConversationId,
  Event,
  MESSAGE_SCHEMAS,
  NotificationTypeSchema,
  pascal,
} from "./schemas.ts";

/** Response of `POST …/verify`. */
export const VerifyResponse = z
  .object({
    drift: z
      .array(
        z.object({
          field: z.string().openapi({
            description:
              "A head counter (`turn_count`, `projected_chars`, `max_compacted_turn`, `compactions_version`, `evaluated_through`) or a stored turn size (`turns[3].size.tool_responses`).",
          }),
          stored: z.number().int(),
          expected: z.number().int(),
        }),
      )
      .openapi({ description: "Every stored number that differs from its recomputed value." }),
    repaired: z.boolean().openapi({
      description:
        "Whether the head's counters were rewritten (only with `repair=true` and a drifted head; turn sizes are never rewritten).",
    }),
  })
  .openapi("Verification");

/** A compaction as listed, with its 1-based position in stream order. */
export const ListedCompaction = z
  .intersection(
    z.object({ position: z.number().int().positive() }),
    Compaction.clone().openapi("Compaction"),
  )
  .openapi("ListedCompaction");

/** How far evaluations had got when an answer was made. */
export const ProgressFields = {
  evaluated_through: z.number().int().nullable().openapi({
    description:
      "The latest turn whose evaluation finished (fired or skipped for any reason, `stale` included).",
  }),
  decided_through: z.number().int().nullable().openapi({
    description:
      "The latest turn an evaluation decided on a stored state holding it (fired or skipped, not `stale`): a view read now reflects it.",
  }),
  deferred_until: z.string().optional().openapi({
    description:
      'With `when: "idle"`, while the newest turn\'s firing is deferred: when its band is due (RFC 3339). The band fires then unless a newer turn comes first; a `compaction.fired` notification says when it did.',
  }),
};

/** What keeps automatic compaction from doing its job (core/warnings.ts), on every answer about a conversation's state. */
export const WarningsField = {
  warnings: z
    .array(
      z
        .object({
          code: z.enum(WARNING_CODES),
          detail: z.string().openapi({ description: "What it means and the one thing to do." }),
        })
        .openapi("Warning"),
    )
    .openapi({
      description:
        "The conversation's warnings, in the order of `code`'s values; always present, empty when there are none. Each code is described once in docs/architecture.md §8 (Warnings).",
    }),
};

/** What an evaluation decided. */
export const EvaluationDecisionSchema = z
  .union([
    z.object({
      turn: z.number().int(),
      outcome: z.literal("fired"),
      band: z.object({
        key: z.string(),
        from_turn: z.number().int(),
        to_turn: z.number().int(),
      }),
    }),
    z.object({
      turn: z.number().int(),
      outcome: z.literal("skipped"),
      reason: z.enum(SKIP_REASONS),
      gain_tokens: z.number().optional().openapi({
        description: "With `low_gain`: the estimated tokens the band would have removed.",
      }),
      deferred_until: z.string().optional().openapi({
        description:
          "With `deferred_until_idle`: when the idle re-evaluation is due (RFC 3339); the band fires then unless a newer turn comes first.",
      }),
    }),
  ])
  .openapi("EvaluationDecision", {
    description:
      "The decision of the evaluation that covered the turn: its own, or a newer turn's when this one's was skipped as stale (`turn` says which).",
  });

/** Response of `POST …/turns`. */
export const AppendResponse = z
  .object({
    status: z.enum(["created", "replayed"]),
    turn: z.number().int(),
    turn_count: z.number().int(),
    evaluation_enqueued: z.boolean(),
    dropped_system: z.number().int().positive().optional().openapi({
      description: "How many leading system/developer messages `drop_system` dropped.",
    }),
    ...ProgressFields,
    decision: EvaluationDecisionSchema.optional().openapi({
      description:
        "With `wait`: the latest decision once the posted turn is decided. Its `turn` is the posted one, or a later turn's when one was posted and decided first (the head keeps the latest decision only).",
    }),
    ...WarningsField,
  })
  .openapi("AppendOutcome");

/** How the conversation's estimate turns characters into tokens (core/calibration.ts `Estimator`). */
export const EstimatorSummary = z
  .object({
    kind: z.enum(["chars", "calibrated"]),
    tokens_per_char: z.number(),
    overhead_tokens: z.number(),
    turns_with_usage: z.number().int(),
  })
  .openapi("Estimator", {
    description:
      "`chars`: D50's chars / 4; `calibrated`: tokens = tokens_per_char · chars + overhead_tokens, fitted to the turns' reported usage (`auto` once 3 turns carry usage).",
  });

/** Response of `GET /v1/conversations/{id}`. */
export const ConversationSummary = z
  .object({
    turn_count: z.number().int(),
    ...ProgressFields,
    estimated_tokens: z.number().openapi({
      description:
        "The projected view in the estimator's tokens: its fitted overhead included, the config's `reserve_tokens` not.",
    }),
    estimator: EstimatorSummary,
    compactions: z.array(ListedCompaction),
    ...WarningsField,
  })
  .openapi("ConversationSummary");

/** Response of `GET /v1/conversations`. */
export const ConversationListResponse = z
  .object({
    conversations: z.array(
      z.object({
        id: ConversationId,
        turn_count: z.number().int(),
        estimated_tokens: z.number().openapi({
          description:
            "D50's chars / 4 of the projected view: the list's index holds no calibration (`GET /v1/conversations/{id}` answers the estimator's tokens).",
        }),
        context_window: z.number().int().nullable().openapi({
          description:
            "The latest turn's model's window (its `context_window`, else the catalog's); `null` when unknown.",
        }),
        utilization: z.number().nullable().openapi({
          description: "`estimated_tokens / context_window`; `null` when the window is unknown.",
        }),
        bands: z
          .object({ auto: z.number().int(), manual: z.number().int() })
          .openapi({ description: "How many compactions of each source it has." }),
        last_fired_at: z.string().nullable().openapi({
          description:
            "The timestamp of the latest automatic band written (kept after a reset); `null` when none was.",
        }),
        ...WarningsField,
      }),
    ),
    next_cursor: z.string().nullable().openapi({
      description: "Pass as `cursor` for the next page; `null` on the last page.",
    }),
  })
  .openapi("ConversationList", {
    description:
      "The tenant's conversations, most recently active first (a turn posted, a compaction added or removed, a config set).",
  });

/** One turn of `GET …/timeline`. */
export const TimelineTurn = z
  .object({
    turn: z.number().int(),
    raw_tokens: z.number().openapi({
      description:
        "The estimate of turns 0..turn with no compaction (a running total), in the conversation's estimator's tokens now.",
    }),
    projected_tokens: z.number().nullable().openapi({
      description:
        "The estimate the evaluation after this turn saw, before its own band, in its estimator's tokens (chars / 4 on records kept before they recorded it); `null` where unknown (not evaluated yet, skipped as stale, or evaluated before evaluations were recorded).",
    }),
    threshold: z.number().nullable().openapi({
      description:
        "`context_window * trigger_ratio` as that evaluation saw it; `null` where unknown or the window was.",
    }),
    fired: z
      .object({
        position: z.number().int().positive().nullable().openapi({
          description:
            "The band's 1-based position among the compactions now; `null` once it has been removed.",
        }),
        from_turn: z.number().int(),
        to_turn: z.number().int(),
        source: z.literal("auto"),
      })
      .nullable()
      .openapi({ description: "The band the evaluation after this turn appended." }),
    skip_reason: z.enum(SKIP_REASONS).nullable().openapi({
      description: "Why that evaluation did not fire; `null` when it fired or is unknown.",
    }),
    gain_tokens: z.number().optional().openapi({
      description: "With `low_gain`: the estimated tokens the band would have removed.",
    }),
    deferred_until: z.string().optional().openapi({
      description:
        "With `deferred_until_idle`: when the idle re-evaluation is due (RFC 3339); once the idle band fires, the turn shows it under `fired`.",
    }),
  })
  .openapi("TimelineTurn");

/** Response of `GET …/timeline`. */
export const TimelineResponse = z.object({ turns: z.array(TimelineTurn) }).openapi("Timeline", {
  description:
    "Per turn: raw and projected size, threshold, and what the evaluation after it did. Computed from each turn's size record and the band audits, never from event bodies.",
});

/** Response of `POST …/compactions?dry_run=true`. */
export const DryRunResponse = z
  .object({
    compaction: ListedCompaction,
    estimated_tokens_before: z.number().openapi({
      description:
        "In the conversation's estimator's tokens, as `GET /v1/conversations/{id}` answers.",
    }),
    estimated_tokens_after: z.number(),
  })
  .openapi("CompactionDryRun", {
    description:
      "The compaction that would be added (at the position it would take; a summary is generated as it would be) and the estimate of the projected view before and after it.",
  });

const TurnOrigins = z.array(
  z.union([
    z.object({ kept: z.number().int() }),
    z.object({ summary: z.object({ from: z.number().int(), to: z.number().int() }) }),
  ]),
);

/** A read answered in a provider format: `{format, <messages field>, …fields}`. */
const inEachFormat = (suffix: string, fields: Record<string, z.ZodType>) =>
  Object.values(PROVIDER_FORMATS).map((format) =>
    z
      .object({
        format: z.literal(format.name),
        [format.field]: z.array(MESSAGE_SCHEMAS[format.name] as z.ZodType),
        ...fields,
      })
      .openapi(`${pascal(format.name)}${suffix}`),
  );

/** `next_cursor` of a paged read (functions/conversations/paged-reads.ts): absent on the last page. */
const NextCursor = {
  next_cursor: z.string().optional().openapi({
    description:
      "Present when more turns follow: pass it as `cursor` for the next page. Absent on the last page.",
  }),
};

/** Response of `GET …/events` (JP events): a page of the raw stream. */
export const EventsResponse = z.object({ events: z.array(Event), ...NextCursor }).openapi("Events");

/** The whole projected view's estimate, in the conversation's estimator's tokens. */
const ViewEstimate = z.number().openapi({
  description:
    "The whole projected view in the conversation's estimator's tokens (its fitted overhead included), as `GET /v1/conversations/{id}` answers.",
});

/** The version of the whole view an answer of `GET …/projection` belongs to (also its `ETag`). */
const ViewVersionFields = {
  etag: z.string().openapi({
    description:
      'The version of the whole view (its turns, band set, format, estimate, progress and warnings), as the `ETag` header says it: `"<turns>.<compactions version>.<view hash>.<rest hash>"`, opaque. Send it as `If-None-Match` for a 304 while nothing changed, or as `since` for only what changed. A paged read\'s last page has the etag of the pages joined.',
    example: '"12.3.Qm9vZ2llV29vZ2ll.c2FtcGxl"',
  }),
  delta: z
    .object({
      since: z.string().openapi({ description: "The etag the request's `since` named." }),
      items: z.object({ from: z.number().int(), to: z.number().int() }).openapi({
        description:
          "The items (`events`, or the format's `messages` / `input`) `[from, to)` of the view `since` named, which this answer's items replace.",
      }),
      turns: z.object({ from: z.number().int(), to: z.number().int() }).openapi({
        description:
          "The origins `[from, to)` of the view `since` named, which this answer's `turns` replace.",
      }),
    })
    .optional()
    .openapi("ViewDelta", {
      description:
        "Present only on an answer to `since`: the answer's items and `turns` are not the view but what replaces these ranges of the one `since` named (empty when nothing changed: the turns appended after a no-fire turn, the band's range and its projected turns after a firing). Absent when `since` could not be answered so (the view it named is no longer the one the store rebuilds, or the change is larger than a page): the answer is then the view, as without `since`.",
    }),
};

/** Response of `GET …/projection` (JP events). */
export const ProjectionResponse = z
  .object({
    events: z.array(Event),
    turns: TurnOrigins,
    estimated_tokens: ViewEstimate,
    ...ProgressFields,
    ...WarningsField,
    ...ViewVersionFields,
    ...NextCursor,
  })
  .openapi("Projection");

/** Response of `GET …/events`: the raw stream, or (`?format=`) its messages, compactions left out. */
export const EventsInAnyFormat = z
  .union([EventsResponse, ...inEachFormat("Events", NextCursor)])
  .openapi("EventsInAnyFormat");

/** Response of `GET …/projection`: the JP view, or (`?format=`) the next request's messages. */
export const ProjectionInAnyFormat = z
  .union([
    ProjectionResponse,
    ...inEachFormat("Projection", {
      turns: TurnOrigins,
      estimated_tokens: ViewEstimate,
      ...ProgressFields,
      ...WarningsField,
      ...ViewVersionFields,
      ...NextCursor,
    }),
  ])
  .openapi("ProjectionInAnyFormat");

/** Response of `GET …/compactions`. */
export const CompactionsResponse = z
  .object({ compactions: z.array(ListedCompaction) })
  .openapi("Compactions");

/** Response of the `DELETE …/compactions` routes. */
export const RemovedResponse = z
  .object({ removed: z.array(ListedCompaction) })
  .openapi("RemovedCompactions");

/** The resolved `conversation.compaction.auto` (core's {@link AutoConfig}). */
export const EffectiveConfig = z
  .object({
    enabled: z.boolean(),
    trigger_ratio: z.number(),
    min_turns: z.number().int(),
    rule: z.object({
      keep_first: z.number().int(),
      keep_last: z.number().int(),
      reasoning: z.enum(["strip"]).nullable(),
      tool_calls: ToolCallMode.nullable(),
      summary: SummaryRuleConfig.nullable(),
    }),
    estimator: Estimator,
    reserve_tokens: z.number(),
    min_gain_tokens: z.number(),
    min_band_turns: z.number().int(),
    when: z.enum(["turn", "idle"]),
    idle_seconds: z.number().int(),
    hard_ratio: z.number(),
  })
  .openapi("EffectiveConfig");

// The schema and core's type must not drift apart (checked by the compiler).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const effectiveConfigMatchesCore: Same<z.infer<typeof EffectiveConfig>, AutoConfig> = true;
void effectiveConfigMatchesCore;

/** Response of `GET`/`PUT …/config`. */
export const ConfigResponse = z
  .object({
    conversation: z.object({ compaction: z.object({ auto: AutoConfigLayer }) }),
    effective: EffectiveConfig,
  })
  .openapi("ConversationConfig");

/** Response of `GET`/`PUT /v1/tenant/models`. */
export const TenantModelsResponse = z
  .object({ models: z.record(z.string(), z.number().int()) })
  .openapi("TenantModels");

/** Response of `GET /healthz`. */
export const HealthResponse = z.object({ ok: z.literal(true) });

/** Response of `GET /v1/openapi.json`. */
export const OpenApiDocument = z
  .record(z.string(), z.unknown())
  .openapi({ description: "An OpenAPI 3.1 document." });

/** Response of `GET /v1/notifications`. */
export const NotificationEndpointResponse = z
  .object({ url: z.string(), events: z.array(NotificationTypeSchema).optional() })
  .openapi("NotificationEndpoint");

/** Response of `PUT /v1/notifications`: the endpoint and its signing secret, shown this once. */
export const RegisteredEndpointResponse = NotificationEndpointResponse.extend({
  secret: z.string().openapi({
    description:
      "The Standard Webhooks signing secret (`whsec_…`) every event is signed with; shown only in this answer. A new PUT replaces it.",
  }),
}).openapi("RegisteredNotificationEndpoint");
