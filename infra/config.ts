/**
 * The deployment's settings: everything an operator chooses through stack
 * props or `cdk deploy -c key=value`, validated before a single resource is
 * synthesized. Every error names the setting (and, inside `autoConfig`, the
 * D50 key), so a bad deploy command fails at synth with a message that says
 * what to fix, not at the Lambdas' first cold start.
 *
 * The same keys are accepted as props (typed values) and as CDK context
 * (strings from `-c`, or JSON values from cdk.json): numbers and JSON are
 * parsed from strings here.
 */
import * as z from "zod";
import { ModelCatalogLayer } from "../core/catalog.ts";
import {
  type AutoConfigLayer,
  ConfigError,
  parseConfigTree,
  resolveAutoConfig,
  toConfigTree,
} from "../core/config.ts";
import { InvalidInputError } from "../core/errors.ts";
import { issueLines } from "../core/issues.ts";
import { DEFAULT_SUMMARY_TIMEOUT_MS } from "../functions/summarizers/common.ts";
import { IDLE_TIMER_MAX_CONCURRENCY } from "./idle-timers.ts";

/** Log levels of the Lambdas (Powertools Logger and Lambda's application log level). */
export const LOG_LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The retention periods CloudWatch Logs accepts (never "forever": logs hold tenants' ids). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
  3653,
] as const;

/** The summarizers the Lambdas know (functions/env.ts `SUMMARIZER`). */
export const SUMMARIZERS = ["none", "bedrock", "openai-compatible"] as const;

/**
 * Lambda's synchronous payload limit is 6 MiB for the whole event (headers,
 * path, body); the body limit keeps 256 KiB for the rest.
 */
export const MAX_BODY_LIMIT_BYTES = 6 * 1024 * 1024 - 256 * 1024;

/** Seconds one summary may take (the summarizers' own timeout). */
export const SUMMARY_TIMEOUT_SECONDS = Math.ceil(DEFAULT_SUMMARY_TIMEOUT_MS / 1000);

/** Lambda's longest timeout, and SQS's longest visibility timeout. */
const MAX_LAMBDA_TIMEOUT_SECONDS = 900;
const MAX_VISIBILITY_TIMEOUT_SECONDS = 12 * 60 * 60;

/**
 * The default p99 evaluation lag (seconds from a turn's post to the evaluation
 * that decided on it) that raises its alarm: a platform reading with
 * `after_turn` waits at most 25 s per request, so a minute means reads are
 * failing with `evaluation-pending`.
 */
export const DEFAULT_EVALUATION_LAG_ALARM_SECONDS = 60;

/** AWS Lambda's recommendation for SQS event sources: visibility >= 6 x the function timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/** A deployment's settings as given: every key optional (props or context). */
export interface AutocompactSettingsInput {
  /**
   * The service's default auto compaction config, as a D50 tree
   * (`{"conversation":{"compaction":{"auto":{…}}}}`) or its JSON text.
   * Tenants and conversations override it.
   */
  readonly autoConfig?: unknown;
  /** Model id → context window overrides of the bundled catalog (object or JSON text). */
  readonly modelCatalog?: unknown;
  /** `none` (default), `bedrock` or `openai-compatible`. */
  readonly summarizer?: string;
  /** The summary model (Bedrock model/inference profile id or ARN, or the OpenAI model name). */
  readonly summaryModelId?: string;
  /**
   * Further Bedrock models that tenants' or conversations' rules may name in
   * `summary.model.id` (JSON array or comma-separated). Each is granted.
   */
  readonly allowedSummaryModelIds?: unknown;
  /** The OpenAI-compatible endpoint's base URL (https). */
  readonly openaiBaseUrl?: string;
  /** The name of the Secrets Manager secret holding the endpoint's API key (SecretString). */
  readonly openaiApiKeySecretName?: string;
  /** `DEBUG`, `INFO` (default), `WARN` or `ERROR`. */
  readonly logLevel?: string;
  /** Retention of the functions' and the API's log groups, in days (default 30). */
  readonly logRetentionDays?: unknown;
  /** Steady-state requests per second of the HTTP API stage (default 50). */
  readonly apiRateLimit?: unknown;
  /** Burst of the HTTP API stage (default 100). */
  readonly apiBurstLimit?: unknown;
  /** Request body limit of the api function in bytes (default: the app's, 5 MiB). */
  readonly bodyLimitBytes?: unknown;
  /** Most concurrent compactor invocations the SQS event source starts (2..1000, default 10). */
  readonly compactorMaxConcurrency?: unknown;
  /** Messages per compactor invocation (1..10; default 10, or 1 with a summarizer). */
  readonly compactorBatchSize?: unknown;
  /** The compactor's timeout in seconds (default 60, or enough for a summary per record). */
  readonly compactorTimeoutSeconds?: unknown;
  /** Reserved concurrency of the compactor (default and least: compactorMaxConcurrency + the idle timers' 2). */
  readonly compactorReservedConcurrency?: unknown;
  /** Reserved concurrency of the notifier, and its event source's most concurrent invocations (2..1000, default 5). */
  readonly notifierReservedConcurrency?: unknown;
  /** Default per-tenant requests a second on each api instance (`TENANT_REQUESTS_PER_SECOND`, default 50). */
  readonly tenantRequestsPerSecond?: unknown;
  /** Default per-tenant burst on each api instance (`TENANT_REQUEST_BURST`, default 100). */
  readonly tenantRequestBurst?: unknown;
  /** Default per-tenant waiting reads on each api instance (`TENANT_WAITING_READS`, default 100). */
  readonly tenantWaitingReads?: unknown;
  /** Default per-tenant manual and dry-run summary tokens a UTC day (`TENANT_SUMMARY_TOKENS_PER_DAY`, default 2000000). */
  readonly tenantSummaryTokensPerDay?: unknown;
  /** Age in seconds of the oldest queued message that raises the queue-age alarm. */
  readonly queueAgeAlarmSeconds?: unknown;
  /** p99 evaluation lag (turn posted → evaluation decided) in seconds that raises its alarm (default 60). */
  readonly evaluationLagAlarmSeconds?: unknown;
  /** An SNS topic ARN the alarms notify (none by default). */
  readonly alarmTopicArn?: string;
}

/** The keys of {@link AutocompactSettingsInput}: the context keys the app reads. */
export const SETTING_KEYS = [
  "autoConfig",
  "modelCatalog",
  "summarizer",
  "summaryModelId",
  "allowedSummaryModelIds",
  "openaiBaseUrl",
  "openaiApiKeySecretName",
  "logLevel",
  "logRetentionDays",
  "apiRateLimit",
  "apiBurstLimit",
  "bodyLimitBytes",
  "compactorMaxConcurrency",
  "compactorBatchSize",
  "compactorTimeoutSeconds",
  "compactorReservedConcurrency",
  "notifierReservedConcurrency",
  "tenantRequestsPerSecond",
  "tenantRequestBurst",
  "tenantWaitingReads",
  "tenantSummaryTokensPerDay",
  "queueAgeAlarmSeconds",
  "evaluationLagAlarmSeconds",
  "alarmTopicArn",
] as const satisfies readonly (keyof AutocompactSettingsInput)[];

/** The summarizer a deployment uses. */
export type SummarizerSettings =
  | { readonly kind: "none" }
  | {
      readonly kind: "bedrock";
      /** The default model (`SUMMARY_MODEL_ID`). */
      readonly modelId: string;
      /** Every model the functions may invoke: the default, the allowed ones, the config's. */
      readonly modelIds: readonly string[];
    }
  | {
      readonly kind: "openai-compatible";
      readonly modelId: string;
      readonly baseUrl: string;
      readonly apiKeySecretName?: string;
    };

/** Validated settings with every default applied. */
export interface AutocompactSettings {
  /** The validated service config layer (empty: D50's built-in defaults). */
  readonly autoConfig: AutoConfigLayer;
  /** `AUTOCOMPACT_CONFIG`: the layer as a D50 tree in JSON, when one is set. */
  readonly autoConfigJson?: string;
  readonly modelCatalog?: Readonly<Record<string, number>>;
  readonly summarizer: SummarizerSettings;
  readonly logLevel: LogLevel;
  readonly logRetentionDays: (typeof LOG_RETENTION_DAYS)[number];
  readonly api: {
    readonly rateLimit: number;
    readonly burstLimit: number;
    readonly bodyLimitBytes?: number;
  };
  readonly compactor: {
    readonly maxConcurrency: number;
    readonly batchSize: number;
    readonly timeoutSeconds: number;
    readonly visibilityTimeoutSeconds: number;
    readonly reservedConcurrency: number;
  };
  readonly notifier: { readonly reservedConcurrency: number };
  /** The api's default tenant limits, as the environment it reads them from (functions/env.ts); only those set. */
  readonly tenantLimitsEnvironment: Readonly<Record<string, string>>;
  readonly alarms: {
    readonly queueAgeSeconds: number;
    /** p99 of `EvaluationLagMs` (in seconds) above which the evaluation-lag alarm fires. */
    readonly evaluationLagSeconds: number;
    readonly topicArn?: string;
  };
}

/** The settings are invalid; the message names each bad key. */
export class SettingsError extends InvalidInputError {
  override readonly name = "SettingsError";
  constructor(readonly messages: readonly string[]) {
    super(`invalid autocompact settings: ${messages.join("; ")}`, {
      issues: messages.map((detail) => ({ detail })),
    });
  }
}

// --- parsing helpers: a context value is a string, a prop or cdk.json value is typed ---

const fromText =
  (parse: (text: string) => unknown) =>
  (value: unknown): unknown =>
    typeof value === "string" ? parse(value.trim()) : value;

const numberText = fromText((text) => (text === "" ? undefined : Number(text)));

/** JSON text → value; unparsable text stays a string, which the schema then rejects. */
const jsonText = fromText((text) => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
});

/** A list given as a JSON array or as comma-separated text. */
const listText = fromText((text) => {
  if (text.startsWith("[")) return jsonText(text);
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
});

const wholeNumber = (min: number, max: number, unit: string) =>
  z.preprocess(
    numberText,
    z
      .number({ error: `must be a whole number of ${unit}` })
      .int(`must be a whole number of ${unit}`)
      .min(min, `must be at least ${min}`)
      .max(max, `must be at most ${max}`),
  );

/** A Bedrock model id, inference profile id, or a Bedrock ARN. */
const BEDROCK_MODEL =
  /^(arn:aws[a-z-]*:bedrock:[a-z0-9-]*:\d{0,12}:[a-z-]+\/[A-Za-z0-9._:/-]+|[A-Za-z0-9][A-Za-z0-9._:-]*)$/;

const SettingsSchema = z.strictObject({
  autoConfig: z.preprocess(jsonText, z.unknown()).optional(),
  modelCatalog: z.preprocess(jsonText, ModelCatalogLayer).optional(),
  summarizer: z
    .enum(SUMMARIZERS, { error: `must be one of ${SUMMARIZERS.join(", ")}` })
    .default("none"),
  summaryModelId: z.string().trim().min(1, "must not be empty").optional(),
  allowedSummaryModelIds: z
    .preprocess(
      listText,
      z.array(z.string().trim().min(1, "must not be empty"), {
        error: "must be a list of model ids (JSON array or comma-separated)",
      }),
    )
    .optional(),
  openaiBaseUrl: z.url({ protocol: /^https$/, error: "must be an https:// URL" }).optional(),
  openaiApiKeySecretName: z
    .string()
    .regex(
      /^[A-Za-z0-9/_+=.@-]{1,512}$/,
      "must be a Secrets Manager secret name (letters, digits, /_+=.@-)",
    )
    .optional(),
  logLevel: z
    .preprocess(
      fromText((text) => text.toUpperCase()),
      z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` }),
    )
    .default("INFO"),
  logRetentionDays: z
    .preprocess(
      numberText,
      z
        .number({ error: "must be a number of days" })
        .refine((days) => (LOG_RETENTION_DAYS as readonly number[]).includes(days), {
          error: `must be one of ${LOG_RETENTION_DAYS.join(", ")} (days CloudWatch Logs accepts)`,
        }),
    )
    .default(30),
  apiRateLimit: z
    .preprocess(
      numberText,
      z
        .number({ error: "must be a number of requests per second" })
        .positive("must be positive")
        .max(10_000, "must be at most 10000 (the account's API Gateway quota)"),
    )
    .default(50),
  apiBurstLimit: wholeNumber(1, 5_000, "requests").default(100),
  bodyLimitBytes: wholeNumber(1024, MAX_BODY_LIMIT_BYTES, "bytes").optional(),
  compactorMaxConcurrency: wholeNumber(2, 1000, "invocations").default(10),
  compactorBatchSize: wholeNumber(1, 10, "messages (SQS FIFO batches hold 10 at most)").optional(),
  compactorTimeoutSeconds: wholeNumber(10, MAX_LAMBDA_TIMEOUT_SECONDS, "seconds").optional(),
  compactorReservedConcurrency: wholeNumber(2, 1000, "invocations").optional(),
  notifierReservedConcurrency: wholeNumber(2, 1000, "invocations").default(5),
  tenantRequestsPerSecond: wholeNumber(1, 10_000, "requests a second").optional(),
  tenantRequestBurst: wholeNumber(1, 10_000, "requests").optional(),
  tenantWaitingReads: wholeNumber(1, 10_000, "reads").optional(),
  tenantSummaryTokensPerDay: wholeNumber(1, 1e12, "tokens").optional(),
  queueAgeAlarmSeconds: wholeNumber(60, 14 * 24 * 60 * 60, "seconds").optional(),
  evaluationLagAlarmSeconds: wholeNumber(1, 24 * 60 * 60, "seconds").default(
    DEFAULT_EVALUATION_LAG_ALARM_SECONDS,
  ),
  alarmTopicArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]+$/, "must be an SNS topic ARN")
    .optional(),
});

function formatIssues(error: z.ZodError): string[] {
  return issueLines(error.issues, {
    unknownKeys: { known: () => SETTING_KEYS, label: "unknown setting" },
  });
}

/** The Bedrock models a resolved config's rule names (granted with the default model). */
function configuredSummaryModels(layer: AutoConfigLayer): string[] {
  const id = resolveAutoConfig(layer).rule.summary?.model?.id;
  return id ? [id] : [];
}

/** Validates settings and applies the defaults. Throws {@link SettingsError}. */
export function resolveSettings(input: AutocompactSettingsInput = {}): AutocompactSettings {
  const parsed = SettingsSchema.safeParse(input);
  if (!parsed.success) throw new SettingsError(formatIssues(parsed.error));
  const s = parsed.data;
  const issues: string[] = [];

  let autoConfig: AutoConfigLayer = {};
  if (s.autoConfig !== undefined) {
    try {
      autoConfig = parseConfigTree(s.autoConfig);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.messages.map((message) => `autoConfig: ${message}`));
    }
  }

  const only = (key: keyof typeof s, kinds: string) => {
    if (s[key] !== undefined) issues.push(`${key}: only used with summarizer ${kinds}`);
  };
  let summarizer: SummarizerSettings = { kind: "none" };
  switch (s.summarizer) {
    case "none":
      only("summaryModelId", "bedrock or openai-compatible");
      only("allowedSummaryModelIds", "bedrock");
      only("openaiBaseUrl", "openai-compatible");
      only("openaiApiKeySecretName", "openai-compatible");
      if (resolveAutoConfig(autoConfig).rule.summary) {
        issues.push(
          "autoConfig: conversation.compaction.auto.rule.summary: needs a summarizer (set summarizer to bedrock or openai-compatible)",
        );
      }
      break;
    case "bedrock": {
      only("openaiBaseUrl", "openai-compatible");
      only("openaiApiKeySecretName", "openai-compatible");
      if (!s.summaryModelId) {
        issues.push(
          "summaryModelId: required with summarizer bedrock (a model or inference profile id)",
        );
        break;
      }
      const modelIds = [
        ...new Set([
          s.summaryModelId,
          ...(s.allowedSummaryModelIds ?? []),
          ...configuredSummaryModels(autoConfig),
        ]),
      ];
      for (const id of modelIds) {
        if (!BEDROCK_MODEL.test(id)) {
          issues.push(
            `${id === s.summaryModelId ? "summaryModelId" : "allowedSummaryModelIds"}: "${id}" is not a Bedrock model id, inference profile id or ARN`,
          );
        }
      }
      summarizer = { kind: "bedrock", modelId: s.summaryModelId, modelIds };
      break;
    }
    case "openai-compatible":
      only("allowedSummaryModelIds", "bedrock");
      if (!s.openaiBaseUrl)
        issues.push("openaiBaseUrl: required with summarizer openai-compatible");
      if (!s.summaryModelId) {
        issues.push("summaryModelId: required with summarizer openai-compatible (the model name)");
      }
      if (s.openaiBaseUrl && s.summaryModelId) {
        summarizer = {
          kind: "openai-compatible",
          modelId: s.summaryModelId,
          baseUrl: s.openaiBaseUrl,
          ...(s.openaiApiKeySecretName ? { apiKeySecretName: s.openaiApiKeySecretName } : {}),
        };
      }
      break;
  }

  // The compactor: a batch must finish within the timeout even when every
  // record summarizes (each summary may take SUMMARY_TIMEOUT_SECONDS).
  const summarizes = s.summarizer !== "none";
  const batchSize = s.compactorBatchSize ?? (summarizes ? 1 : 10);
  const perRecordSeconds = summarizes ? SUMMARY_TIMEOUT_SECONDS + 30 : 0;
  const minimumTimeout = Math.max(10, batchSize * perRecordSeconds);
  const timeoutSeconds = s.compactorTimeoutSeconds ?? Math.max(60, minimumTimeout);
  if (timeoutSeconds < minimumTimeout) {
    issues.push(
      `compactorTimeoutSeconds: must be at least ${minimumTimeout} with a summarizer and batches of ${batchSize} (each summary may take ${SUMMARY_TIMEOUT_SECONDS} s)`,
    );
  }
  if (minimumTimeout > MAX_LAMBDA_TIMEOUT_SECONDS) {
    issues.push(
      `compactorBatchSize: ${batchSize} summaries may not fit in Lambda's ${MAX_LAMBDA_TIMEOUT_SECONDS} s; use a smaller batch`,
    );
  }
  const visibilityTimeoutSeconds = VISIBILITY_TIMEOUT_FACTOR * timeoutSeconds;
  if (visibilityTimeoutSeconds > MAX_VISIBILITY_TIMEOUT_SECONDS) {
    issues.push(
      `compactorTimeoutSeconds: ${VISIBILITY_TIMEOUT_FACTOR}x it exceeds SQS's 12-hour visibility timeout`,
    );
  }

  // Below its two event sources' concurrency (the evaluations' and the idle
  // timers'), Lambda throttles their polls, and a throttled message's
  // receives count towards its dead-letter queue.
  const compactorSources = s.compactorMaxConcurrency + IDLE_TIMER_MAX_CONCURRENCY;
  const compactorReserved = s.compactorReservedConcurrency ?? compactorSources;
  if (compactorReserved < compactorSources) {
    issues.push(
      `compactorReservedConcurrency: must be at least compactorMaxConcurrency + ${IDLE_TIMER_MAX_CONCURRENCY} for the idle timers (${compactorSources}), or throttled messages head for the dead-letter queue`,
    );
  }

  if (s.apiBurstLimit < Math.ceil(s.apiRateLimit)) {
    issues.push(
      "apiBurstLimit: must be at least apiRateLimit (a burst smaller than one second's rate)",
    );
  }

  if (issues.length > 0) throw new SettingsError(issues);

  const autoConfigSet = Object.keys(autoConfig).length > 0;
  return {
    autoConfig,
    ...(autoConfigSet ? { autoConfigJson: JSON.stringify(toConfigTree(autoConfig)) } : {}),
    ...(s.modelCatalog ? { modelCatalog: s.modelCatalog } : {}),
    summarizer,
    logLevel: s.logLevel,
    logRetentionDays: s.logRetentionDays as (typeof LOG_RETENTION_DAYS)[number],
    api: {
      rateLimit: s.apiRateLimit,
      burstLimit: s.apiBurstLimit,
      ...(s.bodyLimitBytes ? { bodyLimitBytes: s.bodyLimitBytes } : {}),
    },
    compactor: {
      maxConcurrency: s.compactorMaxConcurrency,
      batchSize,
      timeoutSeconds,
      visibilityTimeoutSeconds,
      reservedConcurrency: compactorReserved,
    },
    notifier: { reservedConcurrency: s.notifierReservedConcurrency },
    tenantLimitsEnvironment: Object.fromEntries(
      (
        [
          ["TENANT_REQUESTS_PER_SECOND", s.tenantRequestsPerSecond],
          ["TENANT_REQUEST_BURST", s.tenantRequestBurst],
          ["TENANT_WAITING_READS", s.tenantWaitingReads],
          ["TENANT_SUMMARY_TOKENS_PER_DAY", s.tenantSummaryTokensPerDay],
        ] as const
      ).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])),
    ),
    alarms: {
      // Older than two receive cycles: a message has failed twice, or the backlog is not draining.
      queueAgeSeconds: s.queueAgeAlarmSeconds ?? Math.max(900, 2 * visibilityTimeoutSeconds),
      evaluationLagSeconds: s.evaluationLagAlarmSeconds,
      ...(s.alarmTopicArn ? { topicArn: s.alarmTopicArn } : {}),
    },
  };
}

/**
 * Reads the settings from CDK context (`-c key=value` or cdk.json). A context
 * key that looks like one of ours but is not (`loglevel`, `logLevels`) is an
 * error rather than silently ignored; keys with `:`, `@` or `-` belong to CDK
 * and other tools.
 */
export function settingsFromContext(
  tryGetContext: (key: string) => unknown,
  allContextKeys: readonly string[] = [],
): AutocompactSettingsInput {
  const known = new Set<string>(SETTING_KEYS);
  const strays = allContextKeys.filter((key) => /^[a-z][A-Za-z0-9]*$/.test(key) && !known.has(key));
  if (strays.length > 0) {
    throw new SettingsError(
      strays.map((key) => `${key}: unknown setting (known: stackName, ${SETTING_KEYS.join(", ")})`),
    );
  }
  const input: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = tryGetContext(key);
    if (value !== undefined) input[key] = value;
  }
  return input as AutocompactSettingsInput;
}
