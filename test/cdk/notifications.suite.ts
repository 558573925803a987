/**
 * The notifications' part of the stack (issue 16, docs/architecture.md §16): the
 * EventBridge bus the api and the compactor put events on, the rule to the
 * notifier's queue, the queue's DLQ, the notifier function and what it may
 * do, and the alarm on failed deliveries.
 */
import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { NOTIFICATION_RECEIVES } from "../../infra/notifications.ts";
import {
  asArray,
  defaultSynth,
  functionStatements,
  hasQueueNotEmptyAlarm,
  logicalId,
  resourcesOf,
} from "./synth.ts";

const s = defaultSynth();

type Props = Record<string, unknown>;
const propsOf = (id: string): Props => s.json.Resources[id]?.Properties ?? {};
const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(s.stack, construct);

describe("notification bus and rule", () => {
  it("creates one custom event bus", () => {
    s.template.resourceCountIs("AWS::Events::EventBus", 1);
  });

  it("forwards the bus's autocompact events to the notification queue, with a DLQ for what EventBridge cannot put", () => {
    s.template.resourceCountIs("AWS::Events::Rule", 1);
    s.template.hasResourceProperties("AWS::Events::Rule", {
      EventBusName: { Ref: id(s.stack.eventBus) },
      EventPattern: { source: ["autocompact"] },
      State: "ENABLED",
      Targets: [
        Match.objectLike({
          Arn: { "Fn::GetAtt": [id(s.stack.notificationQueue), "Arn"] },
          DeadLetterConfig: {
            Arn: { "Fn::GetAtt": [id(s.stack.notificationDeadLetterQueue), "Arn"] },
          },
        }),
      ],
    });
  });

  it("lets EventBridge send to the queue (only from this rule)", () => {
    s.template.hasResourceProperties("AWS::SQS::QueuePolicy", {
      Queues: Match.arrayWith([{ Ref: id(s.stack.notificationQueue) }]),
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Allow",
            Principal: { Service: "events.amazonaws.com" },
            Action: Match.arrayWith(["sqs:SendMessage"]),
            Condition: {
              ArnEquals: {
                "aws:SourceArn": { "Fn::GetAtt": [id(s.stack.notificationRule), "Arn"] },
              },
            },
          }),
        ]),
      },
    });
  });

  it("lets the api and the compactor put events on this bus only, and the notifier not", () => {
    const busArn = { "Fn::GetAtt": [id(s.stack.eventBus), "Arn"] };
    for (const fn of [s.stack.apiFunction, s.stack.compactorFunction]) {
      const put = functionStatements(s, fn).filter((st) =>
        asArray(st.Action).includes("events:PutEvents"),
      );
      expect(put.map((st) => st.Resource)).toEqual([busArn]);
    }
    const notifier = functionStatements(s, s.stack.notifierFunction).flatMap((st) =>
      asArray(st.Action),
    );
    expect(notifier.filter((action) => action.startsWith("events:"))).toEqual([]);
  });
});

describe("notification queue and DLQ", () => {
  it("are standard queues with SQS-managed SSE, TLS only", () => {
    for (const queue of [s.stack.notificationQueue, s.stack.notificationDeadLetterQueue]) {
      const props = propsOf(id(queue));
      expect(props.FifoQueue).toBeUndefined();
      expect(props.SqsManagedSseEnabled).toBe(true);
      s.template.hasResourceProperties("AWS::SQS::QueuePolicy", {
        Queues: [{ Ref: id(queue) }],
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
  });

  it(`redrive a notification to the DLQ after ${NOTIFICATION_RECEIVES} receives, and keep dead letters 14 days`, () => {
    expect(NOTIFICATION_RECEIVES).toBe(6);
    expect(propsOf(id(s.stack.notificationQueue)).RedrivePolicy).toEqual({
      deadLetterTargetArn: { "Fn::GetAtt": [id(s.stack.notificationDeadLetterQueue), "Arn"] },
      maxReceiveCount: 6,
    });
    expect(propsOf(id(s.stack.notificationDeadLetterQueue)).MessageRetentionPeriod).toBe(
      14 * 24 * 3600,
    );
  });

  it("hide a message for at least 6x the notifier's timeout", () => {
    const notifier = propsOf(id(s.stack.notifierFunction));
    expect(
      propsOf(id(s.stack.notificationQueue)).VisibilityTimeout as number,
    ).toBeGreaterThanOrEqual(6 * (notifier.Timeout as number));
  });
});

describe("notifier function", () => {
  it("runs on arm64 with X-Ray, JSON logs to its own log group, fed by the queue with batch item failures", () => {
    const fn = propsOf(id(s.stack.notifierFunction));
    expect(fn).toMatchObject({
      Architectures: ["arm64"],
      Handler: "index.handler",
      TracingConfig: { Mode: "Active" },
      LoggingConfig: { LogFormat: "JSON", LogGroup: { Ref: id(s.stack.logGroups.notifier) } },
    });
    expect(fn.Runtime).toMatch(/^nodejs(2[2-9]|[3-9]\d)\.x$/);
    s.template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [id(s.stack.notificationQueue), "Arn"] },
      FunctionName: { Ref: id(s.stack.notifierFunction) },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
  });

  it("gets the table, the secrets key and its service name, nothing of the summarizer", () => {
    const variables = (propsOf(id(s.stack.notifierFunction)).Environment as { Variables: Props })
      .Variables;
    expect(variables).toEqual({
      TABLE_NAME: { Ref: id(s.stack.table) },
      LOG_LEVEL: "INFO",
      POWERTOOLS_METRICS_NAMESPACE: "Autocompact",
      POWERTOOLS_SERVICE_NAME: "autocompact-notifier",
      WEBHOOK_SECRETS_KEY_ARN: { "Fn::GetAtt": [id(s.stack.secretsKey), "Arn"] },
      NODE_OPTIONS: "--enable-source-maps",
    });
  });

  it("may only read tenant items (GetItem on the table, no index) and consume its queue", () => {
    const statements = functionStatements(s, s.stack.notifierFunction);
    const dynamo = statements.filter((st) =>
      asArray(st.Action).some((a) => a.startsWith("dynamodb:")),
    );
    expect(dynamo.map((st) => [asArray(st.Action), st.Resource])).toEqual([
      [["dynamodb:GetItem"], { "Fn::GetAtt": [id(s.stack.table), "Arn"] }],
    ]);
    const sqs = statements.filter((st) => asArray(st.Action).some((a) => a.startsWith("sqs:")));
    for (const st of sqs)
      expect(st.Resource).toEqual({ "Fn::GetAtt": [id(s.stack.notificationQueue), "Arn"] });
    expect(sqs.flatMap((st) => asArray(st.Action))).toContain("sqs:DeleteMessage");
  });
});

describe("failed deliveries", () => {
  it("alarm when the notification DLQ is not empty", () => {
    hasQueueNotEmptyAlarm(s, s.stack.notificationDeadLetterQueue);
    expect(
      Object.values(resourcesOf(s, "AWS::CloudWatch::Alarm")).some((alarm) =>
        String(alarm.Properties?.AlarmName).endsWith("-NotificationDeadLetterQueueNotEmpty"),
      ),
    ).toBe(true);
  });

  it("are on the dashboard: deliveries, failed attempts and the DLQ's depth", () => {
    const dashboard = JSON.stringify(
      Object.values(resourcesOf(s, "AWS::CloudWatch::Dashboard"))[0]?.Properties?.DashboardBody,
    );
    for (const part of ["NotificationsDelivered", "NotificationsFailed", "autocompact-notifier"])
      expect(dashboard).toContain(part);
    expect(dashboard).toContain(id(s.stack.notificationDeadLetterQueue));
  });

  it("is where the stack's outputs point: the bus and the DLQ", () => {
    expect(s.json.Outputs?.EventBusName).toMatchObject({ Value: { Ref: id(s.stack.eventBus) } });
    expect(s.json.Outputs?.NotificationDeadLetterQueueUrl).toMatchObject({
      Value: { Ref: id(s.stack.notificationDeadLetterQueue) },
    });
  });
});
