/**
 * Synthesizing the stack in tests: with cdk.json's feature flags (so the
 * template is the one `cdk synth` makes) and, unless a test asks for the real
 * bundles, the placeholder code (`bundle: false`), which synthesizes in
 * milliseconds.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { REPO_ROOT } from "../../infra/bundling.ts";
import type { AutocompactSettingsInput } from "../../infra/config.ts";
import { AutocompactStack } from "../../infra/stack.ts";

/** The context of cdk.json (feature flags). */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, "cdk.json"), "utf8")) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface Synthesized {
  readonly stack: AutocompactStack;
  readonly template: Template;
  /** The template as JSON. */
  readonly json: {
    Resources: Record<
      string,
      { Type: string; Properties?: Record<string, unknown>; [key: string]: unknown }
    >;
    Outputs?: Record<string, unknown>;
  };
}

/** A stack with placeholder code and the given settings. */
export function synth(settings: AutocompactSettingsInput = {}): Synthesized {
  const app = new App({ context: cdkJsonContext() });
  const stack = new AutocompactStack(app, "Test", { settings, bundle: false });
  const template = Template.fromStack(stack);
  return { stack, template, json: template.toJSON() as Synthesized["json"] };
}

let defaults: Synthesized | undefined;

/** The stack with default settings, synthesized once per process: the suites only read it. */
export function defaultSynth(): Synthesized {
  defaults ??= synth();
  return defaults;
}

/** The resources of one type, by logical id. */
export function resourcesOf(
  synthesized: Synthesized,
  type: string,
): Record<string, { Type: string; Properties?: Record<string, unknown>; [key: string]: unknown }> {
  return Object.fromEntries(
    Object.entries(synthesized.json.Resources).filter(([, resource]) => resource.Type === type),
  );
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalId(
  stack: AutocompactStack,
  construct: { node: { defaultChild?: unknown } },
): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

/** Every Allow statement of every IAM policy in the template. */
export function allowStatements(synthesized: Synthesized): Array<{
  policy: string;
  Action: string | string[];
  Resource: unknown;
}> {
  const statements: Array<{ policy: string; Action: string | string[]; Resource: unknown }> = [];
  for (const [id, resource] of Object.entries(synthesized.json.Resources)) {
    const documents: unknown[] = [];
    if (resource.Type === "AWS::IAM::Policy" || resource.Type === "AWS::IAM::ManagedPolicy") {
      documents.push(resource.Properties?.PolicyDocument);
    }
    if (resource.Type === "AWS::IAM::Role") {
      for (const inline of (resource.Properties?.Policies as Array<{ PolicyDocument: unknown }>) ??
        []) {
        documents.push(inline.PolicyDocument);
      }
    }
    for (const document of documents) {
      for (const statement of (document as { Statement: Array<Record<string, unknown>> })
        .Statement) {
        if (statement.Effect !== "Allow") continue;
        statements.push({
          policy: id,
          Action: statement.Action as string | string[],
          Resource: statement.Resource,
        });
      }
    }
  }
  return statements;
}

/** The Allow statements of the default policy of a function's role. */
export function functionStatements(
  synthesized: Synthesized,
  fn: AutocompactStack["apiFunction"],
): ReturnType<typeof allowStatements> {
  const policy = logicalId(synthesized.stack, fn.role?.node.findChild("DefaultPolicy") as never);
  return allowStatements(synthesized).filter((statement) => statement.policy === policy);
}

/**
 * Asserts an alarm that fires once `queue` holds a visible message (a
 * dead-letter queue's), with `expected` among its properties besides.
 */
export function hasQueueNotEmptyAlarm(
  synthesized: Synthesized,
  queue: { node: { defaultChild?: unknown } },
  expected: Record<string, unknown> = {},
): void {
  synthesized.template.hasResourceProperties("AWS::CloudWatch::Alarm", {
    ...expected,
    Threshold: 0,
    ComparisonOperator: "GreaterThanThreshold",
    TreatMissingData: "notBreaching",
    Metrics: [
      Match.objectLike({
        MetricStat: Match.objectLike({
          Metric: {
            Namespace: "AWS/SQS",
            MetricName: "ApproximateNumberOfMessagesVisible",
            Dimensions: [
              {
                Name: "QueueName",
                Value: { "Fn::GetAtt": [logicalId(synthesized.stack, queue), "QueueName"] },
              },
            ],
          },
        }),
      }),
    ],
  });
}

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
