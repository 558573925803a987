/**
 * The whole service in one stack (docs/architecture.md §2): the table, the FIFO
 * evaluation queue and its DLQ, the api function behind an HTTP API, the
 * compactor on the queue, the idle timers' queue (infra/idle-timers.ts), the
 * notifications' EventBridge bus, queue, DLQ and notifier function
 * (docs/architecture.md §16), and what operators watch (infra/operations.ts).
 *
 * Environment-agnostic (no `env`, no lookups): one template deploys to any
 * account and region, and `cdk synth` works offline.
 */
import { Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  HttpApi,
  HttpStage,
  LogGroupLogDestination,
  PayloadFormatVersion,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
} from "aws-cdk-lib/aws-dynamodb";
import type { EventBus, Rule } from "aws-cdk-lib/aws-events";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import {
  ApplicationLogLevel,
  Code,
  type FunctionProps,
  Function as LambdaFunction,
  LoggingFormat,
  SystemLogLevel,
  Tracing,
} from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import {
  DeduplicationScope,
  FifoThroughputLimit,
  Queue,
  QueueEncryption,
} from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { tableDefinition } from "../functions/store/table-definition.ts";
import { bedrockModelResources } from "./bedrock.ts";
import {
  bundlingOptions,
  entryPath,
  type FunctionName,
  LAMBDA_ARCH,
  LAMBDA_NODE_OPTIONS,
  REPO_ROOT,
  RUNTIME,
} from "./bundling.ts";
import {
  type AutocompactSettings,
  type AutocompactSettingsInput,
  resolveSettings,
  SettingsError,
} from "./config.ts";
import { IdleTimerQueue } from "./idle-timers.ts";
import { applyLimits } from "./limits.ts";
import { notificationChannel } from "./notifications.ts";
import { METRICS_NAMESPACE, Operations, SERVICE_NAMES } from "./operations.ts";
import { addOutputs } from "./outputs.ts";

export interface AutocompactStackProps extends StackProps {
  /** The deployment's settings (validated; see infra/config.ts and docs/deploy.md). */
  readonly settings?: AutocompactSettingsInput;
  /**
   * `false` swaps the esbuild bundles for a placeholder inline handler, so
   * unit tests synthesize in milliseconds. Everything else is identical.
   * Never deploy a stack built with `false`. Default `true`.
   */
  readonly bundle?: boolean;
}

/**
 * The table's TTL attribute (epoch seconds; functions/store/table-definition.ts,
 * which the local table gets too). The event chunks of a turn too big for
 * one transaction carry it (now + 24 h) until the transaction that commits
 * the turn removes it, so the chunks of a writer that crashed before
 * committing expire (functions/store/dynamodb-append.ts).
 */
export const TTL_ATTRIBUTE = tableDefinition.timeToLiveAttribute;

/** A key of the table definition as the CDK takes it. */
function keyAttribute(key: { readonly name: string; readonly type: "S" | "N" }) {
  return { name: key.name, type: key.type === "S" ? AttributeType.STRING : AttributeType.NUMBER };
}

/**
 * Memory and timeouts (arm64). Lambda gives CPU in proportion to memory
 * (1,769 MB = one vCPU), and cold starts are CPU-bound (parsing the bundle).
 *
 * - api, 1024 MB: a turn post parses and validates up to 5 MiB of JSON with
 *   zod and reads/writes DynamoDB; projections of long streams are CPU work
 *   on the request path. ~0.6 vCPU keeps p99 and cold starts low at a cost
 *   that is still dominated by API Gateway's per-request price.
 * - api, 29 s: API Gateway's HTTP API waits 30 s at most for an
 *   integration; the function stops first so it can log why. Normal requests
 *   take milliseconds; a manual summary compaction is the slow one.
 * - compactor, 512 MB: the no-fire path reads O(1) bytes (one head item);
 *   a firing reads the band's turns and writes one item; a summary waits on
 *   the network. Half a vCPU is plenty and half the api's price.
 * - compactor timeout: see infra/config.ts (60 s; with a summarizer, enough
 *   for each record of a batch to summarize), and the queue's visibility
 *   timeout is 6x it.
 */
const API_MEMORY_MB = 1024;
const API_TIMEOUT = Duration.seconds(29);
const COMPACTOR_MEMORY_MB = 512;

/**
 * The notifier: a POST per record (10 s timeout each, records of a batch in
 * parallel) and a table read; 256 MB is plenty (its queue: infra/notifications.ts).
 */
const NOTIFIER_MEMORY_MB = 256;
const NOTIFIER_TIMEOUT = Duration.seconds(30);

/**
 * What the stores (functions/store/*dynamodb*.ts) do in AWS: item reads and
 * queries, writes, and TransactWriteItems (authorized per contained action:
 * Put, Update, Delete, ConditionCheck). Narrower than grantReadWriteData:
 * no Scan (a whole-table, cross-tenant read only the local runtime's
 * recovery uses), no batch or stream actions. test/cdk checks this list
 * against the commands the functions' code sends.
 */
export const TABLE_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:ConditionCheckItem",
] as const;

/** Lambda's limit on a function's environment (all keys and values). */
const LAMBDA_ENVIRONMENT_LIMIT_BYTES = 4096;
/** What an unresolved token (table name, queue URL) may take once deployed. */
const TOKEN_ALLOWANCE_BYTES = 256;

const PLACEHOLDER_CODE =
  "exports.handler = async () => { throw new Error('placeholder code: this stack was synthesized with bundle=false (unit tests only)'); };";

/** The api's HTTP access log line (JSON; `awsEndpointRequestId` is the Lambda request id). */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: "$context.requestId",
  lambdaRequestId: "$context.awsEndpointRequestId",
  ip: "$context.identity.sourceIp",
  userAgent: "$context.identity.userAgent",
  requestTime: "$context.requestTime",
  method: "$context.httpMethod",
  path: "$context.path",
  routeKey: "$context.routeKey",
  status: "$context.status",
  protocol: "$context.protocol",
  responseLength: "$context.responseLength",
  responseLatency: "$context.responseLatency",
  integrationLatency: "$context.integrationLatency",
  integrationStatus: "$context.integrationStatus",
  integrationError: "$context.integrationErrorMessage",
  error: "$context.error.message",
});

export class AutocompactStack extends Stack {
  readonly settings: AutocompactSettings;
  readonly table: Table;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  /** The idle timers (`DelaySeconds` messages) the compactor sends itself, and their DLQ. */
  readonly idleTimers: IdleTimerQueue;
  /** Seals tenants' webhook secrets (envelope encryption; functions/secrets/kms.ts). */
  readonly secretsKey: Key;
  readonly apiFunction: LambdaFunction;
  readonly compactorFunction: LambdaFunction;
  /** Where the compactor and the api put notifications (AWS-side consumers may add rules). */
  readonly eventBus: EventBus;
  /** Forwards autocompact's events on the bus to {@link notificationQueue}. */
  readonly notificationRule: Rule;
  readonly notificationQueue: Queue;
  readonly notificationDeadLetterQueue: Queue;
  readonly notifierFunction: LambdaFunction;
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly logGroups: {
    readonly api: LogGroup;
    readonly compactor: LogGroup;
    readonly notifier: LogGroup;
    readonly access: LogGroup;
  };
  readonly operations: Operations;

  constructor(scope: Construct, id: string, props: AutocompactStackProps = {}) {
    super(scope, id, props);
    const settings = resolveSettings(props.settings);
    this.settings = settings;
    const bundle = props.bundle ?? true;
    const retention = settings.logRetentionDays as RetentionDays;

    // --- storage ---
    this.table = new Table(this, "Table", {
      partitionKey: keyAttribute(tableDefinition.partitionKey),
      sortKey: keyAttribute(tableDefinition.sortKey),
      billingMode: BillingMode[tableDefinition.billingMode],
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // Conversations and tenants outlive the stack: deleting the stack (or
      // a replacement by a bad change) must never delete them.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    // The tenant's conversations by last activity (GET /v1/conversations),
    // projecting only what the list shows (table-definition.ts `listIndex`).
    const { listIndex } = tableDefinition;
    this.table.addGlobalSecondaryIndex({
      indexName: listIndex.name,
      partitionKey: keyAttribute(listIndex.partitionKey),
      sortKey: keyAttribute(listIndex.sortKey),
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...listIndex.nonKeyAttributes],
    });

    // Webhook secrets are sealed under this key before they reach the table
    // (a data key per secret). Automatic rotation keeps every earlier key
    // material, so stored secrets keep opening. Kept with the table: secrets
    // sealed under a deleted key are lost. The CLI finds it by its alias.
    this.secretsKey = new Key(this, "WebhookSecretsKey", {
      description: "autocompact: seals tenants' webhook signing secrets (envelope encryption)",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.secretsKey.addAlias(`alias/autocompact/${this.table.tableName}`);

    // --- the evaluation queue ---
    // SSE-SQS: the messages hold ids only ({tenant, conversation, turn}), no
    // conversation content. SQS-managed keys cost nothing, need no kms:*
    // grants on either function and cannot be throttled by KMS; a customer
    // managed key would add key policy, per-request KMS cost and latency for
    // no confidentiality gain (see docs/deploy.md).
    const visibilityTimeout = Duration.seconds(settings.compactor.visibilityTimeoutSeconds);
    this.deadLetterQueue = new Queue(this, "DeadLetterQueue", {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The maximum, 14 days (a FIFO message's retention restarts when it
      // moves here): time to notice the alarm, fix, and redrive.
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, "EvaluationQueue", {
      fifo: true,
      // High-throughput FIFO: one message group per conversation, so
      // deduplication and throughput are per conversation, not per queue.
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });
    this.idleTimers = new IdleTimerQueue(this, "IdleTimers", { visibilityTimeout });

    // --- notifications (docs/architecture.md §16): bus, rule, queue, DLQ ---
    const channel = notificationChannel(this, NOTIFIER_TIMEOUT);
    this.eventBus = channel.eventBus;
    this.notificationRule = channel.rule;
    this.notificationQueue = channel.queue;
    this.notificationDeadLetterQueue = channel.deadLetterQueue;

    // --- functions ---
    const shared = {
      ...this.sharedEnvironment(settings),
      EVENT_BUS_NAME: this.eventBus.eventBusName,
    };
    this.logGroups = {
      api: new LogGroup(this, "ApiLogGroup", { retention }),
      compactor: new LogGroup(this, "CompactorLogGroup", { retention }),
      notifier: new LogGroup(this, "NotifierLogGroup", { retention }),
      access: new LogGroup(this, "ApiAccessLogGroup", { retention }),
    };
    this.apiFunction = this.serviceFunction("api", {
      bundle,
      description:
        "autocompact api: the HTTP API (Hono) — turns, reads, manual compactions, config",
      memorySize: API_MEMORY_MB,
      timeout: API_TIMEOUT,
      logGroup: this.logGroups.api,
      logLevel: settings.logLevel,
      environment: {
        ...shared,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAMES.api,
        QUEUE_URL: this.queue.queueUrl,
        WEBHOOK_SECRETS_KEY_ARN: this.secretsKey.keyArn,
        ...(settings.api.bodyLimitBytes
          ? { BODY_LIMIT_BYTES: String(settings.api.bodyLimitBytes) }
          : {}),
      },
    });
    this.compactorFunction = this.serviceFunction("compactor", {
      bundle,
      description:
        "autocompact compactor: evaluates D50 after each turn and appends auto compactions",
      memorySize: COMPACTOR_MEMORY_MB,
      timeout: Duration.seconds(settings.compactor.timeoutSeconds),
      logGroup: this.logGroups.compactor,
      logLevel: settings.logLevel,
      environment: {
        ...shared,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAMES.compactor,
        IDLE_TIMER_QUEUE_URL: this.idleTimers.queue.queueUrl,
      },
    });
    this.notifierFunction = this.serviceFunction("notifier", {
      bundle,
      description:
        "autocompact notifier: signs (Standard Webhooks) and POSTs notifications to tenants' endpoints",
      memorySize: NOTIFIER_MEMORY_MB,
      timeout: NOTIFIER_TIMEOUT,
      logGroup: this.logGroups.notifier,
      logLevel: settings.logLevel,
      environment: {
        TABLE_NAME: this.table.tableName,
        LOG_LEVEL: settings.logLevel,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAMES.notifier,
        WEBHOOK_SECRETS_KEY_ARN: this.secretsKey.keyArn,
        NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
      },
    });

    // --- least-privilege grants ---
    for (const fn of [this.apiFunction, this.compactorFunction]) {
      this.table.grant(fn, ...TABLE_ACTIONS);
    }
    this.queue.grantSendMessages(this.apiFunction);
    // The API opens inbound secrets (kms:Decrypt; adding them is the operator's,
    // with the CLI) and seals a tenant's new outbound notification secret on
    // PUT /v1/notifications (kms:GenerateDataKey, a data key per secret).
    this.secretsKey.grantDecrypt(this.apiFunction);
    this.secretsKey.grant(this.apiFunction, "kms:GenerateDataKey");
    this.compactorFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: settings.compactor.batchSize,
        // The compactor reports exactly the records that failed; the others,
        // a failed one's later turns included, are deleted (docs/architecture.md §2).
        reportBatchItemFailures: true,
        maxConcurrency: settings.compactor.maxConcurrency,
      }),
    ); // grants the compactor consume (receive, delete, change visibility) on the queue only
    this.idleTimers.connect(this.compactorFunction, settings.compactor);
    this.grantSummarizer(settings);
    // Both publish notifications (firings; resets); only the notifier reads
    // endpoints, opening their secrets (kms:Decrypt) and reading tenant items.
    for (const fn of [this.apiFunction, this.compactorFunction]) this.eventBus.grantPutEventsTo(fn);
    // The tenant item only (no index): not table.grant, which adds the indexes too.
    this.notifierFunction.addToRolePolicy(
      new PolicyStatement({ actions: ["dynamodb:GetItem"], resources: [this.table.tableArn] }),
    );
    this.secretsKey.grantDecrypt(this.notifierFunction);
    this.notifierFunction.addEventSource(
      new SqsEventSource(this.notificationQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
      }),
    );

    applyLimits(this, settings);
    // --- the HTTP API ---
    this.httpApi = new HttpApi(this, "HttpApi", {
      description: "autocompact: conversation turns in, compacted projections out",
      createDefaultStage: false,
      defaultIntegration: new HttpLambdaIntegration("ApiIntegration", this.apiFunction, {
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      }),
    });
    this.stage = new HttpStage(this, "DefaultStage", {
      httpApi: this.httpApi,
      stageName: "$default",
      autoDeploy: true,
      throttle: { rateLimit: settings.api.rateLimit, burstLimit: settings.api.burstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.logGroups.access),
        format: AccessLogFormat.custom(ACCESS_LOG_FORMAT),
      },
    });

    // --- operations ---
    this.operations = new Operations(this, "Operations", {
      settings,
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
      apiFunction: this.apiFunction,
      compactorFunction: this.compactorFunction,
      httpApi: this.httpApi,
      compactorLogGroup: this.logGroups.compactor,
      notificationDeadLetterQueue: this.notificationDeadLetterQueue,
      notifierFunction: this.notifierFunction,
      idleTimers: this.idleTimers,
    });

    this.acknowledgeRules();

    addOutputs(this);
  }

  /** The environment both functions read (functions/env.ts). */
  private sharedEnvironment(settings: AutocompactSettings): Record<string, string> {
    const summarizer = settings.summarizer;
    const environment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      LOG_LEVEL: settings.logLevel,
      SUMMARIZER: summarizer.kind,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      // Stack traces of the minified bundles point at the TypeScript sources.
      NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
    };
    if (settings.autoConfigJson) environment.AUTOCOMPACT_CONFIG = settings.autoConfigJson;
    if (settings.modelCatalog) environment.MODEL_CATALOG = JSON.stringify(settings.modelCatalog);
    if (summarizer.kind !== "none") environment.SUMMARY_MODEL_ID = summarizer.modelId;
    if (summarizer.kind === "openai-compatible") {
      environment.OPENAI_BASE_URL = summarizer.baseUrl;
      // The key itself never enters the template or the function's
      // configuration: the function reads the secret at cold start.
      if (summarizer.apiKeySecretName) {
        environment.OPENAI_API_KEY_SECRET_ID = summarizer.apiKeySecretName;
      }
    }
    return environment;
  }

  /** One function: its own role (no managed policies), log group, JSON logs, X-Ray. */
  private serviceFunction(
    name: FunctionName,
    options: {
      bundle: boolean;
      description: string;
      memorySize: number;
      timeout: Duration;
      logGroup: LogGroup;
      logLevel: AutocompactSettings["logLevel"];
      environment: Record<string, string>;
    },
  ): LambdaFunction {
    checkEnvironmentSize(name, options.environment);
    const Name = name[0]?.toUpperCase() + name.slice(1);
    const role = new Role(this, `${Name}Role`, {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: `autocompact ${name} function`,
    });
    // Instead of AWSLambdaBasicExecutionRole (logs:* on every log group):
    // write to this function's own log group only.
    options.logGroup.grantWrite(role);
    const common = {
      runtime: RUNTIME,
      architecture: LAMBDA_ARCH,
      handler: "index.handler",
      description: options.description,
      memorySize: options.memorySize,
      timeout: options.timeout,
      role,
      logGroup: options.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel[options.logLevel],
      // Keeps the platform's REPORT lines (duration, memory, init time).
      systemLogLevelV2: SystemLogLevel.INFO,
      tracing: Tracing.ACTIVE,
      environment: options.environment,
    } satisfies Omit<FunctionProps, "code">;
    if (!options.bundle) {
      return new LambdaFunction(this, `${Name}Function`, {
        ...common,
        code: Code.fromInline(PLACEHOLDER_CODE),
      });
    }
    return new NodejsFunction(this, `${Name}Function`, {
      ...common,
      entry: entryPath(name),
      projectRoot: REPO_ROOT,
      depsLockFilePath: `${REPO_ROOT}/package-lock.json`,
      bundling: bundlingOptions(name),
    });
  }

  /** Bedrock: InvokeModel on the configured models only; OpenAI: read its key's secret. */
  private grantSummarizer(settings: AutocompactSettings): void {
    const summarizer = settings.summarizer;
    const functions = [this.apiFunction, this.compactorFunction];
    if (summarizer.kind === "bedrock") {
      const resources = summarizer.modelIds.map(bedrockModelResources);
      const statement = new PolicyStatement({
        sid: "InvokeSummaryModels",
        actions: ["bedrock:InvokeModel"],
        resources: resources.flatMap((r) => r.arns),
      });
      for (const fn of functions) {
        fn.addToRolePolicy(statement);
        for (const finding of resources.flatMap((r) => r.wildcardFindings)) {
          Validations.of(fn.role ?? fn).acknowledge({
            id: `AwsSolutions-IAM5[${finding}]`,
            reason:
              "A cross-region inference profile routes each request to a region Bedrock picks, so the underlying foundation model must be allowed in every region; the resource is still that one model.",
          });
        }
      }
    }
    if (summarizer.kind === "openai-compatible" && summarizer.apiKeySecretName) {
      const secret = Secret.fromSecretNameV2(this, "OpenAiApiKey", summarizer.apiKeySecretName);
      for (const fn of functions) secret.grantRead(fn);
    }
  }

  /** cdk-nag findings that do not apply here, each with its reason. */
  private acknowledgeRules(): void {
    for (const fn of [this.apiFunction, this.compactorFunction, this.notifierFunction]) {
      Validations.of(fn).acknowledge({
        id: "Serverless-LambdaDLQ",
        reason:
          "The function is never invoked asynchronously: the api synchronously by API Gateway, the compactor and the notifier by SQS event source mappings, whose failed messages go to their queue's own DLQ.",
      });
      Validations.of(fn.role ?? fn).acknowledge({
        id: "AwsSolutions-IAM5[Resource::*]",
        reason:
          "Active X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions (the only wildcard; every other statement names its resources).",
      });
    }
    for (const fn of [this.apiFunction, this.compactorFunction]) {
      Validations.of(fn.role ?? fn).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.table.node.defaultChild as never)}.Arn>/index/*]`,
        reason:
          "The table's indexes (one: by-tenant-activity, the tenant's conversation list, a Query): table.grant names them as <table>/index/*; the actions are still the store's item-level list (TABLE_ACTIONS). The notifier's GetItem names the table alone.",
      });
    }
    for (const fn of [this.compactorFunction, this.notifierFunction]) {
      Validations.of(fn).acknowledge({
        id: "Serverless-LambdaEventSourceMappingDestination",
        reason:
          "SQS event source mappings take no on-failure destination: a message that keeps failing moves to the queue's redrive DLQ, and the DLQ is alarmed.",
      });
    }
    const dlqs = [this.deadLetterQueue, this.idleTimers.deadLetterQueue];
    for (const dlq of [...dlqs, this.notificationDeadLetterQueue]) {
      Validations.of(dlq).acknowledge({
        id: "Serverless-SQSRedrivePolicy",
        reason:
          "This queue is a dead-letter queue (of the evaluation queue, the idle timer queue, or the notification queue and rule): its messages are kept for inspection and redrive (alarmed when not empty), not redriven further.",
      });
    }
    Validations.of(this.httpApi).acknowledge({
      id: "AwsSolutions-APIG4",
      reason:
        "Authentication is done by the application: every /v1 route requires `Authorization: Bearer <tenant API key>` (SHA-256 looked up in the table, tenants isolated, 401 otherwise) and turn posts may require Standard Webhooks signatures; /healthz and /v1/openapi.json are public by design. An API Gateway authorizer would duplicate the lookup on every request.",
    });
  }
}

/** Lambda refuses an environment over 4 KB; fail at synth with the reason instead. */
function checkEnvironmentSize(name: string, environment: Record<string, string>): void {
  let bytes = 0;
  for (const [key, value] of Object.entries(environment)) {
    bytes +=
      Buffer.byteLength(key) +
      (Token.isUnresolved(value) ? TOKEN_ALLOWANCE_BYTES : Buffer.byteLength(value));
  }
  if (bytes > LAMBDA_ENVIRONMENT_LIMIT_BYTES) {
    throw new SettingsError([
      `autoConfig, modelCatalog: the ${name} function's environment would take about ${bytes} bytes, over Lambda's ${LAMBDA_ENVIRONMENT_LIMIT_BYTES}; shorten the config (e.g. summary instructions) or the catalog`,
    ]);
  }
}
