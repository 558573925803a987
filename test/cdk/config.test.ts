import { describe, expect, it } from "vitest";
import {
  resolveSettings,
  SETTING_KEYS,
  SettingsError,
  SUMMARY_TIMEOUT_SECONDS,
  settingsFromContext,
} from "../../infra/config.ts";
import { synth } from "./synth.ts";

const errorOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error("expected a SettingsError");
};

describe("settings: defaults", () => {
  it("apply when nothing is set", () => {
    const settings = resolveSettings();
    expect(settings).toMatchObject({
      autoConfig: {},
      summarizer: { kind: "none" },
      logLevel: "INFO",
      logRetentionDays: 30,
      api: { rateLimit: 50, burstLimit: 100 },
      compactor: {
        maxConcurrency: 10,
        batchSize: 10,
        timeoutSeconds: 60,
        visibilityTimeoutSeconds: 360,
      },
    });
    expect(settings.autoConfigJson).toBeUndefined();
    expect(settings.modelCatalog).toBeUndefined();
    expect(settings.alarms.evaluationLagSeconds).toBe(60);
  });

  it("give a summarizing compactor a timeout each summary of a batch fits in", () => {
    const settings = resolveSettings({
      summarizer: "bedrock",
      summaryModelId: "amazon.nova-lite-v1:0",
    });
    expect(settings.compactor.batchSize).toBe(1);
    expect(settings.compactor.timeoutSeconds).toBeGreaterThanOrEqual(SUMMARY_TIMEOUT_SECONDS);
    expect(settings.compactor.visibilityTimeoutSeconds).toBe(6 * settings.compactor.timeoutSeconds);
  });
});

describe("settings: autoConfig (validated by core/config.ts)", () => {
  it("accepts a D50 tree as an object or as JSON text, and keeps only the auto layer", () => {
    const tree = {
      conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.8 } }, title: "x" },
    };
    for (const autoConfig of [tree, JSON.stringify(tree)]) {
      const settings = resolveSettings({ autoConfig });
      expect(settings.autoConfig).toEqual({ enabled: true, trigger_ratio: 0.8 });
      expect(JSON.parse(settings.autoConfigJson ?? "")).toEqual({
        conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.8 } } },
      });
    }
  });

  it("names the D50 key of a bad value", () => {
    const message = errorOf(() =>
      resolveSettings({
        autoConfig: '{"conversation":{"compaction":{"auto":{"trigger_ratio":1.5}}}}',
      }),
    );
    expect(message).toContain(
      "autoConfig: conversation.compaction.auto.trigger_ratio: must be at most 1",
    );
  });

  it("names an unknown D50 key", () => {
    expect(
      errorOf(() =>
        resolveSettings({
          autoConfig: { conversation: { compaction: { auto: { enable: true } } } },
        }),
      ),
    ).toMatch(/autoConfig: conversation\.compaction\.auto\.enable: unknown key/);
  });

  it("rejects text that is not JSON", () => {
    expect(errorOf(() => resolveSettings({ autoConfig: "{enabled:true}" }))).toContain(
      "autoConfig:",
    );
  });

  it("rejects a summary rule without a summarizer", () => {
    expect(
      errorOf(() =>
        resolveSettings({
          autoConfig: { conversation: { compaction: { auto: { rule: { summary: {} } } } } },
        }),
      ),
    ).toContain("conversation.compaction.auto.rule.summary: needs a summarizer");
  });
});

describe("settings: values from -c (strings)", () => {
  it("parses numbers, lists and JSON", () => {
    const settings = resolveSettings({
      logLevel: "debug",
      logRetentionDays: "90",
      apiRateLimit: "20",
      apiBurstLimit: "40",
      compactorMaxConcurrency: "5",
      compactorBatchSize: "4",
      compactorTimeoutSeconds: "120",
      bodyLimitBytes: "1048576",
      modelCatalog: '{"my-model":32000}',
    });
    expect(settings.logLevel).toBe("DEBUG");
    expect(settings.logRetentionDays).toBe(90);
    expect(settings.api).toEqual({ rateLimit: 20, burstLimit: 40, bodyLimitBytes: 1_048_576 });
    expect(settings.modelCatalog).toEqual({ "my-model": 32000 });
    expect(settings.compactor).toEqual({
      maxConcurrency: 5,
      batchSize: 4,
      timeoutSeconds: 120,
      visibilityTimeoutSeconds: 720,
      // The reservation defaults to both event sources' concurrency: the
      // turn queue's 5 and the idle timers' 2.
      reservedConcurrency: 7,
    });
    expect(settings.notifier).toEqual({ reservedConcurrency: 5 });
    expect(settings.tenantLimitsEnvironment).toEqual({});
  });

  it("passes the tenant limit defaults as the api's environment, checked", () => {
    expect(
      resolveSettings({ tenantRequestsPerSecond: "10", tenantRequestBurst: 20 })
        .tenantLimitsEnvironment,
    ).toEqual({ TENANT_REQUESTS_PER_SECOND: "10", TENANT_REQUEST_BURST: "20" });
    expect(errorOf(() => resolveSettings({ tenantWaitingReads: "0" }))).toContain(
      "tenantWaitingReads: must be at least 1",
    );
  });

  it("takes the evaluation-lag alarm's threshold in whole seconds", () => {
    expect(resolveSettings({ evaluationLagAlarmSeconds: "30" }).alarms.evaluationLagSeconds).toBe(
      30,
    );
    expect(resolveSettings({ evaluationLagAlarmSeconds: 600 }).alarms.evaluationLagSeconds).toBe(
      600,
    );
    for (const bad of ["0", "1.5", "soon", 86_401]) {
      expect(errorOf(() => resolveSettings({ evaluationLagAlarmSeconds: bad }))).toContain(
        "evaluationLagAlarmSeconds:",
      );
    }
  });

  it("names every bad key at once", () => {
    const message = errorOf(() =>
      resolveSettings({
        logLevel: "LOUD",
        logRetentionDays: "31",
        compactorMaxConcurrency: "1",
        compactorBatchSize: "11",
        modelCatalog: '{"m":-1}',
        summarizer: "gpt",
      }),
    );
    for (const key of [
      "logLevel",
      "logRetentionDays",
      "compactorMaxConcurrency",
      "compactorBatchSize",
      "modelCatalog.m",
      "summarizer",
    ]) {
      expect(message).toContain(`${key}:`);
    }
  });

  it("reads the known keys from context and refuses look-alike keys", () => {
    const context: Record<string, unknown> = { logLevel: "WARN", "@aws-cdk/core:flag": true };
    expect(settingsFromContext((key) => context[key], Object.keys(context))).toEqual({
      logLevel: "WARN",
    });
    expect(
      errorOf(() => settingsFromContext(() => undefined, ["loglevel", "cli-telemetry"])),
    ).toMatch(/^invalid autocompact settings: loglevel: unknown setting/);
  });

  it("refuses unknown props", () => {
    expect(errorOf(() => resolveSettings({ logLevle: "DEBUG" } as never))).toContain(
      "logLevle: unknown setting",
    );
  });

  it("documents every key in docs/deploy.md", async () => {
    const { readFile } = await import("node:fs/promises");
    const docs = await readFile(new URL("../../docs/deploy.md", import.meta.url), "utf8");
    for (const key of SETTING_KEYS) expect(docs, key).toContain(`\`${key}\``);
  });
});

describe("settings: summarizers", () => {
  it("bedrock needs a model and grants the allowed and configured models too", () => {
    expect(errorOf(() => resolveSettings({ summarizer: "bedrock" }))).toContain(
      "summaryModelId: required",
    );
    const settings = resolveSettings({
      summarizer: "bedrock",
      summaryModelId: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
      allowedSummaryModelIds: "amazon.nova-pro-v1:0, amazon.nova-lite-v1:0",
      autoConfig: {
        conversation: {
          compaction: { auto: { rule: { summary: { model: { id: "amazon.nova-micro-v1:0" } } } } },
        },
      },
    });
    expect(settings.summarizer).toEqual({
      kind: "bedrock",
      modelId: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
      modelIds: [
        "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        "amazon.nova-pro-v1:0",
        "amazon.nova-lite-v1:0",
        "amazon.nova-micro-v1:0",
      ],
    });
  });

  it("openai-compatible needs an https base URL and a model", () => {
    const message = errorOf(() =>
      resolveSettings({ summarizer: "openai-compatible", openaiBaseUrl: "http://example.com/v1" }),
    );
    expect(message).toContain("openaiBaseUrl: must be an https:// URL");
    expect(
      errorOf(() =>
        resolveSettings({ summarizer: "openai-compatible", openaiBaseUrl: "https://x.example/v1" }),
      ),
    ).toContain("summaryModelId: required");
  });

  it("rejects settings of another summarizer", () => {
    expect(
      errorOf(() => resolveSettings({ summaryModelId: "x", openaiApiKeySecretName: "k" })),
    ).toMatch(/summaryModelId: only used with .*openaiApiKeySecretName: only used with/);
  });

  it("rejects a compactor timeout a batch of summaries does not fit in", () => {
    expect(
      errorOf(() =>
        resolveSettings({
          summarizer: "bedrock",
          summaryModelId: "amazon.nova-lite-v1:0",
          compactorBatchSize: 2,
          compactorTimeoutSeconds: 100,
        }),
      ),
    ).toContain("compactorTimeoutSeconds: must be at least");
  });
});

describe("settings: the functions' environment", () => {
  it("must fit Lambda's 4 KB", () => {
    const instructions = "Keep every decision. ".repeat(200);
    expect(
      errorOf(() =>
        synth({
          summarizer: "bedrock",
          summaryModelId: "amazon.nova-lite-v1:0",
          autoConfig: {
            conversation: { compaction: { auto: { rule: { summary: { instructions } } } } },
          },
        }),
      ),
    ).toMatch(/environment would take about \d+ bytes, over Lambda's 4096/);
  });
});
