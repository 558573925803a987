/**
 * The HTTP API (ARCHITECTURE §8): one Hono app, served by `handle(app)` on
 * Lambda and by @hono/node-server locally. Handlers are thin: parse with zod,
 * call the service, map the result; every error becomes an RFC 9457 problem
 * in `onError`.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { parseConfigTree, RuleLayer } from "../../core/config.ts";
import { parseStream } from "../../core/events.ts";
import type { ConversationService } from "../conversations/service.ts";
import { hashApiKey } from "../keys.ts";
import type { Clock, Tenant, TenantDirectory } from "../ports.ts";
import { systemClock } from "../ports.ts";
import {
  PayloadTooLargeError,
  RequestValidationError,
  toProblem,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from "./errors.ts";
import { openApiDocument } from "./openapi.ts";
import { type CompactionBody, ConversationId, ResetQuery, TurnBody } from "./schemas.ts";
import { verifyWebhook } from "./webhooks.ts";

/** Default request body limit: below Lambda's 6 MB synchronous payload limit. */
export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;

/** What the app needs. */
export interface AppDeps {
  readonly service: ConversationService;
  readonly tenants: TenantDirectory;
  readonly clock?: Clock;
  readonly bodyLimitBytes?: number;
  /** Called with every unexpected (5xx) error, for logging. */
  readonly onUnexpectedError?: (error: unknown, request: { method: string; path: string }) => void;
}

type Env = { Variables: { tenant: Tenant } };

function zodErrors(error: z.ZodError, prefix: string) {
  return error.issues.map((issue) => ({
    pointer: `${prefix}/${issue.path.map(String).join("/")}`.replace(/\/$/, ""),
    detail: issue.message,
  }));
}

function parseWith<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const errors = zodErrors(result.error, "");
    const first = errors[0];
    throw new RequestValidationError(
      `${what} is invalid: ${first ? `${first.pointer || "(root)"}: ${first.detail}` : "unknown problem"}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ""}`,
      errors,
    );
  }
  return result.data;
}

/** Deeper JSON than this is refused: nothing legitimate nests so deep, and deeper values exhaust the stack later. */
export const MAX_JSON_DEPTH = 100;

function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== "object" || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

function parseJson(text: string): unknown {
  if (text.trim() === "")
    throw new RequestValidationError("the request body is empty: send a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RequestValidationError(
      `the request body is not valid JSON (${(error as Error).message})`,
      [],
      {
        cause: error,
      },
    );
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    throw new RequestValidationError(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return value;
}

const COMPACTION_HINT =
  'send {"spec":"r+t:..-3"} (RFD 064 DSL) or {"rule":{"tool_calls":"strip","keep_last":3}}';

/** Reads a manual compaction request, naming the bad key of a rule. */
function compactionRequest(body: unknown): z.output<typeof CompactionBody> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new RequestValidationError(
      `the compaction request must be an object: ${COMPACTION_HINT}`,
    );
  }
  const keys = Object.keys(body);
  const record = body as Record<string, unknown>;
  if (keys.length !== 1 || !(keys[0] === "spec" || keys[0] === "rule")) {
    throw new RequestValidationError(
      `the compaction request needs exactly one of "spec" or "rule" (got ${keys.length === 0 ? "neither" : keys.map((k) => `"${k}"`).join(", ")}): ${COMPACTION_HINT}`,
    );
  }
  if (keys[0] === "spec") {
    if (typeof record.spec !== "string" || record.spec.trim() === "") {
      throw new RequestValidationError(`spec must be a non-empty string such as "r+t:..-3"`);
    }
    return { spec: record.spec };
  }
  const result = RuleLayer.safeParse(record.rule);
  if (!result.success) {
    const issues = result.error.issues.map((issue) =>
      issue.code === "unrecognized_keys"
        ? `rule.${issue.keys.join(", rule.")}: unknown key (known: ${Object.keys(RuleLayer.shape).join(", ")})`
        : `rule${issue.path.length > 0 ? `.${issue.path.map(String).join(".")}` : ""}: ${issue.message}`,
    );
    throw new RequestValidationError(
      issues.join("; "),
      issues.map((detail) => ({ pointer: "/rule", detail })),
    );
  }
  return { rule: result.data };
}

/** Builds the app. */
export function createApp(deps: AppDeps): Hono<Env> {
  const clock = deps.clock ?? systemClock;
  const app = new Hono<Env>();
  let openapi: Record<string, unknown> | undefined;

  app.onError((error, c) => {
    const problem = toProblem(error);
    if (problem.status >= 500)
      deps.onUnexpectedError?.(error, { method: c.req.method, path: c.req.path });
    return c.json(problem, problem.status as ContentfulStatusCode, {
      "content-type": "application/problem+json",
    });
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

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get("/v1/openapi.json", (c) => {
    openapi ??= openApiDocument();
    return c.json(openapi);
  });

  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
      onError: () => {
        throw new PayloadTooLargeError(
          `the body is larger than ${deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT} bytes: split large tool outputs or raise the limit`,
        );
      },
    }),
  );
  app.use("/v1/conversations/*", async (c, next) => {
    if (c.req.method === "POST" || c.req.method === "PUT") {
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
        throw new UnsupportedMediaTypeError(
          `send the body as JSON with \`content-type: application/json\` (got ${type ? `"${type}"` : "no content-type"})`,
        );
      }
    }
    const header = c.req.header("authorization");
    const key = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
    if (!key) throw new UnauthorizedError("send your API key as `Authorization: Bearer <key>`");
    const tenant = await deps.tenants.findByKeyHash(hashApiKey(key));
    if (!tenant) throw new UnauthorizedError("unknown API key");
    c.set("tenant", tenant);
    await next();
  });

  const conversationId = (raw: string | undefined) =>
    parseWith(ConversationId, raw, "the conversation id");

  app.post("/v1/conversations/:id/turns", async (c) => {
    const tenant = c.get("tenant");
    const id = conversationId(c.req.param("id"));
    const text = await c.req.text();
    if (tenant.webhook_secrets && tenant.webhook_secrets.length > 0) {
      verifyWebhook(
        tenant.webhook_secrets,
        {
          id: c.req.header("webhook-id"),
          timestamp: c.req.header("webhook-timestamp"),
          signature: c.req.header("webhook-signature"),
        },
        text,
        Math.floor(clock.nowMillis() / 1000),
      );
    }
    const body = parseWith(TurnBody, parseJson(text), "the turn");
    const parsed = parseStream(body.events);
    if (!parsed.ok) {
      const errors = parsed.issues.map((issue) => ({
        pointer: `/events/${issue.index}${issue.path ? `/${issue.path.replaceAll(".", "/").replace(/\[(\d+)\]/g, "/$1")}` : ""}`,
        detail: issue.message,
      }));
      const first = parsed.issues[0];
      throw new RequestValidationError(
        `events[${first?.index}]${first?.path ? `.${first.path}` : ""}: ${first?.message}${parsed.issues.length > 1 ? ` (and ${parsed.issues.length - 1} more)` : ""}`,
        errors,
      );
    }
    const outcome = await deps.service.appendTurn(tenant, id, {
      turn: body.turn,
      events: parsed.entries,
      ...(body.model ? { model: body.model } : {}),
    });
    return c.json(outcome, outcome.status === "created" ? 202 : 200);
  });

  app.get("/v1/conversations/:id", async (c) =>
    c.json(await deps.service.summary(c.get("tenant"), conversationId(c.req.param("id")))),
  );
  app.get("/v1/conversations/:id/events", async (c) =>
    c.json({
      events: await deps.service.events(c.get("tenant"), conversationId(c.req.param("id"))),
    }),
  );
  app.get("/v1/conversations/:id/projection", async (c) =>
    c.json(await deps.service.projection(c.get("tenant"), conversationId(c.req.param("id")))),
  );
  app.get("/v1/conversations/:id/compactions", async (c) =>
    c.json({
      compactions: await deps.service.compactions(
        c.get("tenant"),
        conversationId(c.req.param("id")),
      ),
    }),
  );
  app.post("/v1/conversations/:id/compactions", async (c) => {
    const id = conversationId(c.req.param("id"));
    return c.json(
      await deps.service.compact(
        c.get("tenant"),
        id,
        compactionRequest(parseJson(await c.req.text())),
      ),
      201,
    );
  });
  app.delete("/v1/conversations/:id/compactions", async (c) => {
    const id = conversationId(c.req.param("id"));
    const query = parseWith(ResetQuery, c.req.query(), "the query");
    return c.json(
      await deps.service.reset(c.get("tenant"), id, query.source ? { source: query.source } : {}),
    );
  });
  app.delete("/v1/conversations/:id/compactions/:position", async (c) => {
    const id = conversationId(c.req.param("id"));
    const raw = c.req.param("position");
    if (!/^\d+$/.test(raw) || Number(raw) < 1) {
      throw new RequestValidationError(`position must be a whole number from 1 (got "${raw}")`);
    }
    return c.json(await deps.service.reset(c.get("tenant"), id, { position: Number(raw) }));
  });
  app.get("/v1/conversations/:id/config", async (c) =>
    c.json(await deps.service.getConfig(c.get("tenant"), conversationId(c.req.param("id")))),
  );
  app.put("/v1/conversations/:id/config", async (c) => {
    const id = conversationId(c.req.param("id"));
    const layer = parseConfigTree(parseJson(await c.req.text()), { strict: true });
    return c.json(await deps.service.putConfig(c.get("tenant"), id, layer));
  });

  return app;
}
