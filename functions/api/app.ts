/**
 * The HTTP API (docs/architecture.md §8): one Hono app, served by `handle(app)` on
 * Lambda and by @hono/node-server locally. The routes are @hono/zod-openapi
 * definitions (routes.ts), from which `GET /v1/openapi.json` is generated;
 * keys are checked by `hono/bearer-auth`. Handlers are thin: parse with zod,
 * call the service, map the result; every error becomes an RFC 9457 problem.
 */

import type { Logger } from "@aws-lambda-powertools/logger";
import { type Hook, OpenAPIHono, z } from "@hono/zod-openapi";
import { bearerAuth } from "hono/bearer-auth";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { parseConfigTree, RuleLayer } from "../../core/config.ts";
import { InvalidInputError } from "../../core/errors.ts";
import { describeIssues, firstIssue, issueLines, joinIssues } from "../../core/issues.ts";
import {
  formatMessages,
  formatTurnUsage,
  turnBodyKind,
  turnEvents,
} from "../../core/turn-validation.ts";
import { mountConsole } from "../console/mount.ts";
import { matchesTag } from "../conversations/conditional-reads.ts";
import type { EvaluationWait } from "../conversations/evaluation-wait.ts";
import type { TurnPost } from "../conversations/posted-turn.ts";
import type { ConversationService } from "../conversations/service.ts";
import { putTenantConfig, tenantConfig } from "../conversations/tenant-settings.ts";
import { BEARER_CHALLENGE, UnauthorizedError } from "../errors.ts";
import { hashApiKey } from "../keys.ts";
import {
  type NotificationSettings,
  readEndpoint,
  registerEndpoint,
} from "../notifications/endpoints.ts";
import { resetNotifications } from "../notifications/events.ts";
import { ReliablePublisher, type ReliablePublishing } from "../notifications/reliable.ts";
import type {
  Clock,
  NotificationPublisher,
  Tenant,
  TenantDirectory,
  TenantSettings,
  WebhookReceipts,
} from "../ports.ts";
import { systemClock } from "../ports.ts";
import { verifyWebhook } from "../webhook-signature.ts";
import {
  type Problem,
  problemHeaders,
  REJECTED,
  RequestRejectedError,
  toProblem,
} from "./errors.ts";
import { bodyText, parseJson } from "./json-body.ts";
import { limitRequests, type TenantLimiter } from "./limits.ts";
import { DOCUMENT, registerComponents } from "./openapi.ts";
import * as routes from "./routes.ts";
import {
  type CompactionBody,
  ConversationId,
  DEFAULT_LIST_LIMIT,
  FormatTurnBody,
  MAX_SPEC_LENGTH,
  NotificationBody,
  TenantModelsBody,
  TurnBody,
} from "./schemas.ts";
import { rememberWebhook } from "./webhook-ids.ts";

/** Default request body limit: below Lambda's 6 MB synchronous payload limit. */
export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;

/** What the app needs. */
export interface AppDeps {
  readonly service: ConversationService;
  /** Where tenants are found by key, and their settings written (`/v1/tenant/…`). */
  readonly tenants: TenantDirectory & TenantSettings;
  readonly clock?: Clock;
  /** The signed posts' `webhook-id`s: the table's when deployed, so every instance sees them. */
  readonly webhookReceipts: WebhookReceipts;
  readonly bodyLimitBytes?: number;
  /** Per-tenant request rate and waiting reads (limits.ts); none without it. */
  readonly limiter?: TenantLimiter;
  /** Tenants' notification endpoints and the URLs allowed (docs/architecture.md §16). */
  readonly notifications: NotificationSettings;
  /**
   * Where a reset's `compactions.reset` is published (none without it),
   * through a {@link ReliablePublisher}: a failure is retried, logged and
   * counted, and the reset still answers its removed bands.
   */
  readonly notifier?: NotificationPublisher;
  /** The retries, log and metric of that publisher. */
  readonly publishing?: ReliablePublishing;
  /** Called with every 5xx answer, for logging: see {@link serverErrorLogger}. */
  readonly onServerError?: (error: unknown, request: FailedRequest) => void;
}

/** The request a 5xx answered, and the problem it answered with. */
export interface FailedRequest {
  readonly method: string;
  readonly path: string;
  readonly problem: Problem;
}

/**
 * Logs a 5xx answer as what it is: an unexpected fault (500) at ERROR as
 * `api.unexpected_error` with the error; a known one (contention, a failed
 * or slow summarizer) at WARN as `api.<problem type>`, with its detail.
 */
export function serverErrorLogger(
  logger: Pick<Logger, "error" | "warn">,
): (error: unknown, request: FailedRequest) => void {
  return (error, { method, path, problem }) => {
    if (problem.status === 500) {
      logger.error("api.unexpected_error", { error: error as Error, method, path });
      return;
    }
    const event = `api.${problem.type.replace("/problems/", "")}`;
    logger.warn(event, { method, path, status: problem.status, detail: problem.detail });
  };
}

type Env = { Variables: { tenant: Tenant } };

/** What a reset answers: the compactions it removed. */
type Removed = Awaited<ReturnType<ConversationService["reset"]>>;

/** The keys of the object `schema` has at `path`, if it is one. */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let current: z.ZodType | undefined = schema;
  for (const key of [...path, undefined]) {
    while (current instanceof z.ZodOptional || current instanceof z.ZodNullable)
      current = current.unwrap() as z.ZodType;
    if (!(current instanceof z.ZodObject)) return undefined;
    if (key === undefined) return Object.keys(current.shape);
    current = current.shape[String(key)] as z.ZodType | undefined;
  }
  return undefined;
}

/**
 * The 400 of a value that `schema` refused: every problem located by JSON
 * pointer (each unknown key its own, so a listing can be capped), the first
 * one in the detail.
 */
function invalid(error: z.ZodError, what: string, schema?: z.ZodType): InvalidInputError {
  const issues = describeIssues(error.issues, {
    notation: "pointer",
    unknownKeys: { known: (path) => schema && knownKeys(schema, path) },
  });
  return new InvalidInputError(
    `${what} is invalid: ${firstIssue(issues.map((issue) => issue.text)) || "unknown problem"}`,
    { issues: issues.map(({ pointer, message }) => ({ pointer, detail: message })) },
  );
}

function parseWith<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(result.error, what, schema);
  return result.data;
}

/**
 * A turn post's body: JP events (`events`, with no `format` or `format:
 * "jp"`), or one turn of a provider format's messages; exactly one of them.
 * The fields are the route schemas'; the rules of a turn, core's (turn-validation.ts).
 */
function turnPost(raw: unknown): TurnPost {
  const posted = turnBodyKind(raw);
  if (posted.kind === "events") {
    const body = parseWith(TurnBody, posted.body, "the turn");
    return {
      turn: body.turn,
      events: turnEvents(body.events),
      ...(body.model ? { model: body.model } : {}),
      ...(body.usage ? { usage: body.usage } : {}),
    };
  }
  const body = parseWith(FormatTurnBody, raw, "the turn");
  const usage = formatTurnUsage(body);
  return {
    turn: body.turn,
    ...(body.model ? { model: body.model } : {}),
    ...(usage ? { usage } : {}),
    format: body.format,
    messages: formatMessages(body),
    ...(body.drop_system === undefined ? {} : { drop_system: body.drop_system }),
    ...(body.timestamp === undefined ? {} : { timestamp: body.timestamp }),
  };
}

/** `after_turn` and `wait` of a read; `wait` alone has nothing to wait for. */
function evaluationWait(query: {
  readonly after_turn?: number | undefined;
  readonly wait?: number | undefined;
}): EvaluationWait | undefined {
  if (query.after_turn === undefined) {
    if (query.wait !== undefined) {
      throw new InvalidInputError("wait needs after_turn: the turn whose evaluation to wait for", {
        issues: [{ pointer: "/after_turn", detail: "missing" }],
      });
    }
    return undefined;
  }
  return { afterTurn: query.after_turn, waitMs: (query.wait ?? 0) * 1000 };
}

const conversationId = (raw: string | undefined) =>
  parseWith(ConversationId, raw, "the conversation id");

/**
 * Turns a failed validation of a route's path, query or headers into the
 * problem the handlers would report: the conversation id first, then the
 * position or the query.
 */
const validationHook: Hook<unknown, Env, string, undefined> = (result, c) => {
  if (result.success) return;
  // Every route but the list has a conversation id.
  if (c.req.param("id") !== undefined) conversationId(c.req.param("id"));
  if (result.target === "param") {
    throw new InvalidInputError(
      `position must be a whole number from 1 (got "${c.req.param("position")}")`,
    );
  }
  throw invalid(result.error, `the ${result.target}`);
};

const COMPACTION_HINT =
  'send {"spec":"r+t:..-3"} (RFD 064 DSL) or {"rule":{"tool_calls":"strip","keep_last":3}}';

/** Reads a manual compaction request, naming the bad key of a rule. */
function compactionRequest(body: unknown): z.output<typeof CompactionBody> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidInputError(`the compaction request must be an object: ${COMPACTION_HINT}`);
  }
  const keys = Object.keys(body);
  const record = body as Record<string, unknown>;
  if (keys.length !== 1 || !(keys[0] === "spec" || keys[0] === "rule")) {
    throw new InvalidInputError(
      `the compaction request needs exactly one of "spec" or "rule" (got ${keys.length === 0 ? "neither" : keys.map((k) => `"${k}"`).join(", ")}): ${COMPACTION_HINT}`,
    );
  }
  if (keys[0] === "spec") {
    if (typeof record.spec !== "string" || record.spec.trim() === "") {
      throw new InvalidInputError(`spec must be a non-empty string such as "r+t:..-3"`);
    }
    if (record.spec.length > MAX_SPEC_LENGTH) {
      throw new InvalidInputError(
        `spec must be at most ${MAX_SPEC_LENGTH} characters (got ${record.spec.length})`,
      );
    }
    return { spec: record.spec };
  }
  const result = RuleLayer.safeParse(record.rule);
  if (!result.success) {
    const issues = issueLines(result.error.issues, {
      prefix: ["rule"],
      unknownKeys: { known: (path) => knownKeys(RuleLayer, path) },
    });
    throw new InvalidInputError(joinIssues(issues), {
      issues: issues.map((detail) => ({ pointer: "/rule", detail })),
    });
  }
  return { rule: result.data };
}

/** A problem as a response (for middleware that answers by itself). */
function problemResponse(error: Error): Response {
  const problem = toProblem(error);
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: problemHeaders(error),
  });
}

const SEND_KEY = "send your API key as `Authorization: Bearer <key>`";

/** `POST /v1/conversations/{id}/verify`, the one POST without a body. */
const VERIFY_PATH = /^\/v1\/conversations\/[^/]+\/verify$/;

/** Builds the app. */
export function createApp(deps: AppDeps): OpenAPIHono<Env> {
  const clock = deps.clock ?? systemClock;
  const notifier = deps.notifier && new ReliablePublisher(deps.notifier, deps.publishing);
  const app = new OpenAPIHono<Env>({ defaultHook: validationHook });
  registerComponents(app);
  let openapi: ReturnType<typeof app.getOpenAPI31Document> | undefined;

  app.onError((error, c) => {
    // Middleware answers (bearer auth) are problems already.
    if (error instanceof HTTPException && error.res) return error.getResponse();
    const problem = toProblem(error);
    if (problem.status >= 500)
      deps.onServerError?.(error, { method: c.req.method, path: c.req.path, problem });
    return c.json(problem, problem.status as ContentfulStatusCode, problemHeaders(error));
  });
  app.notFound((c) =>
    c.json(
      {
        type: "/problems/not-found",
        title: "Not found",
        status: 404,
        detail: `no route for ${c.req.method} ${c.req.path}`,
      },
      404,
      { "content-type": "application/problem+json" },
    ),
  );

  app.openapi(routes.health, (c) => c.json({ ok: true as const }, 200));
  app.openapi(routes.openApi, (c) => {
    openapi ??= app.getOpenAPI31Document(DOCUMENT);
    return c.json(openapi, 200);
  });
  // The console and the API reference: their code loads on their first request only.
  mountConsole(app);

  // Authentication first: an unauthenticated request is a 401 whatever its body.
  const authenticate = bearerAuth<Env>({
    realm: "autocompact",
    verifyToken: async (key, c) => {
      const tenant = await deps.tenants.findByKeyHash(hashApiKey(key));
      if (tenant) c.set("tenant", tenant);
      return tenant !== undefined;
    },
    // 401 problems with today's details (the library answers 400 to a malformed header),
    // each with its RFC 6750 challenge.
    noAuthenticationHeader: { message: () => problemResponse(new UnauthorizedError(SEND_KEY)) },
    invalidAuthenticationHeader: {
      message: () =>
        problemResponse(
          new UnauthorizedError(SEND_KEY, {
            challenge: `${BEARER_CHALLENGE}, error="invalid_request"`,
          }),
        ),
    },
    invalidToken: {
      message: () =>
        problemResponse(
          new UnauthorizedError("unknown API key", {
            challenge: `${BEARER_CHALLENGE}, error="invalid_token"`,
          }),
        ),
    },
  });
  app.use("/v1/conversations/*", authenticate);
  app.use("/v1/notifications", authenticate);
  app.use("/v1/tenant/*", authenticate);
  if (deps.limiter) {
    app.use("/v1/conversations/*", limitRequests(deps.limiter));
    app.use("/v1/notifications", limitRequests(deps.limiter));
    app.use("/v1/tenant/*", limitRequests(deps.limiter));
  }
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
      onError: () => {
        throw new RequestRejectedError(
          REJECTED.payloadTooLarge,
          `the body is larger than ${deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT} bytes: split large tool outputs or raise the limit`,
        );
      },
    }),
  );
  const jsonBodies: Parameters<typeof app.use>[1] = async (c, next) => {
    // A verify has no body: it needs no content-type.
    if ((c.req.method === "POST" || c.req.method === "PUT") && !VERIFY_PATH.test(c.req.path)) {
      // Nothing decodes a compressed body: it would be read as (invalid) JSON text.
      const encoding = c.req.header("content-encoding")?.trim();
      if (encoding && encoding.toLowerCase() !== "identity") {
        throw new RequestRejectedError(
          REJECTED.unsupportedMediaType,
          `the body is sent with \`content-encoding: ${encoding}\`: send it uncompressed (identity-encoded JSON, no content-encoding header)`,
        );
      }
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
        throw new RequestRejectedError(
          REJECTED.unsupportedMediaType,
          `send the body as JSON with \`content-type: application/json\` (got ${type ? `"${type}"` : "no content-type"})`,
        );
      }
    }
    await next();
  };
  app.use("/v1/conversations/*", jsonBodies);
  app.use("/v1/notifications", jsonBodies);
  app.use("/v1/tenant/*", jsonBodies);

  app.openapi(routes.appendTurn, async (c) => {
    const tenant = c.get("tenant");
    const { id } = c.req.valid("param");
    const text = await bodyText(c.req);
    if (tenant.webhook_secrets && tenant.webhook_secrets.length > 0) {
      const nowSeconds = Math.floor(clock.nowMillis() / 1000);
      const message = verifyWebhook(
        tenant.webhook_secrets,
        {
          id: c.req.header("webhook-id"),
          timestamp: c.req.header("webhook-timestamp"),
          signature: c.req.header("webhook-signature"),
        },
        text,
        nowSeconds,
      );
      await rememberWebhook(
        deps.webhookReceipts,
        tenant.id,
        message,
        { conversation: id, body: text },
        nowSeconds,
      );
    }
    const { wait } = c.req.valid("query");
    const outcome = await deps.service.appendTurn(
      tenant,
      id,
      turnPost(parseJson(text)),
      wait === undefined ? {} : { waitMs: wait * 1000 },
    );
    return c.json(outcome, outcome.status === "created" ? 202 : 200);
  });

  app.openapi(routes.getConversation, async (c) => {
    const wait = evaluationWait(c.req.valid("query"));
    return c.json(await deps.service.summary(c.get("tenant"), c.req.valid("param").id, wait), 200);
  });
  app.openapi(routes.listEvents, async (c) => {
    const tenant = c.get("tenant");
    const { id } = c.req.valid("param");
    const { format = "jp", limit, cursor } = c.req.valid("query");
    const page = { ...(limit === undefined ? {} : { limit }), ...(cursor ? { cursor } : {}) };
    return c.json(
      format === "jp"
        ? await deps.service.events(tenant, id, page)
        : await deps.service.inFormat(tenant, id, format, "raw", { page }),
      200,
    );
  });
  app.openapi(routes.deleteConversation, async (c) => {
    await deps.service.deleteConversation(c.get("tenant"), c.req.valid("param").id);
    return c.body(null, 204);
  });
  app.openapi(routes.getProjection, async (c) => {
    const tenant = c.get("tenant");
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    const { format = "jp", limit, cursor, since } = query;
    const wait = evaluationWait(query);
    const page = { ...(limit === undefined ? {} : { limit }), ...(cursor ? { cursor } : {}) };
    const asked = since === undefined ? page : { ...page, since };
    const answer =
      format === "jp"
        ? await deps.service.projection(tenant, id, wait, asked)
        : await deps.service.inFormat(tenant, id, format, "projected", {
            ...(wait ? { wait } : {}),
            page: asked,
          });
    const etag = answer.etag as string;
    if (matchesTag(c.req.valid("header")["if-none-match"], etag)) {
      return c.body(null, 304, { etag });
    }
    return c.json(answer, 200, { etag });
  });
  app.openapi(routes.listCompactions, async (c) =>
    c.json(
      { compactions: await deps.service.compactions(c.get("tenant"), c.req.valid("param").id) },
      200,
    ),
  );
  app.openapi(routes.addCompaction, async (c) => {
    const tenant = c.get("tenant");
    const { id } = c.req.valid("param");
    const request = compactionRequest(parseJson(await bodyText(c.req)));
    const dryRun = c.req.valid("query").dry_run === "true";
    const run = async () =>
      dryRun
        ? { status: 200, body: await deps.service.dryRun(tenant, id, request) }
        : { status: 201, body: await deps.service.compact(tenant, id, request) };
    const key = c.req.valid("header")["idempotency-key"];
    if (key === undefined) {
      const { status, body } = await run();
      return c.json(body as never, status as 201);
    }
    // A retry under the key gets the first answer; the request is what decides "the same".
    /** An answer that could not be kept is logged as a fault; the request still answers. */
    const unkept = (error: unknown) =>
      deps.onServerError?.(error, {
        method: c.req.method,
        path: c.req.path,
        problem: toProblem(error),
      });
    const asked = { dry_run: dryRun, request };
    const once = await deps.service.once(tenant, id, key, asked, run, unkept);
    const headers = once.replayed ? { "idempotent-replayed": "true" } : undefined;
    return c.json(once.body as never, once.status as 201, headers);
  });
  app.openapi(routes.listConversations, async (c) => {
    const { limit = DEFAULT_LIST_LIMIT, cursor } = c.req.valid("query");
    const page = await deps.service.list(c.get("tenant"), {
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    return c.json(page, 200);
  });
  app.openapi(routes.getTimeline, async (c) =>
    c.json(await deps.service.timeline(c.get("tenant"), c.req.valid("param").id), 200),
  );
  /** A reset that removed bands is published as `compactions.reset` (never failing the reset). */
  const publishReset = async (tenant: Tenant, conversation: string, removed: Removed) => {
    const ref = { tenant: tenant.id, conversation };
    await notifier?.publish(resetNotifications(ref, removed.removed, clock.nowMillis()));
    return removed;
  };
  app.openapi(routes.resetCompactions, async (c) => {
    const { id } = c.req.valid("param");
    const { source } = c.req.valid("query");
    const tenant = c.get("tenant");
    const removed = await deps.service.reset(tenant, id, source ? { source } : {});
    return c.json(await publishReset(tenant, id, removed), 200);
  });
  app.openapi(routes.removeCompaction, async (c) => {
    const { id, position } = c.req.valid("param");
    const tenant = c.get("tenant");
    const removed = await deps.service.reset(tenant, id, { position });
    return c.json(await publishReset(tenant, id, removed), 200);
  });
  app.openapi(routes.getConfig, async (c) =>
    c.json(await deps.service.getConfig(c.get("tenant"), c.req.valid("param").id), 200),
  );
  app.openapi(routes.putConfig, async (c) => {
    const { id } = c.req.valid("param");
    const layer = parseConfigTree(parseJson(await bodyText(c.req)), { strict: true });
    return c.json(await deps.service.putConfig(c.get("tenant"), id, layer), 200);
  });
  app.openapi(routes.verifyConversation, async (c) => {
    const { id } = c.req.valid("param");
    const repair = c.req.valid("query").repair === "true";
    return c.json(await deps.service.verify(c.get("tenant"), id, { repair }), 200);
  });

  app.openapi(routes.putNotifications, async (c) => {
    const request = parseWith(
      NotificationBody,
      parseJson(await bodyText(c.req)),
      "the notification endpoint",
    );
    const { url, events, secret } = await registerEndpoint(
      deps.notifications,
      c.get("tenant").id,
      request,
    );
    return c.json({ url, ...(events ? { events: [...events] } : {}), secret }, 200);
  });
  app.openapi(routes.getNotifications, async (c) => {
    const { url, events } = await readEndpoint(deps.notifications, c.get("tenant").id);
    return c.json({ url, ...(events ? { events: [...events] } : {}) }, 200);
  });
  app.openapi(routes.deleteNotifications, async (c) => {
    await deps.notifications.endpoints.deleteEndpoint(c.get("tenant").id);
    return c.body(null, 204);
  });

  app.openapi(routes.getTenantConfig, (c) =>
    c.json(tenantConfig(deps.service.runnable.settings, c.get("tenant")), 200),
  );
  app.openapi(routes.putTenantConfig, async (c) => {
    const layer = parseConfigTree(parseJson(await bodyText(c.req)), { strict: true });
    const answer = await putTenantConfig(
      deps.service.runnable,
      deps.tenants,
      c.get("tenant"),
      layer,
    );
    return c.json(answer, 200);
  });
  app.openapi(routes.getTenantModels, (c) => c.json({ models: c.get("tenant").models ?? {} }, 200));
  app.openapi(routes.putTenantModels, async (c) => {
    const body = parseWith(TenantModelsBody, parseJson(await bodyText(c.req)), "the models");
    await deps.tenants.setModels(c.get("tenant").id, body.models);
    return c.json({ models: body.models }, 200);
  });

  return app;
}
