/**
 * cdk-nag's AwsSolutions and Serverless packs find nothing unacknowledged,
 * for every shape of the stack; each acknowledgment has a reason and
 * silences a finding that really occurs (no stale suppressions).
 *
 * cdk-nag 3 reports through CDK's policy validation (`Validations`), not
 * through annotations: `pack.validateScope(stack)` returns the findings
 * directly (what `cdk synth` prints and fails on). The annotation check of
 * cdk-nag 2 is kept as well; it must stay empty too.
 */
import { Stack, Validations } from "aws-cdk-lib";
import { Annotations, Match } from "aws-cdk-lib/assertions";
import { Queue } from "aws-cdk-lib/aws-sqs";
import cdkNag from "cdk-nag";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import type { AutocompactSettingsInput } from "../../infra/config.ts";
import { synth } from "./synth.ts";

const { AwsSolutionsChecks, ServerlessChecks } = cdkNag;

const VARIANTS: Record<string, AutocompactSettingsInput> = {
  defaults: {},
  "bedrock, foundation model": { summarizer: "bedrock", summaryModelId: "amazon.nova-lite-v1:0" },
  "bedrock, cross-region profiles and an extra model": {
    summarizer: "bedrock",
    summaryModelId: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    allowedSummaryModelIds: [
      "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "amazon.nova-pro-v1:0",
    ],
  },
  "openai-compatible with a key secret": {
    summarizer: "openai-compatible",
    summaryModelId: "gpt-4o-mini",
    openaiBaseUrl: "https://llm.example.com/v1",
    openaiApiKeySecretName: "autocompact/openai",
  },
  "alarms to SNS, tuned": {
    alarmTopicArn: "arn:aws:sns:us-east-1:123456789012:ops",
    logLevel: "DEBUG",
    logRetentionDays: 365,
    compactorMaxConcurrency: 50,
    apiRateLimit: 500,
    apiBurstLimit: 1000,
  },
};

interface Finding {
  readonly rule: string;
  readonly path: string;
  readonly description: string;
}

function findings(scope: IConstruct): Finding[] {
  return [new AwsSolutionsChecks(), new ServerlessChecks()].flatMap((pack) =>
    pack.validateScope(scope).violations.flatMap((violation) =>
      violation.violatingResources.map((resource) => ({
        rule: violation.ruleName,
        path: resource.constructPath ?? "?",
        description: violation.description,
      })),
    ),
  );
}

/** The findings with every acknowledgment ignored. */
function findingsIgnoringAcknowledgments(scope: IConstruct): Finding[] {
  const key = Validations.ACKNOWLEDGED_RULES_METADATA_KEY;
  Object.defineProperty(Validations, "ACKNOWLEDGED_RULES_METADATA_KEY", {
    value: "test:no-acknowledgments",
    configurable: true,
  });
  try {
    return findings(scope);
  } finally {
    Object.defineProperty(Validations, "ACKNOWLEDGED_RULES_METADATA_KEY", {
      value: key,
      configurable: true,
    });
  }
}

function acknowledgments(scope: IConstruct): Array<{ path: string; id: string; reason: string }> {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ""),
          reason,
        })),
      ),
  );
}

describe.each(Object.entries(VARIANTS))("cdk-nag, %s", (_name, settings) => {
  const { stack } = synth(settings);

  it("has no unacknowledged AwsSolutions or Serverless finding", () => {
    expect(findings(stack).map((f) => `${f.rule} at ${f.path}: ${f.description}`)).toEqual([]);
    const annotations = Annotations.fromStack(stack);
    for (const pack of ["AwsSolutions-.*", "Serverless-.*"]) {
      expect(annotations.findError("*", Match.stringLikeRegexp(pack))).toEqual([]);
      expect(annotations.findWarning("*", Match.stringLikeRegexp(pack))).toEqual([]);
    }
  });

  it("acknowledges only real findings, each with its reason", () => {
    const acks = acknowledgments(stack);
    expect(acks.length).toBeGreaterThan(0);
    const raw = findingsIgnoringAcknowledgments(stack);
    for (const ack of acks) {
      expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThanOrEqual(60);
      const silenced = raw.filter(
        (f) => f.rule === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)),
      );
      expect(silenced.length, `stale acknowledgment ${ack.id} at ${ack.path}`).toBeGreaterThan(0);
    }
    console.log(
      `[cdk-nag] ${_name}: ${raw.length} findings, all acknowledged:\n${[...new Set(acks.map((a) => `  ${a.id}`))].join("\n")}`,
    );
  });
});

describe("cdk-nag itself", () => {
  it("is live: a queue without TLS enforcement or DLQ is reported", () => {
    const stack = new Stack();
    new Queue(stack, "Plain");
    const rules = findings(stack).map((f) => f.rule);
    expect(rules).toEqual(expect.arrayContaining(["AwsSolutions-SQS3", "AwsSolutions-SQS4"]));
  });
});
