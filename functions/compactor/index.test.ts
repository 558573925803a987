import type { Context } from "aws-lambda";
import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.resetModules();
});

const lambdaContext: Context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: "compactor",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:compactor",
  memoryLimitInMB: "256",
  awsRequestId: "req-1",
  logGroupName: "/aws/lambda/compactor",
  logStreamName: "stream",
  getRemainingTimeInMillis: () => 60_000,
  done: () => {},
  fail: () => {},
  succeed: () => {},
};

describe("compactor Lambda entry point", () => {
  it("wires a handler from the environment at cold start, without calling AWS", async () => {
    vi.stubEnv("TABLE_NAME", "autocompact-test");
    vi.stubEnv("LOG_LEVEL", "warn");
    vi.stubEnv("AWS_REGION", "eu-west-1");
    const module = await import("./index.ts");
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    // A record that is not an evaluation message fails alone, before anything reaches AWS.
    const response = await module.handler(
      {
        Records: [
          {
            messageId: "m1",
            receiptHandle: "rh",
            body: "not json",
            attributes: {
              ApproximateReceiveCount: "1",
              SentTimestamp: "1795000000000",
              SenderId: "test",
              ApproximateFirstReceiveTimestamp: "1795000000000",
              MessageGroupId: "g",
              MessageDeduplicationId: "d",
            },
            messageAttributes: {},
            md5OfBody: "",
            eventSource: "aws:sqs",
            eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:evaluations.fifo",
            awsRegion: "eu-west-1",
          },
        ],
      },
      lambdaContext,
      () => {},
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m1" }] });
  });

  it("fails the cold start with the name of a missing variable", async () => {
    vi.stubEnv("TABLE_NAME", undefined);
    await expect(import("./index.ts")).rejects.toThrow(/TABLE_NAME/);
  });
});
