/**
 * The synthesized template, property by property (issue 4 "Build"), with
 * placeholder code: see bundles.suite.ts for the real bundles.
 *
 * This file also runs the other CDK suites that synthesize (imported below):
 * a process's first synth loads the CloudFormation rules that cdk.json's
 * `validateAgainstDefaultRules` checks every template against (WebAssembly,
 * about 6 s of CPU), and as test files of their own they landed on every
 * integration worker, each paying it (docs/architecture.md §11).
 */
import "./bundles.suite.ts";
import "./nag.suite.ts";
import "./notifications.suite.ts";
import "./secrets-key.suite.ts";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { createTableInput } from "../../functions/store/dynamodb-table.ts";
import { tableDefinition } from "../../functions/store/table-definition.ts";
import { REPO_ROOT } from "../../infra/bundling.ts";
import {
  LOGS_INSIGHTS_QUERIES,
  METRICS_NAMESPACE,
  SERVICE_NAMES,
  SKIP_METRIC_REASONS,
} from "../../infra/operations.ts";
import { TABLE_ACTIONS, TTL_ATTRIBUTE } from "../../infra/stack.ts";
import {
  allowStatements,
  asArray,
  defaultSynth,
  functionStatements,
  hasQueueNotEmptyAlarm,
  logicalId,
  resourcesOf,
  type Synthesized,
  synth,
} from "./synth.ts";

type Props = Record<string, unknown>;

const s = defaultSynth();

const propsOf = (synthesized: Synthesized, id: string): Props => {
  const resource = synthesized.json.Resources[id];
  if (!resource) throw new Error(`no resource ${id}`);
  return resource.Properties ?? {};
};

describe("table", () => {
  it("is on-demand, with PITR, TTL on expires_at, AWS-managed encryption, pk/sk strings", () => {
    s.template.resourceCountIs("AWS::DynamoDB::Table", 1);
    s.template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      // SSEEnabled without a key: KMS with the AWS managed key aws/dynamodb.
      SSESpecification: { SSEEnabled: true, KMSMasterKeyId: Match.absent() },
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
        { AttributeName: "list_pk", AttributeType: "S" },
        { AttributeName: "active_at", AttributeType: "N" },
      ],
      DeletionProtectionEnabled: true,
    });
    expect(TTL_ATTRIBUTE).toBe("expires_at");
  });

  it("has the keys, index, billing and TTL attribute of the table the code creates locally (dynamodb-table.ts)", () => {
    const { KeySchema, AttributeDefinitions, BillingMode, GlobalSecondaryIndexes } =
      createTableInput("any");
    s.template.hasResourceProperties("AWS::DynamoDB::Table", {
      KeySchema,
      AttributeDefinitions,
      GlobalSecondaryIndexes,
      BillingMode,
      TimeToLiveSpecification: {
        AttributeName: tableDefinition.timeToLiveAttribute,
        Enabled: true,
      },
    });
  });

  it("has one index, by tenant and last activity, projecting only what the list shows", () => {
    s.template.hasResourceProperties("AWS::DynamoDB::Table", {
      GlobalSecondaryIndexes: [
        {
          IndexName: "by-tenant-activity",
          KeySchema: [
            { AttributeName: "list_pk", KeyType: "HASH" },
            { AttributeName: "active_at", KeyType: "RANGE" },
          ],
          Projection: {
            ProjectionType: "INCLUDE",
            NonKeyAttributes: [
              "turn_count",
              "projected_chars",
              "model",
              "bands",
              "last_fired_at",
              "deleting",
            ],
          },
        },
      ],
    });
    // Querying an index needs its own resource in the grant.
    const queried = allowStatements(s)
      .filter((st) => asArray(st.Action).includes("dynamodb:Query"))
      .flatMap((st) => asArray(st.Resource));
    expect(JSON.stringify(queried)).toContain("/index/*");
  });

  it("is retained when the stack is deleted or the table replaced", () => {
    s.template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
    });
  });
});

describe("queues", () => {
  let queueId: string;
  let dlqId: string;
  beforeAll(() => {
    queueId = logicalId(s.stack, s.stack.queue);
    dlqId = logicalId(s.stack, s.stack.deadLetterQueue);
  });

  it("are both FIFO with SQS-managed SSE (besides the timer and notification queues and their DLQs)", () => {
    s.template.resourceCountIs("AWS::SQS::Queue", 6);
    for (const id of [queueId, dlqId]) {
      expect(propsOf(s, id)).toMatchObject({ FifoQueue: true, SqsManagedSseEnabled: true });
    }
  });

  it("redrive to the DLQ after 5 receives", () => {
    expect(propsOf(s, queueId).RedrivePolicy).toEqual({
      deadLetterTargetArn: { "Fn::GetAtt": [dlqId, "Arn"] },
      maxReceiveCount: 5,
    });
    expect(propsOf(s, dlqId).RedrivePolicy).toBeUndefined();
    // Dead letters are kept longer (14 days) than live messages.
    expect(propsOf(s, dlqId).MessageRetentionPeriod).toBeGreaterThan(
      propsOf(s, queueId).MessageRetentionPeriod as number,
    );
  });

  it("are high-throughput FIFO (deduplication and throughput per conversation)", () => {
    expect(propsOf(s, queueId)).toMatchObject({
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
    });
  });

  it("deny every request not over TLS", () => {
    for (const id of [queueId, dlqId]) {
      s.template.hasResourceProperties("AWS::SQS::QueuePolicy", {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            {
              Effect: "Deny",
              Principal: { AWS: "*" },
              Action: "sqs:*",
              Condition: { Bool: { "aws:SecureTransport": "false" } },
              Resource: { "Fn::GetAtt": [id, "Arn"] },
            },
          ]),
        },
      });
    }
  });

  it("hide a message for at least 6x the compactor's timeout", () => {
    for (const settings of [
      {},
      { summarizer: "bedrock", summaryModelId: "amazon.nova-lite-v1:0" },
      { compactorTimeoutSeconds: 300 },
    ]) {
      const synthesized = synth(settings);
      const compactor = propsOf(
        synthesized,
        logicalId(synthesized.stack, synthesized.stack.compactorFunction),
      );
      const queue = propsOf(synthesized, logicalId(synthesized.stack, synthesized.stack.queue));
      expect(queue.VisibilityTimeout as number).toBeGreaterThanOrEqual(
        6 * (compactor.Timeout as number),
      );
    }
  });
});

describe("functions", () => {
  let api: Props;
  let compactor: Props;
  beforeAll(() => {
    api = propsOf(s, logicalId(s.stack, s.stack.apiFunction));
    compactor = propsOf(s, logicalId(s.stack, s.stack.compactorFunction));
  });

  it("run Node.js 22 or newer on arm64, with X-Ray", () => {
    s.template.resourceCountIs("AWS::Lambda::Function", 3);
    for (const fn of [api, compactor, propsOf(s, logicalId(s.stack, s.stack.notifierFunction))]) {
      expect(fn.Runtime).toMatch(/^nodejs(2[2-9]|[3-9]\d)\.x$/);
      expect(fn.Architectures).toEqual(["arm64"]);
      expect(fn.Handler).toBe("index.handler");
      expect(fn.TracingConfig).toEqual({ Mode: "Active" });
    }
  });

  it("log JSON at the configured level to their own log group with retention", () => {
    for (const [fn, group] of [
      [api, s.stack.logGroups.api],
      [compactor, s.stack.logGroups.compactor],
    ] as const) {
      expect(fn.LoggingConfig).toEqual({
        LogFormat: "JSON",
        ApplicationLogLevel: "INFO",
        SystemLogLevel: "INFO",
        LogGroup: { Ref: logicalId(s.stack, group) },
      });
      expect(propsOf(s, logicalId(s.stack, group)).RetentionInDays).toBe(30);
    }
    const debug = synth({ logLevel: "DEBUG", logRetentionDays: 7 });
    const fn = propsOf(debug, logicalId(debug.stack, debug.stack.compactorFunction));
    expect(fn.LoggingConfig).toMatchObject({ ApplicationLogLevel: "DEBUG" });
    expect((fn.Environment as { Variables: Props }).Variables.LOG_LEVEL).toBe("DEBUG");
    expect(
      propsOf(debug, logicalId(debug.stack, debug.stack.logGroups.compactor)).RetentionInDays,
    ).toBe(7);
  });

  it("have the chosen memory and timeouts (api inside API Gateway's 30 s)", () => {
    expect(api).toMatchObject({ MemorySize: 1024, Timeout: 29 });
    expect(compactor).toMatchObject({ MemorySize: 512, Timeout: 60 });
  });

  it("get the environment functions/env.ts reads", () => {
    const env = (fn: Props) => (fn.Environment as { Variables: Props }).Variables;
    const tableRef = { Ref: logicalId(s.stack, s.stack.table) };
    const common = {
      TABLE_NAME: tableRef,
      LOG_LEVEL: "INFO",
      SUMMARIZER: "none",
      POWERTOOLS_METRICS_NAMESPACE: "Autocompact",
      NODE_OPTIONS: "--enable-source-maps",
    };
    expect(env(api)).toEqual({
      ...common,
      POWERTOOLS_SERVICE_NAME: "autocompact-api",
      QUEUE_URL: { Ref: logicalId(s.stack, s.stack.queue) },
      WEBHOOK_SECRETS_KEY_ARN: { "Fn::GetAtt": [logicalId(s.stack, s.stack.secretsKey), "Arn"] },
      EVENT_BUS_NAME: { Ref: logicalId(s.stack, s.stack.eventBus) },
    });
    expect(env(compactor)).toEqual({
      ...common,
      POWERTOOLS_SERVICE_NAME: "autocompact-compactor",
      EVENT_BUS_NAME: { Ref: logicalId(s.stack, s.stack.eventBus) },
      IDLE_TIMER_QUEUE_URL: { Ref: logicalId(s.stack, s.stack.idleTimers.queue) },
    });
    expect(env(api).IDLE_TIMER_QUEUE_URL).toBeUndefined();

    const configured = synth({
      autoConfig: { conversation: { compaction: { auto: { enabled: true, min_turns: 3 } } } },
      modelCatalog: { "my-model": 64000 },
      bodyLimitBytes: 2_000_000,
      summarizer: "openai-compatible",
      summaryModelId: "gpt-4o-mini",
      openaiBaseUrl: "https://llm.example.com/v1",
      openaiApiKeySecretName: "autocompact/openai",
    });
    const configuredApi = env(
      propsOf(configured, logicalId(configured.stack, configured.stack.apiFunction)),
    );
    expect(configuredApi).toMatchObject({
      AUTOCOMPACT_CONFIG: '{"conversation":{"compaction":{"auto":{"enabled":true,"min_turns":3}}}}',
      MODEL_CATALOG: '{"my-model":64000}',
      BODY_LIMIT_BYTES: "2000000",
      SUMMARIZER: "openai-compatible",
      SUMMARY_MODEL_ID: "gpt-4o-mini",
      OPENAI_BASE_URL: "https://llm.example.com/v1",
      OPENAI_API_KEY_SECRET_ID: "autocompact/openai",
    });
    expect(JSON.stringify(configured.json)).not.toContain('OPENAI_API_KEY"');
    const configuredCompactor = env(
      propsOf(configured, logicalId(configured.stack, configured.stack.compactorFunction)),
    );
    expect(configuredCompactor.BODY_LIMIT_BYTES).toBeUndefined();
    expect(configuredCompactor.QUEUE_URL).toBeUndefined();
    expect(configuredCompactor.AUTOCOMPACT_CONFIG).toBe(configuredApi.AUTOCOMPACT_CONFIG);
  });

  it("use the compactor's metrics namespace, defined once in functions/observability.ts", () => {
    expect(METRICS_NAMESPACE).toBe("Autocompact");
  });

  it("agree with the entry points on the Powertools service names (the `service` dimension)", async () => {
    // The entry points read their environment at import, as at a cold start.
    vi.stubEnv("TABLE_NAME", "autocompact-test");
    vi.stubEnv("QUEUE_URL", "https://sqs.eu-west-1.amazonaws.com/123456789012/q.fifo");
    vi.stubEnv("AWS_REGION", "eu-west-1");
    vi.stubEnv(
      "WEBHOOK_SECRETS_KEY_ARN",
      "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    );
    try {
      const compactor = await import("../../functions/compactor/index.ts");
      const api = await import("../../functions/api/lambda.ts");
      // The dashboard and the Failed alarm select service=autocompact-compactor:
      // any other name leaves them without data.
      expect(compactor.SERVICE_NAME, "functions/compactor/index.ts SERVICE_NAME").toBe(
        SERVICE_NAMES.compactor,
      );
      expect(api.SERVICE_NAME, "functions/api/lambda.ts SERVICE_NAME").toBe(SERVICE_NAMES.api);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("compactor event source", () => {
  it("reports batch item failures with a bounded concurrency", () => {
    // The compactor's two (evaluations, idle timers below), and the notifier's (test/cdk/notifications.suite.ts).
    s.template.resourceCountIs("AWS::Lambda::EventSourceMapping", 3);
    s.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [logicalId(s.stack, s.stack.queue), "Arn"] },
      FunctionName: { Ref: logicalId(s.stack, s.stack.compactorFunction) },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const tuned = synth({ compactorMaxConcurrency: 3, compactorBatchSize: 5 });
    tuned.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      BatchSize: 5,
      ScalingConfig: { MaximumConcurrency: 3 },
    });
  });
});

describe("concurrency and tenant limits", () => {
  const properties = (synthed: Synthesized, fn: { node: { defaultChild?: unknown } }) =>
    (synthed.json.Resources[logicalId(synthed.stack, fn)]?.Properties ?? {}) as Props;
  const reserved = (synthed: Synthesized, fn: { node: { defaultChild?: unknown } }) =>
    properties(synthed, fn).ReservedConcurrentExecutions;

  it("reserves 12 for the compactor (10 evaluations, 2 idle timers) and 5 for the notifier, its event source at most 5", () => {
    expect(reserved(s, s.stack.compactorFunction)).toBe(12);
    expect(reserved(s, s.stack.notifierFunction)).toBe(5);
    expect(reserved(s, s.stack.apiFunction)).toBeUndefined();
    s.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalId(s.stack, s.stack.notifierFunction) },
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it("takes both from the settings, and refuses a compactor reservation below its event source's", () => {
    const tuned = synth({
      compactorMaxConcurrency: 20,
      compactorReservedConcurrency: 30,
      notifierReservedConcurrency: 3,
    });
    expect(reserved(tuned, tuned.stack.compactorFunction)).toBe(30);
    expect(reserved(tuned, tuned.stack.notifierFunction)).toBe(3);
    tuned.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalId(tuned.stack, tuned.stack.notifierFunction) },
      ScalingConfig: { MaximumConcurrency: 3 },
    });
    expect(() => synth({ compactorMaxConcurrency: 20, compactorReservedConcurrency: 21 })).toThrow(
      "compactorReservedConcurrency: must be at least compactorMaxConcurrency + 2 for the idle timers (22), or throttled messages head for the dead-letter queue",
    );
    expect(reserved(synth({ compactorMaxConcurrency: 20 }), s.stack.compactorFunction)).toBe(22);
  });

  it("passes the tenant limit defaults set to the api's environment, and none otherwise", () => {
    const env = (synthed: Synthesized) =>
      (properties(synthed, synthed.stack.apiFunction).Environment as { Variables: Props })
        .Variables;
    expect(Object.keys(env(s)).filter((name) => name.startsWith("TENANT_"))).toEqual([]);
    const tuned = synth({ tenantWaitingReads: 20, tenantSummaryTokensPerDay: 500_000 });
    expect(env(tuned)).toMatchObject({
      TENANT_WAITING_READS: "20",
      TENANT_SUMMARY_TOKENS_PER_DAY: "500000",
    });
    expect(env(tuned).TENANT_REQUESTS_PER_SECOND).toBeUndefined();
  });
});

describe("HTTP API", () => {
  it("routes everything to the api function (payload 2.0)", () => {
    s.template.resourceCountIs("AWS::ApiGatewayV2::Api", 1);
    s.template.hasResourceProperties("AWS::ApiGatewayV2::Api", { ProtocolType: "HTTP" });
    s.template.hasResourceProperties("AWS::ApiGatewayV2::Route", { RouteKey: "$default" });
    s.template.hasResourceProperties("AWS::ApiGatewayV2::Integration", {
      IntegrationType: "AWS_PROXY",
      PayloadFormatVersion: "2.0",
      IntegrationUri: { "Fn::GetAtt": [logicalId(s.stack, s.stack.apiFunction), "Arn"] },
    });
  });

  it("throttles its stage and writes JSON access logs to a log group with retention", () => {
    s.template.resourceCountIs("AWS::ApiGatewayV2::Stage", 1);
    const [stage] = Object.values(resourcesOf(s, "AWS::ApiGatewayV2::Stage"));
    const props = stage?.Properties as Props;
    expect(props).toMatchObject({
      StageName: "$default",
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      AccessLogSettings: {
        DestinationArn: { "Fn::GetAtt": [logicalId(s.stack, s.stack.logGroups.access), "Arn"] },
      },
    });
    const format = JSON.parse((props.AccessLogSettings as { Format: string }).Format);
    expect(format).toMatchObject({
      requestId: "$context.requestId",
      status: "$context.status",
      lambdaRequestId: "$context.awsEndpointRequestId",
    });
    expect(propsOf(s, logicalId(s.stack, s.stack.logGroups.access)).RetentionInDays).toBe(30);

    const tuned = synth({ apiRateLimit: 5, apiBurstLimit: 10 });
    tuned.template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
    });
  });
});

describe("IAM", () => {
  it("allows no wildcard action anywhere", () => {
    for (const settings of [
      {},
      { summarizer: "bedrock", summaryModelId: "global.anthropic.claude-haiku-4-5-20251001-v1:0" },
      {
        summarizer: "openai-compatible",
        summaryModelId: "m",
        openaiBaseUrl: "https://x.example/v1",
        openaiApiKeySecretName: "k",
      },
    ]) {
      const statements = allowStatements(synth(settings));
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        for (const action of asArray(statement.Action)) expect(action).not.toContain("*");
      }
    }
  });

  it("gives the only resource wildcard to X-Ray (which has no resource-level permissions)", () => {
    for (const statement of allowStatements(s)) {
      if (statement.Resource === "*") {
        expect(asArray(statement.Action).sort()).toEqual([
          "xray:PutTelemetryRecords",
          "xray:PutTraceSegments",
        ]);
      }
    }
  });

  it("lets each role write its own log group only (no managed policies)", () => {
    for (const role of Object.values(resourcesOf(s, "AWS::IAM::Role"))) {
      expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    }
    const logs = allowStatements(s).filter((st) =>
      asArray(st.Action).some((a) => a.startsWith("logs:")),
    );
    expect(
      logs
        .map((st) => st.Resource)
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ).toEqual([
      { "Fn::GetAtt": [logicalId(s.stack, s.stack.logGroups.api), "Arn"] },
      { "Fn::GetAtt": [logicalId(s.stack, s.stack.logGroups.compactor), "Arn"] },
      { "Fn::GetAtt": [logicalId(s.stack, s.stack.logGroups.notifier), "Arn"] },
    ]);
  });

  it("lets the api send to the queue and the compactor consume it, not the other way round", () => {
    const actionsOf = (fn: typeof s.stack.apiFunction) =>
      functionStatements(s, fn).flatMap((st) => asArray(st.Action));
    const api = actionsOf(s.stack.apiFunction);
    const compactor = actionsOf(s.stack.compactorFunction);
    expect(api).toContain("sqs:SendMessage");
    expect(api).not.toContain("sqs:ReceiveMessage");
    expect(compactor).toEqual(expect.arrayContaining(["sqs:ReceiveMessage", "sqs:DeleteMessage"]));
    // The compactor sends to the idle timer queue only (see "idle timers" below).
    const compactorSends = functionStatements(s, s.stack.compactorFunction).filter((st) =>
      asArray(st.Action).includes("sqs:SendMessage"),
    );
    expect(compactorSends.map((st) => st.Resource)).toEqual([
      { "Fn::GetAtt": [logicalId(s.stack, s.stack.idleTimers.queue), "Arn"] },
    ]);
    for (const actions of [api, compactor]) {
      expect(actions.filter((a) => a.startsWith("dynamodb:")).sort()).toEqual(
        [...TABLE_ACTIONS].sort(),
      );
    }
  });

  it("grants the table actions the functions' code sends (Scan and table DDL are local-only)", () => {
    // DynamoDB commands → the IAM actions they need.
    const needs: Record<string, string[]> = {
      GetItemCommand: ["dynamodb:GetItem"],
      QueryCommand: ["dynamodb:Query"],
      PutItemCommand: ["dynamodb:PutItem"],
      UpdateItemCommand: ["dynamodb:UpdateItem"],
      DeleteItemCommand: ["dynamodb:DeleteItem"],
      TransactWriteItemsCommand: [
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
      ],
    };
    // Sent only by the local runtime (recovery scan, creating DynamoDB Local's table, its TTL
    // and its list index).
    const localOnly = new Set([
      "ScanCommand",
      "CreateTableCommand",
      "DescribeTableCommand",
      "DescribeTimeToLiveCommand",
      "UpdateTimeToLiveCommand",
      "UpdateTableCommand",
      "ListTablesCommand",
    ]);
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return name === "local" ? [] : sources(path);
        return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
      });
    const sent = new Set<string>();
    for (const file of sources(join(REPO_ROOT, "functions"))) {
      const text = readFileSync(file, "utf8");
      for (const block of text.matchAll(
        /import\s*\{([^}]*)\}\s*from\s*"@aws-sdk\/client-dynamodb"/g,
      )) {
        for (const specifier of (block[1] ?? "").split(",").map((part) => part.trim())) {
          // Type-only imports (`type QueryCommandInput`) send nothing. A
          // paginator sends its operation's command; the table waiter, DescribeTable.
          const command = /^[A-Z]\w*Command$/.test(specifier)
            ? specifier
            : /^paginate[A-Z]\w*$/.test(specifier)
              ? `${specifier.slice("paginate".length)}Command`
              : /^waitUntil[A-Z]\w*$/.test(specifier)
                ? "DescribeTableCommand"
                : undefined;
          if (command) sent.add(`${command}@${relative(REPO_ROOT, file)}`);
        }
      }
    }
    expect(sent.size).toBeGreaterThan(0);
    for (const entry of sent) {
      const [command] = entry.split("@") as [string];
      if (localOnly.has(command)) continue;
      expect(
        needs[command],
        `${entry}: add its IAM actions to TABLE_ACTIONS (infra/stack.ts)`,
      ).toBeDefined();
      for (const action of needs[command] ?? []) expect(TABLE_ACTIONS).toContain(action);
    }
  });

  it("grants Bedrock nothing without a Bedrock summarizer", () => {
    for (const settings of [
      {},
      {
        summarizer: "openai-compatible",
        summaryModelId: "m",
        openaiBaseUrl: "https://x.example/v1",
      },
    ]) {
      expect(JSON.stringify(synth(settings).json)).not.toContain("bedrock");
    }
  });

  it("grants bedrock:InvokeModel on the configured model only", () => {
    const synthesized = synth({ summarizer: "bedrock", summaryModelId: "amazon.nova-lite-v1:0" });
    const bedrock = allowStatements(synthesized).filter((st) =>
      asArray(st.Action).some((a) => a.startsWith("bedrock:")),
    );
    expect(bedrock).toHaveLength(2); // the api (manual summaries) and the compactor
    for (const statement of bedrock) {
      expect(statement.Action).toBe("bedrock:InvokeModel");
      expect(asArray(statement.Resource)).toEqual([
        {
          "Fn::Join": [
            "",
            [
              "arn:",
              { Ref: "AWS::Partition" },
              ":bedrock:",
              { Ref: "AWS::Region" },
              "::foundation-model/amazon.nova-lite-v1:0",
            ],
          ],
        },
      ]);
    }
  });

  it("grants an inference profile and its model (in the regions the profile routes to)", () => {
    const synthesized = synth({
      summarizer: "bedrock",
      summaryModelId: "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
      allowedSummaryModelIds:
        "arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/abc123",
    });
    const [statement] = allowStatements(synthesized).filter(
      (st) => st.Action === "bedrock:InvokeModel",
    );
    const resources = asArray(statement?.Resource);
    expect(resources).toHaveLength(3);
    expect(resources).toEqual(
      expect.arrayContaining([
        {
          "Fn::Join": [
            "",
            [
              "arn:",
              { Ref: "AWS::Partition" },
              ":bedrock:",
              { Ref: "AWS::Region" },
              ":",
              { Ref: "AWS::AccountId" },
              ":inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0",
            ],
          ],
        },
        {
          "Fn::Join": [
            "",
            [
              "arn:",
              { Ref: "AWS::Partition" },
              ":bedrock:*::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
            ],
          ],
        },
        "arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/abc123",
      ]),
    );
  });

  it("lets both functions read the OpenAI key's secret, and nothing else of Secrets Manager", () => {
    const synthesized = synth({
      summarizer: "openai-compatible",
      summaryModelId: "gpt-4o-mini",
      openaiBaseUrl: "https://llm.example.com/v1",
      openaiApiKeySecretName: "autocompact/openai",
    });
    const secrets = allowStatements(synthesized).filter((st) =>
      asArray(st.Action).some((a) => a.startsWith("secretsmanager:")),
    );
    expect(secrets).toHaveLength(2);
    for (const statement of secrets) {
      expect(asArray(statement.Action).sort()).toEqual([
        "secretsmanager:DescribeSecret",
        "secretsmanager:GetSecretValue",
      ]);
      expect(JSON.stringify(statement.Resource)).toContain(":secret:autocompact/openai-??????");
    }
  });
});

describe("operations", () => {
  let dashboard: string;
  beforeAll(() => {
    const [resource] = Object.values(resourcesOf(s, "AWS::CloudWatch::Dashboard"));
    dashboard = JSON.stringify(resource?.Properties?.DashboardBody);
  });

  const metricRef = (...parts: string[]) => parts.map((p) => `\\"${p}\\"`).join(",");

  it("has a dashboard with the compactor's EMF metrics as Powertools emits them", () => {
    s.template.resourceCountIs("AWS::CloudWatch::Dashboard", 1);
    for (const metric of [
      "Fired",
      "TokensRemoved",
      "StillOverThreshold",
      "EvaluationMs",
      "EvaluationLagMs",
      "Failed",
    ]) {
      expect(dashboard).toContain(
        metricRef(METRICS_NAMESPACE, metric, "service", SERVICE_NAMES.compactor),
      );
    }
    expect(SKIP_METRIC_REASONS).toEqual([
      "disabled",
      "min_turns",
      "context_window_unknown",
      "under_threshold",
      "empty_range",
      "short_range",
      "low_gain",
      "deferred_until_idle",
      "stale",
      "already_evaluated",
      "unknown_turn",
    ]);
    for (const reason of SKIP_METRIC_REASONS) {
      expect(dashboard).toContain(
        metricRef(
          METRICS_NAMESPACE,
          "Skipped",
          "reason",
          reason,
          "service",
          SERVICE_NAMES.compactor,
        ),
      );
    }
    expect(METRICS_NAMESPACE).toBe("Autocompact");
    expect(SERVICE_NAMES.compactor).toBe("autocompact-compactor");
  });

  it("has queue, DLQ, Lambda and API panels", () => {
    for (const part of [
      metricRef("AWS/SQS", "ApproximateAgeOfOldestMessage"),
      metricRef("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
      metricRef("AWS/Lambda", "Errors"),
      metricRef("AWS/Lambda", "Throttles"),
      metricRef("AWS/Lambda", "Duration"),
      metricRef("AWS/ApiGateway", "4xx"),
      metricRef("AWS/ApiGateway", "5xx"),
      metricRef("AWS/ApiGateway", "Latency"),
      "auto_compaction.fired",
    ]) {
      expect(dashboard).toContain(part);
    }
  });

  it("alarms on any notification given up by the api or the compactor", () => {
    const given = (service: string) =>
      Match.objectLike({
        MetricStat: Match.objectLike({
          Metric: {
            Namespace: "Autocompact",
            MetricName: "NotificationsPublishFailed",
            Dimensions: [{ Name: "service", Value: service }],
          },
          Stat: "Sum",
          Period: 300,
        }),
        ReturnData: false,
      });
    s.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmName: Match.stringLikeRegexp("-NotificationsPublishFailed$"),
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      EvaluationPeriods: 1,
      TreatMissingData: "notBreaching",
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "FILL(api, 0) + FILL(compactor, 0)" }),
        given("autocompact-api"),
        given("autocompact-compactor"),
      ]),
    });
  });

  it("alarms on DLQ depth > 0, compactor and api errors, api 5xx, queue age and evaluation lag", () => {
    // And the notification DLQ's (test/cdk/notifications.suite.ts), the timer DLQ's ("idle timers" below).
    s.template.resourceCountIs("AWS::CloudWatch::Alarm", 10);
    const alarm = (namespace: string, metricName: string, dimension: Props, expected: Props) =>
      s.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        ...expected,
        TreatMissingData: "notBreaching",
        Metrics: [
          Match.objectLike({
            MetricStat: Match.objectLike({
              Metric: { Namespace: namespace, MetricName: metricName, Dimensions: [dimension] },
            }),
          }),
        ],
      });
    const queueName = (queue: typeof s.stack.queue) => ({
      Name: "QueueName",
      Value: { "Fn::GetAtt": [logicalId(s.stack, queue), "QueueName"] },
    });
    hasQueueNotEmptyAlarm(s, s.stack.deadLetterQueue);
    alarm("AWS/SQS", "ApproximateAgeOfOldestMessage", queueName(s.stack.queue), {
      Threshold: s.stack.settings.alarms.queueAgeSeconds,
      ComparisonOperator: "GreaterThanThreshold",
    });
    for (const fn of [s.stack.compactorFunction, s.stack.apiFunction]) {
      alarm(
        "AWS/Lambda",
        "Errors",
        { Name: "FunctionName", Value: { Ref: logicalId(s.stack, fn) } },
        {
          Threshold: 1,
          ComparisonOperator: "GreaterThanOrEqualToThreshold",
        },
      );
    }
    alarm(
      "AWS/ApiGateway",
      "5xx",
      { Name: "ApiId", Value: { Ref: logicalId(s.stack, s.stack.httpApi) } },
      {
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      },
    );
    alarm(METRICS_NAMESPACE, "Failed", { Name: "service", Value: SERVICE_NAMES.compactor }, {});
  });

  it("alarms on the p99 evaluation lag over evaluationLagAlarmSeconds (default 60 s) for 10 minutes", () => {
    const lagAlarm = (stack: typeof s, thresholdMs: number) =>
      stack.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Threshold: thresholdMs,
        ComparisonOperator: "GreaterThanThreshold",
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        TreatMissingData: "notBreaching",
        Metrics: [
          Match.objectLike({
            MetricStat: {
              Metric: {
                Namespace: METRICS_NAMESPACE,
                MetricName: "EvaluationLagMs",
                Dimensions: [{ Name: "service", Value: SERVICE_NAMES.compactor }],
              },
              Period: 300,
              Stat: "p99",
            },
          }),
        ],
      });
    expect(s.stack.settings.alarms.evaluationLagSeconds).toBe(60);
    lagAlarm(s, 60_000);
    lagAlarm(synth({ evaluationLagAlarmSeconds: 20 }), 20_000);
  });

  it("graphs the evaluation lag's p50, p99 and maximum", () => {
    expect(dashboard).toContain("Evaluation lag (ms): turn posted → decided");
    for (const statistic of ["p50", "p99", "Maximum"]) {
      expect(dashboard).toContain(
        `${metricRef(METRICS_NAMESPACE, "EvaluationLagMs", "service", SERVICE_NAMES.compactor)},{\\"label\\":\\"lag ${statistic}\\",\\"stat\\":\\"${statistic}\\"}`,
      );
    }
  });

  it("notifies an SNS topic only when one is given", () => {
    for (const alarm of Object.values(resourcesOf(s, "AWS::CloudWatch::Alarm"))) {
      expect(alarm.Properties?.AlarmActions).toBeUndefined();
    }
    const topicArn = "arn:aws:sns:eu-west-1:123456789012:ops";
    const notified = synth({ alarmTopicArn: topicArn });
    for (const alarm of Object.values(resourcesOf(notified, "AWS::CloudWatch::Alarm"))) {
      expect(alarm.Properties?.AlarmActions).toEqual([topicArn]);
      expect(alarm.Properties?.OKActions).toEqual([topicArn]);
    }
  });

  it("saves the 5 Logs Insights queries on the compactor's log group", () => {
    s.template.resourceCountIs("AWS::Logs::QueryDefinition", 5);
    const compactorLogs = { Ref: logicalId(s.stack, s.stack.logGroups.compactor) };
    const expected: Record<string, RegExp> = {
      "firings in the last day": /filter message = "auto_compaction\.fired"/,
      "firings by conversation":
        /filter message = "auto_compaction\.fired"[\s\S]*stats count\(\*\) as firings.* by tenant, conversation/,
      "still over threshold": /filter message = "auto_compaction\.still_over_threshold"/,
      "skips by reason":
        /filter message = "auto_compaction\.skipped"[\s\S]*stats count\(\*\) as skips by reason/,
      "evaluation lag by conversation":
        /filter ispresent\(evaluation_lag_ms\)[\s\S]*pct\(evaluation_lag_ms, 99\) as p99_lag_ms.* by tenant, conversation[\s\S]*sort p99_lag_ms desc/,
    };
    expect(Object.keys(LOGS_INSIGHTS_QUERIES).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, pattern] of Object.entries(expected)) {
      s.template.hasResourceProperties("AWS::Logs::QueryDefinition", {
        Name: `Test/${name}`,
        QueryString: Match.stringLikeRegexp(pattern.source),
        LogGroupNames: [compactorLogs],
      });
    }
  });

  it("quotes the saved queries verbatim in docs/operate.md, their one home in the docs", () => {
    for (const file of ["docs/operate.md"]) {
      const docs = readFileSync(join(REPO_ROOT, file), "utf8");
      for (const [name, query] of Object.entries(LOGS_INSIGHTS_QUERIES)) {
        expect(docs, `${file}: ${name}`).toContain(query.toString());
      }
    }
  });
});

describe("idle timers (issue 29)", () => {
  const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(s.stack, construct);
  let timers: string;
  let timerDlq: string;

  beforeAll(() => {
    timers = id(s.stack.idleTimers.queue);
    timerDlq = id(s.stack.idleTimers.deadLetterQueue);
  });

  it("are a standard queue (DelaySeconds) with SQS-managed SSE, TLS only, and a DLQ after 5 receives", () => {
    for (const queue of [timers, timerDlq]) {
      expect(propsOf(s, queue)).toMatchObject({ SqsManagedSseEnabled: true });
      expect(propsOf(s, queue).FifoQueue).toBeUndefined();
      s.template.hasResourceProperties("AWS::SQS::QueuePolicy", {
        Queues: [{ Ref: queue }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: "Deny",
              Condition: { Bool: { "aws:SecureTransport": "false" } },
            }),
          ]),
        },
      });
    }
    expect(propsOf(s, timers).RedrivePolicy).toEqual({
      deadLetterTargetArn: { "Fn::GetAtt": [timerDlq, "Arn"] },
      maxReceiveCount: 5,
    });
    expect(propsOf(s, timerDlq).MessageRetentionPeriod).toBe(14 * 24 * 3600);
    // A timer that fires may summarize: it hides as long as an evaluation message.
    expect(propsOf(s, timers).VisibilityTimeout).toBe(
      propsOf(s, id(s.stack.queue)).VisibilityTimeout,
    );
  });

  it("are consumed by the compactor, reporting batch item failures, at most 2 invocations at once", () => {
    s.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [timers, "Arn"] },
      FunctionName: { Ref: id(s.stack.compactorFunction) },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 2 },
    });
  });

  it("are sent by the compactor alone (the api schedules none)", () => {
    const named = (fn: typeof s.stack.apiFunction) =>
      functionStatements(s, fn).filter((st) => JSON.stringify(st.Resource).includes(`"${timers}"`));
    expect(named(s.stack.compactorFunction).flatMap((st) => asArray(st.Action))).toEqual(
      expect.arrayContaining(["sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage"]),
    );
    expect(named(s.stack.apiFunction)).toEqual([]);
    expect(named(s.stack.notifierFunction)).toEqual([]);
  });

  it("alarm when a timer is dead-lettered, graph pending timers and the DLQ, and output the DLQ's URL", () => {
    hasQueueNotEmptyAlarm(s, s.stack.idleTimers.deadLetterQueue, {
      AlarmName: Match.stringLikeRegexp("-IdleTimerDeadLetterQueueNotEmpty$"),
    });
    const [resource] = Object.values(resourcesOf(s, "AWS::CloudWatch::Dashboard"));
    const dashboard = JSON.stringify(resource?.Properties?.DashboardBody);
    for (const part of ["Idle timers: not due, due", "Idle timer DLQ depth", timers, timerDlq]) {
      expect(dashboard).toContain(part);
    }
    expect(dashboard).toContain('\\"AWS/SQS\\",\\"ApproximateNumberOfMessagesDelayed\\"');
    expect(s.json.Outputs?.IdleTimerDeadLetterQueueUrl).toMatchObject({ Value: { Ref: timerDlq } });
  });
});

describe("outputs", () => {
  it("give `autocompact dlq` the DLQ's URL and ARN and the evaluation queue's ARN", () => {
    const value = (name: string) =>
      (s.json.Outputs?.[name] as { Value?: unknown } | undefined)?.Value;
    expect(value("DeadLetterQueueArn")).toEqual({
      "Fn::GetAtt": [logicalId(s.stack, s.stack.deadLetterQueue), "Arn"],
    });
    expect(value("QueueArn")).toEqual({
      "Fn::GetAtt": [logicalId(s.stack, s.stack.queue), "Arn"],
    });
    expect(value("DeadLetterQueueUrl")).toEqual({
      Ref: logicalId(s.stack, s.stack.deadLetterQueue),
    });
  });

  it("give the API URL (no trailing slash), the table name and the operations handles", () => {
    expect((s.json.Outputs?.ApiUrl as { Value?: unknown } | undefined)?.Value).toEqual({
      "Fn::GetAtt": [logicalId(s.stack, s.stack.httpApi), "ApiEndpoint"],
    });
    expect(Object.keys(s.json.Outputs ?? {}).sort()).toEqual(
      [
        "ApiUrl",
        "CompactorLogGroupName",
        "DashboardName",
        "DeadLetterQueueArn",
        "DeadLetterQueueUrl",
        "EventBusName",
        "IdleTimerDeadLetterQueueUrl",
        "NotificationDeadLetterQueueUrl",
        "QueueArn",
        "QueueUrl",
        "TableName",
        "WebhookSecretsKeyArn",
      ].sort(),
    );
  });
});
