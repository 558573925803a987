/**
 * Request and response schemas of the HTTP API: zod is the single source of
 * validation and of the OpenAPI document, which @hono/zod-openapi generates
 * from the routes (routes.ts) that use these schemas. Names given with
 * `.openapi("Name")` become components of the document.
 */
import { z } from "@hono/zod-openapi";
import { SKIP_REASONS } from "../../core/auto-compaction.ts";
import {
  type AutoConfig,
  AutoConfigLayer,
  boundedText,
  MAX_MODEL_ID_LENGTH,
  RuleLayer,
  SummaryRuleConfig,
  ToolCallMode,
} from "../../core/config.ts";
import { MAX_LISTED_ISSUES } from "../../core/errors.ts";
import { Compaction, Entry, JsonObject, Timestamp, UnknownEntry } from "../../core/events.ts";
import {
  FORMAT_NAMES,
  PROVIDER_FORMATS,
  type ProviderFormatName,
} from "../../core/formats/index.ts";
import { MAX_WAIT_SECONDS } from "../conversations/evaluation-wait.ts";
import { MAX_URL_LENGTH } from "../notifications/url-safety.ts";
import { MAX_LIST_LIMIT, NOTIFICATION_TYPES } from "../ports.ts";
import { MAX_TURN } from "../store/dynamodb-keys.ts";

// The two `z.custom` schemas of the wire format cannot describe themselves:
// their metadata (read by the document generator only) says what they accept.
z.globalRegistry.add(JsonObject, { type: "object", description: "A JSON object, kept verbatim." });
z.globalRegistry.add(UnknownEntry, {
  type: "object",
  description:
    "An entry of a type this service does not know: kept verbatim, never provider-visible.",
  properties: { type: { type: "string" }, timestamp: { type: "string" } },
  required: ["type"],
});

/** Conversation ids: URL-safe, bounded. */
export const ConversationId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._~:@-]+$/, "use letters, digits and . _ ~ : @ - only")
  .openapi({ description: "The conversation's id, chosen by the client.", example: "conv-1" });

/** Path parameters of every conversation route. */
export const ConversationParams = z.object({ id: ConversationId });

/** A compaction's 1-based position in stream order (a path segment, read as a whole number). */
export const CompactionPosition = z
  .string()
  .regex(/^\d+$/)
  .refine((raw) => Number(raw) >= 1)
  .transform(Number)
  .openapi({ type: "integer", minimum: 1, description: "1-based position in stream order." });

/** Path parameters of `DELETE …/compactions/{position}`. */
export const CompactionParams = z.object({ id: ConversationId, position: CompactionPosition });

/** The Standard Webhooks headers of a signed turn post (required when the tenant has signing secrets). */
export const WebhookHeaders = z.object({
  "webhook-id": z.string().max(256).optional().openapi({ description: "Unique message id." }),
  "webhook-timestamp": z
    .string()
    .max(20)
    .optional()
    .openapi({ description: "Unix seconds; accepted within ±300 s of the server's clock." }),
  "webhook-signature": z.string().max(4096).optional().openapi({
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` signatures (several, for key rotation).',
  }),
});

/** The model a turn was produced with. */
export const ModelInfoSchema = z.strictObject({
  id: boundedText(MAX_MODEL_ID_LENGTH)
    .optional()
    .openapi({ description: "The model's id, as its provider names it." }),
  context_window: z.number().int().positive().optional(),
});

// `.openapi()` exists on schemas built after @hono/zod-openapi loaded (zod
// copies prototype additions at construction): core's schemas are cloned first.

/** An entry of the stream (docs/architecture.md §4): core's wire-format schemas. */
export const Event = Entry.clone().openapi("Event", {
  description: "An entry of the JP-compatible event stream; unknown entry types are kept verbatim.",
});

/** The fields every turn post has, whatever its format. */
const TurnFields = {
  // The bound is the DynamoDB key codec's: a larger turn cannot be stored.
  turn: z
    .number({ error: "turn must be a whole number ≥ 0" })
    .int()
    .nonnegative()
    .max(MAX_TURN, `turn must be at most ${MAX_TURN}`),
  model: ModelInfoSchema.optional(),
};

/** `POST /v1/conversations/{id}/turns` with JP events. Events are validated entry by entry afterwards. */
export const TurnBody = z.strictObject({
  ...TurnFields,
  events: z.array(z.unknown()).min(1, "a turn needs at least one event"),
});

const PROVIDER_FORMAT_NAMES = Object.keys(PROVIDER_FORMATS) as [
  ProviderFormatName,
  ...ProviderFormatName[],
];

/** `?format=` of the reads: JP events (the default) or a provider format. */
export const FormatName = z
  .enum(FORMAT_NAMES as [string, ...string[]], {
    error: `unknown format: use one of ${FORMAT_NAMES.join(", ")}`,
  })
  .openapi({ description: "The format of the answer (docs/architecture.md §15); default `jp`." });

/** The options of a turn posted in a provider format. */
const FormatOptions = {
  drop_system: z.boolean().optional().openapi({
    description:
      "Drop leading system/developer messages (the platform sends its system prompt with each call) instead of refusing the turn.",
  }),
  timestamp: z.string().max(64).pipe(Timestamp).optional().openapi({
    type: "string",
    maxLength: 64,
    description:
      "Stamp every event with this time (RFC 3339). By default the service stamps the turn when it stores it, never earlier than the conversation's last event.",
  }),
};

/**
 * `POST /v1/conversations/{id}/turns` in a provider format: the messages are
 * kept unparsed here, because the format checks them (and locates each
 * problem) when it converts them.
 */
export const FormatTurnBody = z.strictObject({
  ...TurnFields,
  format: z.enum(PROVIDER_FORMAT_NAMES, {
    error: `unknown format: use one of ${FORMAT_NAMES.join(", ")} (\`jp\` posts \`events\`)`,
  }),
  messages: z.unknown().optional(),
  input: z.unknown().optional(),
  ...FormatOptions,
});

/** PascalCase of a format name, for component names (`openai-chat` → `OpenaiChat`). */
const pascal = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, _dash: string, letter: string) => letter.toUpperCase());

/** Each provider format's message, a named component (cloned: see the note above {@link Event}). */
const MESSAGE_SCHEMAS: Readonly<Record<string, z.ZodType>> = Object.fromEntries(
  Object.values(PROVIDER_FORMATS).map((format) => [
    format.name,
    format.messageSchema.clone().openapi(`${pascal(format.name)}Message`, {
      description: `One message of the ${format.name} format (docs/architecture.md §15).`,
    }),
  ]),
);

/**
 * The documented turn body: JP events, described as {@link Event}s that
 * core's `parseStream` checks one by one (so each problem is located by
 * index), or one turn of a provider format's messages.
 */
export const TurnRequest = z
  .union([
    TurnBody.extend({ events: z.array(Event).min(1) }).openapi("JpTurnRequest"),
    ...Object.values(PROVIDER_FORMATS).map((format) =>
      z
        .strictObject({
          ...TurnFields,
          format: z.literal(format.name),
          [format.field]: z.array(MESSAGE_SCHEMAS[format.name] as z.ZodType).min(1),
          ...FormatOptions,
        })
        .openapi(`${pascal(format.name)}TurnRequest`),
    ),
  ])
  .openapi("TurnRequest", {
    description:
      "One turn: JP events (`events`), or a provider format's messages of that turn (`format` and its messages field).",
  });

/** The longest DSL spec of a manual compaction (real ones are a few characters: "r+t:..-3"). */
export const MAX_SPEC_LENGTH = 1024;

/** `POST /v1/conversations/{id}/compactions`. */
export const CompactionBody = z
  .union([
    z.strictObject({ spec: z.string().min(1).max(MAX_SPEC_LENGTH) }),
    z.strictObject({ rule: RuleLayer }),
  ])
  .openapi("CompactionRequest", {
    description: 'A DSL spec (RFD 064, e.g. "r+t:..-3") or a rule, exactly one of them.',
  });

/** `PUT /v1/conversations/{id}/config`: the D50 tree. */
export const ConfigBody = z
  .strictObject({
    conversation: z.strictObject({ compaction: z.strictObject({ auto: AutoConfigLayer }) }),
  })
  .openapi("ConfigTree");

/** `DELETE /v1/conversations/{id}/compactions?source=`. */
export const ResetQuery = z.strictObject({
  source: z
    .enum(["auto", "manual"])
    .optional()
    .openapi({ description: "Remove only the compactions of this source (default: all)." }),
});

/** `POST /v1/conversations/{id}/verify?repair=`. */
export const VerifyQuery = z.strictObject({
  repair: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "`true`: rewrite a drifted head's counters (default `false`)." }),
});

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

/** `wait=S`: seconds to wait for an evaluation, at most {@link MAX_WAIT_SECONDS} (API Gateway gives up at 30 s). */
const WaitSeconds = z
  .string()
  .regex(/^\d+(\.\d+)?$/, "wait must be a number of seconds")
  .transform(Number)
  .refine(
    (seconds) => seconds <= MAX_WAIT_SECONDS,
    `wait must be at most ${MAX_WAIT_SECONDS} seconds`,
  )
  .openapi({
    type: "number",
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    description: `Seconds to wait for the evaluation (at most ${MAX_WAIT_SECONDS}); without it, one read.`,
  });

/** `after_turn=N` and `wait=S` of a read that must reflect the evaluation after turn N. */
const AfterTurnFields = {
  after_turn: z
    .string()
    .regex(/^\d{1,9}$/, "after_turn must be a whole number of a stored turn")
    .transform(Number)
    .optional()
    .openapi({
      type: "integer",
      minimum: 0,
      maximum: MAX_TURN,
      description:
        "Answer the view as evaluated after this turn: once an evaluation that saw it (or a later turn) has fired or skipped; 503 `evaluation-pending` if that takes longer than `wait`.",
    }),
  wait: WaitSeconds.optional(),
};

/** The query of `GET /v1/conversations/{id}`. */
export const SummaryQuery = z.strictObject(AfterTurnFields);

/** The query of `GET …/projection`. */
export const ProjectionQuery = z.strictObject({
  format: FormatName.optional(),
  ...AfterTurnFields,
});

/** The query of `POST …/turns`: `wait=S` answers once the posted turn has been evaluated. */
export const AppendQuery = z.strictObject({ wait: WaitSeconds.optional() });

/** How far evaluations had got when an answer was made. */
const ProgressFields = {
  evaluated_through: z.number().int().nullable().openapi({
    description:
      "The latest turn whose evaluation finished (fired or skipped for any reason, `stale` included).",
  }),
  decided_through: z.number().int().nullable().openapi({
    description:
      "The latest turn an evaluation decided on a stored state holding it (fired or skipped, not `stale`): a view read now reflects it.",
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
  })
  .openapi("AppendOutcome");

/** Response of `GET /v1/conversations/{id}`. */
export const ConversationSummary = z
  .object({
    turn_count: z.number().int(),
    ...ProgressFields,
    estimated_tokens: z.number(),
    compactions: z.array(ListedCompaction),
  })
  .openapi("ConversationSummary");

/** Conversations per page when `limit` is not given. */
export const DEFAULT_LIST_LIMIT = 20;

/** The query of `GET /v1/conversations`. */
export const ListQuery = z.strictObject({
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`)
    .transform(Number)
    .refine(
      (limit) => limit >= 1 && limit <= MAX_LIST_LIMIT,
      `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`,
    )
    .optional()
    .openapi({
      type: "integer",
      minimum: 1,
      maximum: MAX_LIST_LIMIT,
      description: `Conversations per page (default ${DEFAULT_LIST_LIMIT}).`,
    }),
  cursor: z.string().min(1).max(2048).optional().openapi({
    description: "The `next_cursor` of the previous page, unchanged (opaque).",
  }),
});

/** Response of `GET /v1/conversations`. */
export const ConversationListResponse = z
  .object({
    conversations: z.array(
      z.object({
        id: ConversationId,
        turn_count: z.number().int(),
        estimated_tokens: z.number(),
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
      description: "The estimate of turns 0..turn with no compaction (a running total).",
    }),
    projected_tokens: z.number().nullable().openapi({
      description:
        "The estimate the evaluation after this turn saw, before its own band; `null` where unknown (not evaluated yet, skipped as stale, or evaluated before evaluations were recorded).",
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
  })
  .openapi("TimelineTurn");

/** Response of `GET …/timeline`. */
export const TimelineResponse = z.object({ turns: z.array(TimelineTurn) }).openapi("Timeline", {
  description:
    "Per turn: raw and projected size, threshold, and what the evaluation after it did. Computed from each turn's size record and the band audits, never from event bodies.",
});

/** The query of `POST …/compactions`. */
export const CompactionQuery = z.strictObject({
  dry_run: z.enum(["true", "false"]).optional().openapi({
    description: "`true`: answer what the compaction would be (200) and write nothing.",
  }),
});

/** Response of `POST …/compactions?dry_run=true`. */
export const DryRunResponse = z
  .object({
    compaction: ListedCompaction,
    estimated_tokens_before: z.number(),
    estimated_tokens_after: z.number(),
  })
  .openapi("CompactionDryRun", {
    description:
      "The compaction that would be added (at the position it would take; a summary is generated as it would be) and the estimate of the projected view before and after it.",
  });

/** `?format=` of `GET …/events` and `GET …/projection`. */
export const FormatQuery = z.strictObject({ format: FormatName.optional() });

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

/** Response of `GET …/events` (JP events): the raw stream. */
export const EventsResponse = z.object({ events: z.array(Event) }).openapi("Events");

/** Response of `GET …/projection` (JP events). */
export const ProjectionResponse = z
  .object({
    events: z.array(Event),
    turns: TurnOrigins,
    estimated_tokens: z.number(),
    ...ProgressFields,
  })
  .openapi("Projection");

/** Response of `GET …/events`: the raw stream, or (`?format=`) its messages, compactions left out. */
export const EventsInAnyFormat = z
  .union([EventsResponse, ...inEachFormat("Events", {})])
  .openapi("EventsInAnyFormat");

/** Response of `GET …/projection`: the JP view, or (`?format=`) the next request's messages. */
export const ProjectionInAnyFormat = z
  .union([
    ProjectionResponse,
    ...inEachFormat("Projection", {
      turns: TurnOrigins,
      estimated_tokens: z.number(),
      ...ProgressFields,
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

/** Response of `GET /healthz`. */
export const HealthResponse = z.object({ ok: z.literal(true) });

/** Response of `GET /v1/openapi.json`. */
export const OpenApiDocument = z
  .record(z.string(), z.unknown())
  .openapi({ description: "An OpenAPI 3.1 document." });

/** An RFC 9457 problem. */
export const ProblemSchema = z
  .looseObject({
    type: z.string().openapi({ example: "/problems/invalid-request" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().openapi({ description: "What went wrong and how to fix it." }),
    errors: z
      .array(z.object({ pointer: z.string().optional(), detail: z.string() }))
      .max(MAX_LISTED_ISSUES)
      .optional()
      .openapi({
        description: `Each problem of an invalid request, located by JSON pointer: the first ${MAX_LISTED_ISSUES}.`,
      }),
    errors_omitted: z
      .number()
      .int()
      .positive()
      .optional()
      .openapi({
        description: `How many problems are not listed in \`errors\` (only past ${MAX_LISTED_ISSUES}).`,
      }),
  })
  .openapi("Problem", { description: "An RFC 9457 problem document." });

/** The 409 of a turn post: the problem and the turn to post next. */
export const TurnConflictProblem = ProblemSchema.extend({
  expected_turn: z.number().int().nonnegative(),
}).openapi("TurnConflictProblem");

/** The 409 of a signed turn post whose `webhook-id` was already used for another message. */
export const WebhookIdReusedProblem = ProblemSchema.extend({
  type: z.literal("/problems/webhook-id-reused"),
}).openapi("WebhookIdReusedProblem", {
  description:
    "An RFC 9457 problem: the `webhook-id` of a signed post was already used for another message; nothing was stored.",
});

/** The 503 of a read (or a post with `wait`) whose wait for a turn's evaluation ran out. */
export const EvaluationPendingProblem = ProblemSchema.extend({
  type: z.literal("/problems/evaluation-pending"),
  after_turn: z.number().int().nonnegative(),
  ...ProgressFields,
}).openapi("EvaluationPendingProblem", {
  description:
    "An RFC 9457 problem: no evaluation had decided on `after_turn` when the wait ran out (`Retry-After` says when to ask again); `evaluated_through` and `decided_through` say how far evaluations got.",
});

/** What API Gateway answers when it throttles (its own body, not a problem). */
export const GatewayMessage = z.object({ message: z.string() }).openapi("GatewayMessage");

/** A notification event type (docs/architecture.md §16). */
const NotificationTypeSchema = z.enum(NOTIFICATION_TYPES);

/** Body of `PUT /v1/notifications`. */
export const NotificationBody = z
  .strictObject({
    url: z.string().min(1).max(MAX_URL_LENGTH).openapi({
      description:
        "Where to POST the events: HTTPS to a public address when deployed (never private, loopback, link-local or metadata addresses, checked after DNS resolution); the local runtime also takes http and loopback.",
      example: "https://example.com/hooks/autocompact",
    }),
    events: z.array(NotificationTypeSchema).min(1).optional().openapi({
      description: "The events to receive; all of them when absent.",
    }),
  })
  .openapi("NotificationRequest");

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
