import { describe, expect, it } from "vitest";
import { resolveContextWindow } from "../core/catalog.ts";
import { readEnvironment, readLimitDefaults } from "./env.ts";

describe("readEnvironment", () => {
  it("extends the bundled model catalog with MODEL_CATALOG instead of replacing it", () => {
    const { catalog } = readEnvironment({
      TABLE_NAME: "table",
      MODEL_CATALOG: '{"my-model":64000,"claude-sonnet-4-5":100000}',
    });
    expect(resolveContextWindow({ id: "my-model" }, catalog)).toBe(64_000);
    expect(resolveContextWindow({ id: "anthropic/claude-sonnet-4-5" }, catalog)).toBe(100_000);
    expect(resolveContextWindow({ id: "gpt-4.1" }, catalog)).toBe(1_047_576);
  });

  it("takes the webhook secrets key as a KMS key ARN only", () => {
    const arn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    expect(
      readEnvironment({ TABLE_NAME: "table", WEBHOOK_SECRETS_KEY_ARN: arn }).webhookSecretsKeyArn,
    ).toBe(arn);
    expect(readEnvironment({ TABLE_NAME: "table" }).webhookSecretsKeyArn).toBeUndefined();
    for (const bad of ["alias/autocompact/t", "1234abcd-12ab-34cd-56ef-1234567890ab", ""]) {
      expect(() => readEnvironment({ TABLE_NAME: "table", WEBHOOK_SECRETS_KEY_ARN: bad })).toThrow(
        "invalid environment: WEBHOOK_SECRETS_KEY_ARN: must be a KMS key ARN",
      );
    }
  });

  it("takes the notifications' EventBridge bus by name", () => {
    expect(
      readEnvironment({ TABLE_NAME: "table", EVENT_BUS_NAME: "TestNotificationBus1A2B3C" })
        .eventBusName,
    ).toBe("TestNotificationBus1A2B3C");
    expect(readEnvironment({ TABLE_NAME: "table" }).eventBusName).toBeUndefined();
    expect(() => readEnvironment({ TABLE_NAME: "table", EVENT_BUS_NAME: "a bus" })).toThrow(
      "invalid environment: EVENT_BUS_NAME: must be an EventBridge bus name",
    );
  });

  it("names the variable that is wrong", () => {
    expect(() => readEnvironment({ TABLE_NAME: "table", MODEL_CATALOG: '{"m":-1}' })).toThrow(
      /MODEL_CATALOG/,
    );
  });
});

describe("readLimitDefaults", () => {
  it("defaults to 50 requests a second, a burst of 100, 100 waiting reads and 2,000,000 summary tokens a day", () => {
    expect(readLimitDefaults({})).toEqual({
      requests_per_second: 50,
      burst: 100,
      waiting_reads: 100,
      summary_tokens_per_day: 2_000_000,
    });
    expect(readEnvironment({ TABLE_NAME: "table", TENANT_WAITING_READS: "7" }).limits).toEqual({
      requests_per_second: 50,
      burst: 100,
      waiting_reads: 7,
      summary_tokens_per_day: 2_000_000,
    });
  });

  it("names the variable of a limit that is not a whole number from 1", () => {
    expect(() => readLimitDefaults({ TENANT_REQUESTS_PER_SECOND: "0" })).toThrow(
      "invalid environment: TENANT_REQUESTS_PER_SECOND: must be at least 1 requests a second",
    );
    expect(() => readLimitDefaults({ TENANT_SUMMARY_TOKENS_PER_DAY: "1.5" })).toThrow(
      "TENANT_SUMMARY_TOKENS_PER_DAY: must be a whole number of tokens",
    );
  });
});
