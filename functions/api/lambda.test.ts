import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe("API Lambda entry point", () => {
  const base = () => {
    vi.stubEnv("TABLE_NAME", "autocompact-test");
    vi.stubEnv("QUEUE_URL", "https://sqs.eu-west-1.amazonaws.com/123456789012/autocompact.fifo");
    vi.stubEnv("AWS_REGION", "eu-west-1");
    vi.stubEnv(
      "WEBHOOK_SECRETS_KEY_ARN",
      "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    );
  };

  it("serves the app through API Gateway events, without calling AWS for health", async () => {
    base();
    const { handler } = await import("./lambda.ts");
    const response = await handler(
      {
        version: "2.0",
        routeKey: "$default",
        rawPath: "/healthz",
        rawQueryString: "",
        headers: {},
        requestContext: {
          http: {
            method: "GET",
            path: "/healthz",
            protocol: "HTTP/1.1",
            sourceIp: "1.2.3.4",
            userAgent: "t",
          },
          stage: "$default",
        },
        isBase64Encoded: false,
      } as never,
      {} as never,
    );
    expect(response).toMatchObject({ statusCode: 200 });
    expect(JSON.parse((response as { body: string }).body)).toEqual({ ok: true });
  });

  it("fails the cold start naming a missing or invalid variable", async () => {
    base();
    vi.stubEnv("QUEUE_URL", undefined);
    await expect(import("./lambda.ts")).rejects.toThrow(/QUEUE_URL/);
    vi.resetModules();
    vi.unstubAllEnvs();
    base();
    vi.stubEnv(
      "AUTOCOMPACT_CONFIG",
      '{"conversation":{"compaction":{"auto":{"trigger_ratio":7}}}}',
    );
    await expect(import("./lambda.ts")).rejects.toThrow(
      /AUTOCOMPACT_CONFIG: conversation\.compaction\.auto\.trigger_ratio/,
    );
    vi.resetModules();
    vi.unstubAllEnvs();
    base();
    vi.stubEnv("SUMMARIZER", "bedrock");
    await expect(import("./lambda.ts")).rejects.toThrow(/SUMMARY_MODEL_ID/);
    vi.resetModules();
    vi.unstubAllEnvs();
    base();
    vi.stubEnv("WEBHOOK_SECRETS_KEY_ARN", undefined);
    await expect(import("./lambda.ts")).rejects.toThrow(
      "invalid environment: WEBHOOK_SECRETS_KEY_ARN: required by the API",
    );
  });
});
