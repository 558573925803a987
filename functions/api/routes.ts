/**
 * The routes of the HTTP API (docs/architecture.md §8) as @hono/zod-openapi route
 * definitions: app.ts serves them and the OpenAPI document is generated from
 * them, so the two cannot drift. Every response a route can give is declared;
 * errors are RFC 9457 problems (`application/problem+json`).
 *
 * Bodies are referenced by component name ({@link BODY_SCHEMAS}) rather than
 * given as zod schemas: the handlers read them as text (a signature covers the
 * raw bytes, and JSON is parsed with a depth limit and a precise message), then
 * validate them with these same schemas or core's parsers.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  EvaluationPendingProblem,
  GatewayMessage,
  IdempotencyConflictProblem,
  ProblemSchema,
  RateLimitedProblem,
  StaleCursorProblem,
  SummaryBudgetProblem,
  TurnConflictProblem,
  WebhookIdReusedProblem,
} from "./problem-schemas.ts";
import {
  AppendResponse,
  CompactionsResponse,
  ConfigResponse,
  ConversationListResponse,
  ConversationSummary,
  DryRunResponse,
  EventsInAnyFormat,
  HealthResponse,
  ListedCompaction,
  NotificationEndpointResponse,
  OpenApiDocument,
  ProjectionInAnyFormat,
  RegisteredEndpointResponse,
  RemovedResponse,
  TenantModelsResponse,
  TimelineResponse,
  VerifyResponse,
} from "./response-schemas.ts";
import {
  AppendQuery,
  CompactionBody,
  CompactionParams,
  CompactionQuery,
  ConfigBody,
  ConversationParams,
  ETagHeader,
  EventsQuery,
  IdempotencyHeaders,
  ListQuery,
  NotificationBody,
  ProjectionHeaders,
  ProjectionQuery,
  ResetQuery,
  SummaryQuery,
  TenantModelsBody,
  TurnRequest,
  VerifyQuery,
  WebhookHeaders,
} from "./schemas.ts";

/** The request bodies, registered as components under these names. */
export const BODY_SCHEMAS = {
  TurnRequest,
  CompactionRequest: CompactionBody,
  ConfigTree: ConfigBody,
  NotificationRequest: NotificationBody,
  TenantModelsRequest: TenantModelsBody,
} as const;

const body = (name: keyof typeof BODY_SCHEMAS, description: string) => ({
  required: true,
  description,
  content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` } } },
});

const json = <T extends z.ZodType>(description: string, schema: T) => ({
  description,
  content: { "application/json": { schema } },
});

const problemOf = <T extends z.ZodType>(description: string, schema: T) => ({
  description,
  content: { "application/problem+json": { schema } },
});

const problem = (description: string) => problemOf(description, ProblemSchema);

/** A 401: a problem, with the challenge RFC 9110 requires. */
const unauthorized = (description: string) => ({
  ...problem(description),
  headers: {
    "WWW-Authenticate": {
      description:
        'The challenge: `Bearer realm="autocompact"` (with `error="invalid_token"` for an unknown key).',
      schema: { type: "string" as const },
    },
  },
});

/** Answers every route can give. */
const always = {
  429: json(
    "Throttled by the API gateway of the deployed stack (its own body, not a problem); retry later.",
    GatewayMessage,
  ),
  500: problem("An unexpected error; it has been logged."),
} as const;

const retryAfter = {
  "Retry-After": {
    description: "Seconds to wait before retrying.",
    schema: { type: "integer" as const },
  },
};

/** The 429 of an authenticated route: the gateway's, or the tenant's limits (`problems`). */
const throttled = <T extends z.ZodType>(description: string, problems: T) => ({
  description: `Throttled by the API gateway of the deployed stack (its own JSON body), or (\`/problems/rate-limited\`) the tenant is over its requests a second or its concurrent waiting reads on this instance${description}; retry after \`Retry-After\` seconds.`,
  content: {
    "application/json": { schema: GatewayMessage },
    "application/problem+json": { schema: problems },
  },
  headers: retryAfter,
});

/** Answers of every authenticated route. */
const authenticated = { ...always, 429: throttled("", RateLimitedProblem) } as const;

/** Answers of every conversation route (authenticated, with an id in the path). */
const conversation = {
  ...authenticated,
  400: problem(
    "Invalid request: the conversation id, the body or the query (`errors` locates each problem).",
  ),
  401: unauthorized(
    "Missing or unknown API key (`Authorization: Bearer <key>`), checked before the body.",
  ),
} as const;

const notFound = problem(
  "No such conversation for this API key's tenant (another tenant's conversations are not found either).",
);
const pending = problemOf(
  "With `after_turn` (`/problems/evaluation-pending`): no evaluation had decided on that turn when the wait ran out; `evaluated_through` and `decided_through` say how far they got. Retry after `Retry-After` seconds, or wait longer.",
  EvaluationPendingProblem,
);
const staleCursor = problemOf(
  "With `cursor` (`/problems/stale-cursor`): the conversation's compactions changed, or it was deleted and recreated, since the cursor was given; read again from the first page.",
  StaleCursorProblem,
);
const tooLarge = problem("The body is larger than the limit (5 MB unless configured).");
const notJson = problem(
  "The body is not sent as uncompressed JSON (`content-type: application/json`, no `content-encoding`).",
);
const contention = problem("Too many concurrent writes to the conversation; retry the request.");

export const health = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "health",
  summary: "Liveness",
  security: [],
  responses: { 200: json("The service is up.", HealthResponse), 429: always[429] },
});

export const openApi = createRoute({
  method: "get",
  path: "/v1/openapi.json",
  operationId: "getOpenApiDocument",
  summary: "This document",
  security: [],
  responses: { 200: json("The OpenAPI 3.1 document of this API.", OpenApiDocument), ...always },
});

export const appendTurn = createRoute({
  method: "post",
  path: "/v1/conversations/{id}/turns",
  operationId: "appendTurn",
  summary: "Store a completed turn and enqueue its evaluation",
  description:
    "Turns are posted in order from 0. A tenant with webhook signing secrets must sign the post with Standard Webhooks headers.",
  request: {
    params: ConversationParams,
    query: AppendQuery,
    headers: WebhookHeaders,
    body: body(
      "TurnRequest",
      "The turn's number, its model, and its events, or its messages in a provider format (`format`).",
    ),
  },
  responses: {
    202: json("Stored; its evaluation is enqueued.", AppendResponse),
    200: json("An identical replay of a stored turn; nothing new is stored.", AppendResponse),
    ...conversation,
    401: unauthorized(
      "Missing or unknown API key, or a missing or invalid webhook signature for a tenant that requires one.",
    ),
    409: problemOf(
      "A gap, or different content for a stored turn: `expected_turn` is the turn to post next. Or (`/problems/webhook-id-reused`) a signed post whose `webhook-id` was already used, within the signature tolerance window, for another message (another body or conversation): nothing is stored. A redelivery (the same body to the same conversation) keeps its id and is answered as the first delivery's replay.",
      z.union([TurnConflictProblem, WebhookIdReusedProblem]),
    ),
    413: tooLarge,
    415: notJson,
    422: problem(
      "The turn cannot be stored: past DynamoDB's item size limits; or (`/problems/unsupported-message`) it holds a message the service does not take in a turn: a system or developer prompt (send it with each call, or post `drop_system: true`), or an item the format has and the service does not model.",
    ),
    503: problemOf(
      "Too many concurrent writes to the conversation, or it is being deleted; retry the request (after `Retry-After` seconds). With `wait` (`/problems/evaluation-pending`): the turn is stored, but its evaluation had not decided when the wait ran out; read with `after_turn` later.",
      z.union([ProblemSchema, EvaluationPendingProblem]),
    ),
  },
});

/** The query of a read that takes no parameters. */
const NoQuery = z.object({});

/** A read of one conversation: `GET path`, answering `schema` or the conversation's problems. */
const conversationRead = <
  P extends string,
  T extends z.ZodType,
  Q extends z.ZodObject = typeof NoQuery,
>(
  path: P,
  operationId: string,
  summary: string,
  description: string,
  schema: T,
  query: Q = NoQuery as Q,
) =>
  createRoute({
    method: "get",
    path,
    operationId,
    summary,
    request: { params: ConversationParams, query },
    responses: {
      200: json(description, schema),
      ...conversation,
      404: notFound,
      ...("cursor" in query.shape ? { 409: staleCursor } : {}),
      ...("after_turn" in query.shape ? { 503: pending } : {}),
    },
  });

export const getConversation = conversationRead(
  "/v1/conversations/{id}",
  "getConversation",
  "Turn count, evaluation progress, estimate and compactions; with `after_turn`, once the evaluation after that turn has decided",
  "The conversation's summary.",
  ConversationSummary,
  SummaryQuery,
);

export const listEvents = conversationRead(
  "/v1/conversations/{id}/events",
  "listEvents",
  "The raw stream: JP events, compactions included (with their source); or, with `?format=`, its messages in that provider format, compactions left out (read them at `/compactions`)",
  "The raw stream.",
  EventsInAnyFormat,
  EventsQuery,
);

const projectionRead = conversationRead(
  "/v1/conversations/{id}/projection",
  "getProjection",
  "The compacted view for the next LLM call, and each turn's origin; with `?format=`, as that provider's request messages, ready to send; `If-None-Match` and `since` answer only what changed",
  "The projection (or with `since`, a `delta`), with its `ETag`.",
  ProjectionInAnyFormat,
  ProjectionQuery,
);
export const getProjection = createRoute({
  ...projectionRead,
  request: { ...projectionRead.request, headers: ProjectionHeaders },
  responses: {
    ...projectionRead.responses,
    200: { ...projectionRead.responses[200], headers: ETagHeader },
    304: { description: "`If-None-Match` names the view's version: no body.", headers: ETagHeader },
  },
});

export const listCompactions = conversationRead(
  "/v1/conversations/{id}/compactions",
  "listCompactions",
  "The compactions, with their 1-based positions",
  "The compactions in stream order.",
  CompactionsResponse,
);

export const getTimeline = conversationRead(
  "/v1/conversations/{id}/timeline",
  "getTimeline",
  "Per turn: raw and projected size, the threshold, and the band its evaluation fired or why it skipped",
  "The timeline, one entry per stored turn.",
  TimelineResponse,
);

export const listConversations = createRoute({
  method: "get",
  path: "/v1/conversations",
  operationId: "listConversations",
  summary: "The tenant's conversations, most recently active first, a page at a time",
  description:
    "Read from an index by tenant and last activity (never a scan). Pass `next_cursor` as `cursor` for the next page. A conversation stored before the list existed appears once it is written to again (a turn, a compaction change, a config).",
  request: { query: ListQuery },
  responses: {
    200: json("One page of conversations.", ConversationListResponse),
    ...authenticated,
    400: problem("Invalid `limit`, or a `cursor` this API did not give (`errors` locates it)."),
    401: unauthorized("Missing or unknown API key (`Authorization: Bearer <key>`)."),
  },
});

export const deleteConversation = createRoute({
  method: "delete",
  path: "/v1/conversations/{id}",
  operationId: "deleteConversation",
  summary: "Delete the conversation: its stream, compactions, config and sizes",
  description:
    "Idempotent: 204 whether the conversation existed or not, and a delete interrupted earlier is finished. Evaluations still queued for it do nothing; turns posted while it runs get a 503 with `Retry-After`, and once it is done turn 0 starts a new conversation.",
  request: { params: ConversationParams },
  responses: {
    204: { description: "The conversation is gone (or never existed)." },
    ...conversation,
    413: tooLarge,
    503: problem(
      "Too many concurrent writes while removing the conversation; repeat the request to finish the delete.",
    ),
  },
});

/** The header of an answer given again under its `Idempotency-Key`. */
const replayedHeader = {
  "idempotent-replayed": {
    description:
      "`true` when this is the kept answer of an earlier request under the same `Idempotency-Key`.",
    schema: { type: "string" as const, enum: ["true"] },
  },
};

export const addCompaction = createRoute({
  method: "post",
  path: "/v1/conversations/{id}/compactions",
  operationId: "addCompaction",
  summary:
    "Add a manual compaction from a DSL spec or a rule (or, with `dry_run=true`, preview it)",
  request: {
    params: ConversationParams,
    query: CompactionQuery,
    headers: IdempotencyHeaders,
    body: body("CompactionRequest", '`{"spec": "r+t:..-3"}` or `{"rule": {…}}`.'),
  },
  responses: {
    201: { ...json("The compaction added.", ListedCompaction), headers: replayedHeader },
    200: {
      ...json(
        "With `dry_run=true`: what the compaction would be and the estimate before and after it; nothing is written.",
        DryRunResponse,
      ),
      headers: replayedHeader,
    },
    ...conversation,
    404: notFound,
    429: throttled(
      "; or (`/problems/summary-budget`) a summary is asked and the tenant's summary tokens of the UTC day are used up (until `resets_at`)",
      z.union([RateLimitedProblem, SummaryBudgetProblem]),
    ),
    409: problemOf(
      "The `Idempotency-Key` was already used for another request to this conversation, or its first request is still running (`Retry-After`).",
      IdempotencyConflictProblem,
    ),
    413: tooLarge,
    415: notJson,
    422: problem(
      "The compaction cannot apply: an empty range, no turns yet, a summary without a summarizer, or too large to store.",
    ),
    502: problem("The summarizer failed or returned nothing."),
    503: contention,
    504: problem("The summarizer timed out."),
  },
});

/** Answers of the routes that remove compactions. */
const removal = (description: string) => ({
  200: json(description, RemovedResponse),
  ...conversation,
  404: notFound,
  413: tooLarge,
  503: contention,
});

export const resetCompactions = createRoute({
  method: "delete",
  path: "/v1/conversations/{id}/compactions",
  operationId: "resetCompactions",
  summary: "Remove all compactions, or all of one source",
  request: { params: ConversationParams, query: ResetQuery },
  responses: removal("The compactions removed."),
});

export const removeCompaction = createRoute({
  method: "delete",
  path: "/v1/conversations/{id}/compactions/{position}",
  operationId: "removeCompaction",
  summary: "Remove one compaction by its 1-based position",
  request: { params: CompactionParams },
  responses: {
    ...removal("The compaction removed."),
    422: problem("No compaction at that position."),
  },
});

export const getConfig = createRoute({
  method: "get",
  path: "/v1/conversations/{id}/config",
  operationId: "getConfig",
  summary: "The conversation's auto config layer and the effective config",
  request: { params: ConversationParams },
  responses: {
    200: json("The conversation's layer (empty if none) and the effective config.", ConfigResponse),
    ...conversation,
  },
});

export const putConfig = createRoute({
  method: "put",
  path: "/v1/conversations/{id}/config",
  operationId: "putConfig",
  summary: "Set the conversation's auto config layer",
  request: {
    params: ConversationParams,
    body: body("ConfigTree", '`{"conversation": {"compaction": {"auto": {…}}}}`.'),
  },
  responses: {
    200: json("The layer stored and the effective config.", ConfigResponse),
    ...conversation,
    413: tooLarge,
    415: notJson,
    422: problem("A summary rule on a service without a summarizer."),
    503: problem(
      "The conversation is being deleted; retry the request (after `Retry-After` seconds).",
    ),
  },
});

export const verifyConversation = createRoute({
  method: "post",
  path: "/v1/conversations/{id}/verify",
  operationId: "verifyConversation",
  summary: "Recompute the head's counters from the stored turns and compactions; report drift",
  description:
    "Recomputes `turn_count`, `projected_chars`, `max_compacted_turn`, `compactions_version` (at least every compaction's version) and `evaluated_through` (at most the last turn) from the stored turns and compactions, and each turn's size counts from its events, and lists every stored number that differs. With `repair=true` a drifted head gets the recomputed counters in one write conditional on the head that was checked. No request body.",
  request: { params: ConversationParams, query: VerifyQuery },
  responses: {
    200: json(
      "The drift found (empty when none), and whether the head was repaired.",
      VerifyResponse,
    ),
    ...conversation,
    404: notFound,
    413: tooLarge,
    503: problem(
      "Too many concurrent writes while repairing, or the conversation is being deleted; retry the request.",
    ),
  },
});

/** Answers of every notification route (authenticated, the tenant's own endpoint). */
const notifications = {
  ...authenticated,
  401: unauthorized("Missing or unknown API key (`Authorization: Bearer <key>`)."),
} as const;

export const putNotifications = createRoute({
  method: "put",
  path: "/v1/notifications",
  operationId: "putNotificationEndpoint",
  summary:
    "Register (or replace) the tenant's notification endpoint; answers its signing secret once",
  description:
    "Every firing (`compaction.fired`), every firing that left the view over the threshold (`compaction.still_over_threshold`) and every reset that removed compactions (`compactions.reset`) is POSTed to the URL as a Standard Webhooks message signed with the secret answered here; a redelivery keeps its `webhook-id`. A new PUT replaces the endpoint and its secret.",
  request: {
    body: body("NotificationRequest", '`{"url": "https://…", "events": [...]}`.'),
  },
  responses: {
    200: json(
      "The endpoint stored, with its signing secret (shown only now).",
      RegisteredEndpointResponse,
    ),
    ...notifications,
    400: problem(
      "Invalid body, or a URL that is refused: not https (when deployed), with credentials, not resolving, or at a private, loopback, link-local, metadata or otherwise non-public address (`errors` points at `/url`).",
    ),
    413: tooLarge,
    415: notJson,
  },
});

export const getNotifications = createRoute({
  method: "get",
  path: "/v1/notifications",
  operationId: "getNotificationEndpoint",
  summary: "The tenant's notification endpoint (without its secret)",
  responses: {
    200: json("The endpoint.", NotificationEndpointResponse),
    ...notifications,
    404: problem("No endpoint is registered."),
  },
});

export const deleteNotifications = createRoute({
  method: "delete",
  path: "/v1/notifications",
  operationId: "deleteNotificationEndpoint",
  summary: "Remove the tenant's notification endpoint; nothing more is sent",
  description: "Idempotent: 204 whether an endpoint was registered or not.",
  responses: {
    204: { description: "No endpoint is registered now." },
    ...notifications,
  },
});

/** Answers of every tenant settings route (authenticated, the tenant's own settings). */
const tenantSettings = {
  ...authenticated,
  400: problem("Invalid body (`errors` locates each problem)."),
  401: unauthorized("Missing or unknown API key (`Authorization: Bearer <key>`)."),
} as const;

export const getTenantConfig = createRoute({
  method: "get",
  path: "/v1/tenant/config",
  operationId: "getTenantConfig",
  summary: "The tenant's default auto config layer and the config a conversation starts with",
  description:
    "Layers, later wins: the service's defaults, this layer, a conversation's config deltas and its own `PUT …/config`. `effective` is the config of a conversation that has no layer of its own.",
  responses: {
    200: json("The tenant's layer (empty if none) and the effective config.", ConfigResponse),
    ...tenantSettings,
  },
});

export const putTenantConfig = createRoute({
  method: "put",
  path: "/v1/tenant/config",
  operationId: "putTenantConfig",
  summary: "Set the tenant's default auto config layer (every conversation's, below its own)",
  description:
    'Replaces the layer whole; `{"conversation":{"compaction":{"auto":{}}}}` removes it. Validated as a conversation\'s layer is: a 400 names every bad key in full.',
  request: {
    body: body("ConfigTree", '`{"conversation": {"compaction": {"auto": {…}}}}`.'),
  },
  responses: {
    200: json("The layer stored and the effective config.", ConfigResponse),
    ...tenantSettings,
    413: tooLarge,
    415: notJson,
    422: problem("A summary rule on a service without a summarizer."),
  },
});

export const getTenantModels = createRoute({
  method: "get",
  path: "/v1/tenant/models",
  operationId: "getTenantModels",
  summary: "The tenant's models: context windows over the deployment's catalog",
  responses: {
    200: json("The tenant's models (empty if none).", TenantModelsResponse),
    ...tenantSettings,
  },
});

export const putTenantModels = createRoute({
  method: "put",
  path: "/v1/tenant/models",
  operationId: "putTenantModels",
  summary: "Set the tenant's models (windows for ids the catalog lacks or has otherwise)",
  description:
    "Replaces them whole; `{\"models\":{}}` removes them. A turn's `model.context_window` wins over them; they win over the deployment's catalog and the bundled one.",
  request: {
    body: body("TenantModelsRequest", '`{"models": {"acme-coder-1": 64000}}`.'),
  },
  responses: {
    200: json("The tenant's models as stored.", TenantModelsResponse),
    ...tenantSettings,
    413: tooLarge,
    415: notJson,
  },
});
