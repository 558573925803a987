import {
  ChangeMessageVisibilityCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SQSClient,
  SQSServiceException,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { QueueError } from "../errors.ts";
import { describeDeadLetter } from "./dead-letters.ts";
import { SqsDeadLetters } from "./sqs-dead-letters.ts";

// No SQS engine runs here: the client is mocked at the command level and the
// tests pin the requests the adapter sends.
const DLQ_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/autocompact-dlq.fifo";
const DLQ_ARN = "arn:aws:sqs:eu-west-1:123456789012:autocompact-dlq.fifo";
const QUEUE_ARN = "arn:aws:sqs:eu-west-1:123456789012:autocompact-evaluations.fifo";
const sqs = mockClient(SQSClient);

afterEach(() => {
  sqs.reset();
});

// The unit project shares workers between files: give the real clients back.
afterAll(() => {
  sqs.restore();
});

const newAdmin = () =>
  new SqsDeadLetters(new SQSClient({ region: "eu-west-1" }), {
    deadLetterQueueUrl: DLQ_URL,
    deadLetterQueueArn: DLQ_ARN,
    sourceQueueArn: QUEUE_ARN,
  });

const message = (id: string, turn: number) => ({
  MessageId: id,
  ReceiptHandle: `rh-${id}`,
  Body: JSON.stringify({ tenant: "alice", conversation: "conv-1", turn }),
  Attributes: { ApproximateReceiveCount: "6", SentTimestamp: "1795000000000" },
});

describe("SqsDeadLetters", () => {
  it("lists by receiving with a short visibility timeout, then releases every message at once", async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message("m1", 3), message("m2", 4)] })
      .resolvesOnce({ Messages: [message("m3", 5)] })
      .resolves({});
    sqs.on(ChangeMessageVisibilityCommand).resolves({});

    const listed = await newAdmin().list();

    expect(listed).toEqual([
      {
        id: "m1",
        body: '{"tenant":"alice","conversation":"conv-1","turn":3}',
        receiveCount: 6,
        sentAt: 1795000000000,
      },
      {
        id: "m2",
        body: '{"tenant":"alice","conversation":"conv-1","turn":4}',
        receiveCount: 6,
        sentAt: 1795000000000,
      },
      {
        id: "m3",
        body: '{"tenant":"alice","conversation":"conv-1","turn":5}',
        receiveCount: 6,
        sentAt: 1795000000000,
      },
    ]);
    const receives = sqs.commandCalls(ReceiveMessageCommand).map((call) => call.args[0].input);
    expect(receives).toHaveLength(3);
    expect(receives[0]).toEqual({
      QueueUrl: DLQ_URL,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 10,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
    });
    expect(
      sqs.commandCalls(ChangeMessageVisibilityCommand).map((call) => call.args[0].input),
    ).toEqual(
      ["m1", "m2", "m3"].map((id) => ({
        QueueUrl: DLQ_URL,
        ReceiptHandle: `rh-${id}`,
        VisibilityTimeout: 0,
      })),
    );
  });

  it("stops at a receive that brings nothing new, and at the limit", async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [message("m1", 3)] });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    expect((await newAdmin().list()).map((m) => m.id)).toEqual(["m1"]);
    expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(2);

    sqs.reset();
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message("a", 1), message("b", 2)] })
      .resolves({ Messages: [message("c", 3)] });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    expect((await newAdmin().list(3)).map((m) => m.id)).toEqual(["a", "b", "c"]);
    expect(
      sqs.commandCalls(ReceiveMessageCommand).map((call) => call.args[0].input.MaxNumberOfMessages),
    ).toEqual([3, 1]);
  });

  it("releases what it received when a receive fails, and says which queue", async () => {
    const failure = new SQSServiceException({
      name: "AccessDenied",
      $fault: "client",
      $metadata: {},
      message: "not authorized to perform sqs:ReceiveMessage",
    });
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message("m1", 3)] })
      .rejects(failure);
    sqs.on(ChangeMessageVisibilityCommand).resolves({});

    const error = await newAdmin()
      .list()
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(QueueError);
    expect((error as QueueError).message).toContain(DLQ_URL);
    expect((error as QueueError).cause).toBe(failure);
    expect(
      sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input.ReceiptHandle),
    ).toEqual(["rh-m1"]);
  });

  it("redrives with a message move task from the DLQ to the evaluation queue", async () => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: "task-1" });
    sqs.on(ListMessageMoveTasksCommand).resolves({
      Results: [{ Status: "COMPLETED", ApproximateNumberOfMessagesMoved: 3 }],
    });

    expect(await newAdmin().redrive()).toBe("task-1");
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]?.args[0].input).toEqual({
      SourceArn: DLQ_ARN,
      DestinationArn: QUEUE_ARN,
    });
    expect(await newAdmin().lastMoveTask()).toEqual({ status: "COMPLETED", moved: 3 });
    expect(sqs.commandCalls(ListMessageMoveTasksCommand)[0]?.args[0].input).toEqual({
      SourceArn: DLQ_ARN,
      MaxResults: 1,
    });
  });
});

describe("describeDeadLetter", () => {
  it("puts the conversation's last failure beside tenant, conversation and turn", async () => {
    const failure = {
      turn: 3,
      error: "SummarizerError",
      message: "no summary before the deadline",
      at: "2026-12-01T08:00:00.000Z",
    };
    const asked: unknown[] = [];
    const entry = await describeDeadLetter(
      { id: "m1", body: message("m1", 3).Body, receiveCount: 6, sentAt: 1795000000000 },
      async (ref) => {
        asked.push(ref);
        return failure;
      },
    );
    expect(asked).toEqual([{ tenant: "alice", conversation: "conv-1" }]);
    expect(entry).toEqual({
      message_id: "m1",
      receive_count: 6,
      sent_at: "2026-11-18T11:06:40.000Z",
      tenant: "alice",
      conversation: "conv-1",
      turn: 3,
      last_failure: failure,
    });
  });

  it("shows a body that is not an evaluation message, cut to 1 KB, with the reason", async () => {
    const entry = await describeDeadLetter(
      { id: "m2", body: `{not json${"x".repeat(2000)}`, receiveCount: 5, sentAt: 0 },
      async () => {
        throw new Error("not asked");
      },
    );
    expect(entry).toMatchObject({
      message_id: "m2",
      receive_count: 5,
      sent_at: "1970-01-01T00:00:00.000Z",
      body: `{not json${"x".repeat(1015)}…`,
    });
    expect((entry as { invalid: string }).invalid).toMatch(/^the body is not JSON/);
  });
});
