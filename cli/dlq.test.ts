/**
 * `autocompact dlq` on AWS, in process: SQS and DynamoDB are mocked at the
 * command level (no SQS engine runs here), so the test pins what the command
 * asks each service and what it prints. The local mode runs end to end in
 * test/e2e/dead-letters.test.ts.
 */
import { PassThrough } from "node:stream";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Io } from "./command.ts";
import { command } from "./commands/dlq.ts";

const DLQ_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/autocompact-dlq.fifo";
const DLQ_ARN = "arn:aws:sqs:eu-west-1:123456789012:autocompact-dlq.fifo";
const QUEUE_ARN = "arn:aws:sqs:eu-west-1:123456789012:autocompact-evaluations.fifo";
const sqs = mockClient(SQSClient);
const dynamo = mockClient(DynamoDBClient);

afterEach(() => {
  sqs.reset();
  dynamo.reset();
});

// The unit project shares workers between files: give the real clients back.
afterAll(() => {
  sqs.restore();
  dynamo.restore();
});

async function dlq(...argv: string[]): Promise<{ code: number; lines: unknown[] }> {
  const stdout = new PassThrough();
  let text = "";
  stdout.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  const io: Io = {
    stdin: new PassThrough(),
    stdout,
    stderr: new PassThrough(),
    env: {},
    now: () => 0,
  };
  const code = await command.run(argv, io);
  return {
    code,
    lines:
      text.trim() === ""
        ? []
        : text
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l)),
  };
}

describe("autocompact dlq on AWS", () => {
  it("lists each dead letter beside its conversation's last failure, and releases it", async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({
        Messages: [
          {
            MessageId: "m1",
            ReceiptHandle: "rh-1",
            Body: '{"tenant":"acme","conversation":"c#1","turn":12}',
            Attributes: { ApproximateReceiveCount: "6", SentTimestamp: "1795000000000" },
          },
          {
            MessageId: "m2",
            ReceiptHandle: "rh-2",
            Body: '{"tenant":"acme","conversation":"quiet","turn":3}',
            Attributes: { ApproximateReceiveCount: "5", SentTimestamp: "1795000000000" },
          },
        ],
      })
      .resolves({});
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    dynamo.on(GetItemCommand).resolves({});
    dynamo
      .on(GetItemCommand, {
        TableName: "Autocompact-Table",
        Key: { pk: { S: "T#acme#C#c%231" }, sk: { S: "FAILURE" } },
        ConsistentRead: true,
      })
      .resolves({
        Item: {
          pk: { S: "T#acme#C#c%231" },
          sk: { S: "FAILURE" },
          turn: { N: "12" },
          error: { S: "SummarizerError" },
          message: { S: "the summarizer answered 503" },
          at: { S: "2026-12-01T08:00:00.000Z" },
          expires_at: { N: "1797926400" },
        },
      });

    const result = await dlq(
      "list",
      "--dlq-url",
      DLQ_URL,
      "--table",
      "Autocompact-Table",
      "--region",
      "eu-west-1",
    );

    expect(result).toEqual({
      code: 0,
      lines: [
        {
          message_id: "m1",
          receive_count: 6,
          sent_at: "2026-11-18T11:06:40.000Z",
          tenant: "acme",
          conversation: "c#1",
          turn: 12,
          last_failure: {
            turn: 12,
            error: "SummarizerError",
            message: "the summarizer answered 503",
            at: "2026-12-01T08:00:00.000Z",
          },
        },
        {
          message_id: "m2",
          receive_count: 5,
          sent_at: "2026-11-18T11:06:40.000Z",
          tenant: "acme",
          conversation: "quiet",
          turn: 3,
          last_failure: null,
        },
      ],
    });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: DLQ_URL, ReceiptHandle: "rh-1", VisibilityTimeout: 0 },
      { QueueUrl: DLQ_URL, ReceiptHandle: "rh-2", VisibilityTimeout: 0 },
    ]);
  });

  it("redrives with a move task from the DLQ to the queue", async () => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: "task-1" });
    expect(
      await dlq("redrive", "--dlq-arn", DLQ_ARN, "--queue-arn", QUEUE_ARN, "--region", "eu-west-1"),
    ).toEqual({ code: 0, lines: [{ task_handle: "task-1" }] });
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input).toEqual({
      SourceArn: DLQ_ARN,
      DestinationArn: QUEUE_ARN,
    });
  });

  it("says which stack output is missing, and refuses local and AWS flags together", async () => {
    await expect(dlq("list", "--dlq-url", DLQ_URL)).rejects.toThrow(
      "give --table (the stack output TableName)",
    );
    await expect(dlq("redrive", "--dlq-arn", DLQ_ARN)).rejects.toThrow(
      "give --queue-arn (the stack output QueueArn)",
    );
    await expect(dlq("list", "--table", "t", "--url", "http://127.0.0.1:8787")).rejects.toThrow(
      "--url and --key are for the local service",
    );
    await expect(dlq("purge")).rejects.toThrow("say `dlq list|redrive|status`");
    expect(sqs.calls()).toHaveLength(0);
  });
});
