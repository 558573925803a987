/**
 * Request schemas of the HTTP API (path, query, headers, bodies) and the
 * wire pieces both sides share (`Event`, each format's message): zod is the
 * single source of validation and of the OpenAPI document, which
 * @hono/zod-openapi generates from the routes (routes.ts) that use these
 * schemas. Responses are in response-schemas.ts, problems in
 * problem-schemas.ts. Names given with `.openapi("Name")` become components
 * of the document.
 */
import { z } from "@hono/zod-openapi";
import { ModelCatalogLayer } from "../../core/catalog.ts";
import { AutoConfigLayer, boundedText, MAX_MODEL_ID_LENGTH, RuleLayer } from "../../core/config.ts";
import { Entry, JsonObject, Timestamp, UnknownEntry } from "../../core/events.ts";
import {
  FORMAT_NAMES,
  PROVIDER_FORMATS,
  type ProviderFormatName,
} from "../../core/formats/index.ts";
import { TurnUsageSchema } from "../../core/turn-validation.ts";
import { MAX_TURN } from "../../core/turns.ts";
import { MAX_WAIT_SECONDS } from "../conversations/evaluation-wait.ts";
import { DEFAULT_PAGE_TURNS, MAX_PAGE_TURNS, PAGE_BYTES } from "../conversations/paged-reads.ts";
import { MAX_URL_LENGTH } from "../notifications/url-safety.ts";
import { MAX_LIST_LIMIT, NOTIFICATION_TYPES } from "../ports.ts";

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

/** The `Idempotency-Key` header of a manual compaction: 1 to 255 visible ASCII characters. */
export const IdempotencyHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, "must be 1 to 255 visible ASCII characters")
    .optional()
    .openapi({
      description:
        "A key of the client's choosing (a UUID, say) for this request: a retry with the same key and body gets the first answer (status and body, `idempotent-replayed: true`) and adds nothing; the key with another body is a 409. Kept 24 h.",
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
  // The service's bound (core/turns.ts): a larger turn cannot be stored.
  turn: z
    .number({ error: "turn must be a whole number ≥ 0" })
    .int()
    .nonnegative()
    .max(MAX_TURN, `turn must be at most ${MAX_TURN}`),
  model: ModelInfoSchema.optional(),
  usage: TurnUsageSchema.clone()
    .openapi("TurnUsage", {
      description:
        "What the provider reported for the turn's last model call (`input_tokens` counts cached tokens too; `calls`: how many calls the turn made). Kept with the turn's size record to calibrate the estimate; never changes the events.",
    })
    .optional(),
};

/**
 * `POST /v1/conversations/{id}/turns` with JP events. The events are then
 * checked entry by entry, and as one turn, by core/turn-validation.ts; the
 * empty array alone is refused here, as the document says (`minItems`).
 */
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
  response: z.unknown().optional().openapi({
    description:
      "The provider SDK's response object of the turn's last call (a Chat `ChatCompletion`, a Responses `Response`, an Anthropic `Message`, an AI SDK `generateText` result): its usage is read as `usage` would be posted (docs/integrate.md), the rest is ignored; not with `usage`.",
  }),
  ...FormatOptions,
});

/** PascalCase of a format name, for component names (`openai-chat` → `OpenaiChat`). */
export const pascal = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, _dash: string, letter: string) => letter.toUpperCase());

/** Each provider format's message, a named component (cloned: see the note above {@link Event}). */
export const MESSAGE_SCHEMAS: Readonly<Record<string, z.ZodType>> = Object.fromEntries(
  Object.values(PROVIDER_FORMATS).map((format) => [
    format.name,
    format.messageSchema.clone().openapi(`${pascal(format.name)}Message`, {
      description: `One message of the ${format.name} format (docs/architecture.md §15).`,
    }),
  ]),
);

/**
 * The documented turn body: JP events, described as {@link Event}s that
 * core's `turnEvents` checks one by one (so each problem is located by
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

/** `PUT /v1/tenant/models`: the tenant's models, replacing those it had (`{}` removes them). */
export const TenantModelsBody = z
  .strictObject({ models: ModelCatalogLayer })
  .openapi("TenantModelsRequest", {
    description:
      "`models`: model id → context window in tokens, over the deployment's catalog (an id in any spelling: `GPT-5.1` is `gpt-5-1`).",
    example: { models: { "acme-coder-1": 64000 } },
  });

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

/** A `limit` query parameter: a whole number from 1 to `max`, one message for every way it is wrong. */
function limitQuery(max: number, description: string) {
  const message = `limit must be a whole number from 1 to ${max}`;
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${String(max).length}}$`), message)
    .transform(Number)
    .refine((limit) => limit >= 1 && limit <= max, message)
    .optional()
    .openapi({ type: "integer", minimum: 1, maximum: max, description });
}

/** `limit` and `cursor` of the paged reads (functions/conversations/paged-reads.ts). */
const PageFields = {
  limit: limitQuery(
    MAX_PAGE_TURNS,
    `Turns per page (default ${DEFAULT_PAGE_TURNS}). A page also stops before the turn that would take it past ${PAGE_BYTES} bytes (a turn larger than that alone is a page of its own).`,
  ),
  cursor: z.string().min(1).max(2048).optional().openapi({
    description:
      "The `next_cursor` of the previous page, unchanged (opaque). A cursor given before the conversation's compactions changed (or before it was recreated) is refused with 409 `stale-cursor`: read again from the first page.",
  }),
};

/** The query of `GET …/projection`. */
export const ProjectionQuery = z.strictObject({
  format: FormatName.optional(),
  ...AfterTurnFields,
  ...PageFields,
  since: z.string().min(1).max(128).optional().openapi({
    description:
      "The `etag` of an earlier answer (quotes optional): answer only what changed since, as a `delta` (see `ViewDelta`). Not with `cursor`.",
  }),
});

/** The `ETag` header of `GET …/projection`'s answers. */
export const ETagHeader = {
  ETag: {
    description: "The version of the whole view (the answer's `etag`); strong.",
    schema: { type: "string" as const },
  },
};

/** The request headers of `GET …/projection`. */
export const ProjectionHeaders = z.object({
  "if-none-match": z.string().max(1024).optional().openapi({
    description:
      "Etags of views the caller holds (or `*`): when the view's version is one of them, the answer is a 304 with no body.",
  }),
});

/** The query of `POST …/turns`: `wait=S` answers once the posted turn has been evaluated. */
export const AppendQuery = z.strictObject({ wait: WaitSeconds.optional() });

/** Conversations per page when `limit` is not given. */
export const DEFAULT_LIST_LIMIT = 20;

/** The query of `GET /v1/conversations`. */
export const ListQuery = z.strictObject({
  limit: limitQuery(MAX_LIST_LIMIT, `Conversations per page (default ${DEFAULT_LIST_LIMIT}).`),
  cursor: z.string().min(1).max(2048).optional().openapi({
    description: "The `next_cursor` of the previous page, unchanged (opaque).",
  }),
});

/** The query of `POST …/compactions`. */
export const CompactionQuery = z.strictObject({
  dry_run: z.enum(["true", "false"]).optional().openapi({
    description: "`true`: answer what the compaction would be (200) and write nothing.",
  }),
});

/** The query of `GET …/events`: `?format=` and the page. */
export const EventsQuery = z.strictObject({ format: FormatName.optional(), ...PageFields });

/** A notification event type (docs/architecture.md §16). */
export const NotificationTypeSchema = z.enum(NOTIFICATION_TYPES);

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
