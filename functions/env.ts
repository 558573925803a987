/**
 * The Lambdas' environment, read and validated once at cold start. A bad or
 * missing variable fails the cold start with a message naming it.
 */
import * as z from "zod";
import { layeredCatalog, type ModelCatalog, ModelCatalogLayer } from "../core/catalog.ts";
import { type AutoConfigLayer, ConfigError, parseConfigTree } from "../core/config.ts";
import { issueLines } from "../core/issues.ts";
import { SetupError } from "./errors.ts";
import type { TenantLimits } from "./ports.ts";

const jsonOf = <T extends z.ZodType>(schema: T) =>
  z.string().transform((text, ctx): z.output<T> => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be valid JSON" });
      return z.NEVER;
    }
    const result = schema.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues)
        ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return result.data;
  });

const count = (what: string) =>
  z.coerce.number().int(`must be a whole number of ${what}`).positive(`must be at least 1 ${what}`);

/** The deployment's default tenant limits (docs/architecture.md §8); a tenant's own override them. */
const LimitsSchema = z.object({
  TENANT_REQUESTS_PER_SECOND: count("requests a second").default(50),
  TENANT_REQUEST_BURST: count("requests").default(100),
  TENANT_WAITING_READS: count("reads").default(100),
  TENANT_SUMMARY_TOKENS_PER_DAY: count("tokens").default(2_000_000),
});

/** Every tenant limit, defaults filled in. */
export type LimitDefaults = Required<TenantLimits>;

/**
 * The default tenant limits of an environment (the API Lambda's and the
 * local runtime's); a bad value fails with a message naming the variable.
 */
export function readLimitDefaults(
  env: Readonly<Record<string, string | undefined>>,
): LimitDefaults {
  const result = LimitsSchema.safeParse(env);
  if (!result.success) {
    throw new SetupError(`invalid environment: ${issueLines(result.error.issues).join("; ")}`);
  }
  const e = result.data;
  return {
    requests_per_second: e.TENANT_REQUESTS_PER_SECOND,
    burst: e.TENANT_REQUEST_BURST,
    waiting_reads: e.TENANT_WAITING_READS,
    summary_tokens_per_day: e.TENANT_SUMMARY_TOKENS_PER_DAY,
  };
}

/** `MODEL_CATALOG`: the deployment's models, JSON (model id → context window in tokens). */
const CatalogSchema = z.object({ MODEL_CATALOG: jsonOf(ModelCatalogLayer).optional() });

/**
 * The deployment's catalog (the Lambdas' and the local runtime's): the
 * bundled models with `MODEL_CATALOG`'s over them (`layeredCatalog`), or
 * `undefined` (the bundled catalog) without it; a bad value fails naming it.
 */
export function readModelCatalog(
  env: Readonly<Record<string, string | undefined>>,
): ModelCatalog | undefined {
  const result = CatalogSchema.safeParse(env);
  if (!result.success) {
    throw new SetupError(`invalid environment: ${issueLines(result.error.issues).join("; ")}`);
  }
  const models = result.data.MODEL_CATALOG;
  return models ? layeredCatalog(models) : undefined;
}

const EnvSchema = z.object({
  TABLE_NAME: z.string().min(3, "must name the DynamoDB table (3+ characters)"),
  QUEUE_URL: z.string().url("must be the SQS queue URL").optional(),
  /** The standard queue of the idle timers (the compactor only; functions/queue/idle-timers.ts). */
  IDLE_TIMER_QUEUE_URL: z.string().url("must be the SQS queue URL").optional(),
  LOG_LEVEL: z
    .enum(["DEBUG", "INFO", "WARN", "ERROR", "debug", "info", "warn", "error"])
    .default("INFO"),
  /** The service config layer: a D50 tree as JSON (`{"conversation":{"compaction":{"auto":{…}}}}`). */
  AUTOCOMPACT_CONFIG: z.string().optional(),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().optional(),
  SUMMARIZER: z.enum(["none", "bedrock", "openai-compatible"]).default("none"),
  SUMMARY_MODEL_ID: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  /** A Secrets Manager secret holding the OpenAI-compatible key (how the CDK stack passes it). */
  OPENAI_API_KEY_SECRET_ID: z.string().min(1).optional(),
  SUMMARY_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  /** The KMS key sealing webhook secrets (the API only; its ARN, as the stack passes it). */
  WEBHOOK_SECRETS_KEY_ARN: z
    .string()
    .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/, "must be a KMS key ARN")
    .optional(),
  /** The stack's EventBridge bus, where the compactor and the API publish notifications. */
  EVENT_BUS_NAME: z
    .string()
    .regex(/^[A-Za-z0-9._/-]{1,256}$/, "must be an EventBridge bus name")
    .optional(),
});

/** The validated environment. */
export interface Environment {
  readonly tableName: string;
  readonly queueUrl?: string;
  readonly idleTimerQueueUrl?: string;
  readonly logLevel: string;
  readonly serviceConfig: AutoConfigLayer;
  readonly catalog?: ModelCatalog;
  readonly bodyLimitBytes?: number;
  readonly summarizer: "none" | "bedrock" | "openai-compatible";
  readonly summaryModelId?: string;
  readonly openaiBaseUrl?: string;
  readonly openaiApiKey?: string;
  readonly openaiApiKeySecretId?: string;
  readonly summaryTimeoutMs?: number;
  readonly webhookSecretsKeyArn?: string;
  readonly eventBusName?: string;
  /** The default tenant limits ({@link readLimitDefaults}). */
  readonly limits: LimitDefaults;
}

/** Validates an environment (`process.env` at the entry points). */
export function readEnvironment(env: Readonly<Record<string, string | undefined>>): Environment {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    throw new SetupError(`invalid environment: ${issueLines(result.error.issues).join("; ")}`);
  }
  const e = result.data;
  let serviceConfig: AutoConfigLayer = {};
  if (e.AUTOCOMPACT_CONFIG) {
    try {
      serviceConfig = parseConfigTree(JSON.parse(e.AUTOCOMPACT_CONFIG));
    } catch (error) {
      const reason = error instanceof ConfigError ? error.message : "must be valid JSON";
      throw new SetupError(`invalid environment: AUTOCOMPACT_CONFIG: ${reason}`, {
        cause: error,
      });
    }
  }
  if (e.SUMMARIZER === "openai-compatible" && !e.OPENAI_BASE_URL) {
    throw new SetupError(
      "invalid environment: OPENAI_BASE_URL: required when SUMMARIZER is openai-compatible",
    );
  }
  const limits = readLimitDefaults(env);
  const catalog = readModelCatalog(env);
  return {
    tableName: e.TABLE_NAME,
    limits,
    logLevel: e.LOG_LEVEL.toUpperCase(),
    serviceConfig,
    summarizer: e.SUMMARIZER,
    ...(e.QUEUE_URL ? { queueUrl: e.QUEUE_URL } : {}),
    ...(e.IDLE_TIMER_QUEUE_URL ? { idleTimerQueueUrl: e.IDLE_TIMER_QUEUE_URL } : {}),
    ...(catalog ? { catalog } : {}),
    ...(e.BODY_LIMIT_BYTES ? { bodyLimitBytes: e.BODY_LIMIT_BYTES } : {}),
    ...(e.SUMMARY_MODEL_ID ? { summaryModelId: e.SUMMARY_MODEL_ID } : {}),
    ...(e.OPENAI_BASE_URL ? { openaiBaseUrl: e.OPENAI_BASE_URL } : {}),
    ...(e.OPENAI_API_KEY ? { openaiApiKey: e.OPENAI_API_KEY } : {}),
    ...(e.OPENAI_API_KEY_SECRET_ID ? { openaiApiKeySecretId: e.OPENAI_API_KEY_SECRET_ID } : {}),
    ...(e.SUMMARY_TIMEOUT_MS ? { summaryTimeoutMs: e.SUMMARY_TIMEOUT_MS } : {}),
    ...(e.WEBHOOK_SECRETS_KEY_ARN ? { webhookSecretsKeyArn: e.WEBHOOK_SECRETS_KEY_ARN } : {}),
    ...(e.EVENT_BUS_NAME ? { eventBusName: e.EVENT_BUS_NAME } : {}),
  };
}
