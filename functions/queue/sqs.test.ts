import { SendMessageCommand, SQSClient, SQSServiceException } from "@aws-sdk/client-sqs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { QueueError } from "../errors.ts";
import { decodeMessageBody, messageDeduplicationId, messageGroupId } from "./message.ts";
import { SqsTurnQueue } from "./sqs.ts";

// No SQS engine runs on this machine: the SDK client is mocked at the
// command level, and the tests pin the exact request the adapter sends.
const QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/autocompact-evaluations.fifo";
const sqs = mockClient(SQSClient);

afterEach(() => {
  sqs.reset();
});

// The unit project shares workers between files: give the real clients back.
afterAll(() => {
  sqs.restore();
});

const newQueue = () => new SqsTurnQueue(new SQSClient({ region: "eu-west-1" }), QUEUE_URL);

/** SQS's rules for MessageGroupId and MessageDeduplicationId. */
const VALID_FIFO_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

describe("SqsTurnQueue", () => {
  it("sends one FIFO message per turn: group per conversation, dedup per turn, JSON body", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: "m-1" });

    await newQueue().enqueue({ tenant: "alice", conversation: "conv-1", turn: 12 });

    const calls = sqs.commandCalls(SendMessageCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: '{"tenant":"alice","conversation":"conv-1","turn":12}',
      // sha256(JSON.stringify(["alice","conv-1"]))
      MessageGroupId: "0b80440322ba898349c83f51105d188820dcc19cb556e0af2354df517c8ce5a2",
      // sha256(JSON.stringify(["alice","conv-1",12]))
      MessageDeduplicationId: "14b187fa65ae48ba44baf0c190f1d23da157c414772d67dd239290bc46bc31df",
    });
  });

  it("keeps ids valid and distinct for long, odd and ambiguous tenant/conversation ids", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: "m" });
    const queue = newQueue();
    const messages = [
      { tenant: "t", conversation: "x".repeat(1000), turn: 0 },
      { tenant: "t", conversation: "émoji 🚀 / spaces\nnewline", turn: 1 },
      { tenant: "a", conversation: "b/c", turn: 2 },
      { tenant: "a/b", conversation: "c", turn: 2 },
    ];
    for (const message of messages) await queue.enqueue(message);

    const inputs = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    for (const input of inputs) {
      expect(input.MessageGroupId).toMatch(VALID_FIFO_ID);
      expect(input.MessageDeduplicationId).toMatch(VALID_FIFO_ID);
    }
    expect(new Set(inputs.map((i) => i.MessageGroupId)).size).toBe(4);
    expect(new Set(inputs.map((i) => i.MessageDeduplicationId)).size).toBe(4);
    expect(inputs.map((i) => decodeMessageBody(i.MessageBody ?? ""))).toEqual(
      messages.map((message) => ({ ok: true, message })),
    );
  });

  it("puts every turn of a conversation in one group, with a dedup id per turn", () => {
    const ref = { tenant: "alice", conversation: "c" };
    const group = messageGroupId(ref);
    expect(messageGroupId({ ...ref, turn: 7 } as typeof ref)).toBe(group);
    expect(messageGroupId({ tenant: "alice", conversation: "d" })).not.toBe(group);
    expect(messageGroupId({ tenant: "bob", conversation: "c" })).not.toBe(group);
    // No separator ambiguity: ("a|b", "c") and ("a", "b|c") are different conversations.
    expect(messageGroupId({ tenant: "a|b", conversation: "c" })).not.toBe(
      messageGroupId({ tenant: "a", conversation: "b|c" }),
    );
    const dedup = new Set([1, 2, 3].map((turn) => messageDeduplicationId({ ...ref, turn })));
    expect(dedup.size).toBe(3);
    expect(messageDeduplicationId({ ...ref, turn: 1 })).toBe(
      messageDeduplicationId({ tenant: "alice", conversation: "c", turn: 1 }),
    );
  });

  it("carries posted_at_ms in the body; the group and the deduplication id ignore it", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: "m-1" });
    const queue = newQueue();
    const message = { tenant: "alice", conversation: "conv-1", turn: 12 };

    await queue.enqueue({ ...message, posted_at_ms: 1_795_000_000_000 });
    // A retried enqueue of the same turn, later: still deduplicated by SQS.
    await queue.enqueue({ ...message, posted_at_ms: 1_795_000_000_250 });

    const inputs = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(inputs[0]?.MessageBody).toBe(
      '{"tenant":"alice","conversation":"conv-1","turn":12,"posted_at_ms":1795000000000}',
    );
    expect(decodeMessageBody(inputs[0]?.MessageBody ?? "")).toEqual({
      ok: true,
      message: { ...message, posted_at_ms: 1_795_000_000_000 },
    });
    expect(inputs[1]?.MessageGroupId).toBe(inputs[0]?.MessageGroupId);
    expect(inputs[1]?.MessageDeduplicationId).toBe(inputs[0]?.MessageDeduplicationId);
    expect(inputs[0]?.MessageDeduplicationId).toBe(messageDeduplicationId(message));
  });

  it("carries the incarnation in the body and the deduplication id: the same turn of two lives is not a duplicate", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: "m-1" });
    const queue = newQueue();
    const message = { tenant: "alice", conversation: "conv-1", turn: 12 };

    await queue.enqueue({ ...message, incarnation: "life-1" });
    await queue.enqueue({ ...message, incarnation: "life-2" });

    const inputs = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => input.MessageBody)).toEqual([
      '{"tenant":"alice","conversation":"conv-1","turn":12,"incarnation":"life-1"}',
      '{"tenant":"alice","conversation":"conv-1","turn":12,"incarnation":"life-2"}',
    ]);
    expect(inputs.map((input) => input.MessageDeduplicationId)).toEqual([
      // sha256(JSON.stringify(["alice","conv-1",12,"life-1"]))
      "ad4f7f6cc4c52f9089500e9673deb51f60990cc67ebc89b836b7a2a69ca0037c",
      // sha256(JSON.stringify(["alice","conv-1",12,"life-2"]))
      "8798eb6962b139da79685eff2fd72a36d1c1eb97b302f3732fc5cd9725240288",
    ]);
    // One group per conversation id, whatever its life.
    expect(inputs[1]?.MessageGroupId).toBe(inputs[0]?.MessageGroupId);
    expect(decodeMessageBody(inputs[1]?.MessageBody ?? "")).toEqual({
      ok: true,
      message: { ...message, incarnation: "life-2" },
    });
    expect(decodeMessageBody(JSON.stringify({ ...message, incarnation: "" })).ok).toBe(false);
  });

  it("decodes a body queued before posted_at_ms existed, and drops one that is not a time without failing the message", () => {
    const message = { tenant: "alice", conversation: "conv-1", turn: 3 };
    const decoded = decodeMessageBody(JSON.stringify(message));
    expect(decoded).toEqual({ ok: true, message });
    expect(decoded.ok && decoded.message.posted_at_ms).toBeUndefined();
    for (const bad of ["yesterday", -1, 1.5, null]) {
      const result = decodeMessageBody(JSON.stringify({ ...message, posted_at_ms: bad }));
      expect(result.ok).toBe(true);
      expect(result.ok && result.message.posted_at_ms).toBeUndefined();
    }
    // The message itself is still checked.
    expect(decodeMessageBody(JSON.stringify({ ...message, turn: -1, posted_at_ms: 1 })).ok).toBe(
      false,
    );
  });

  it("wraps SDK failures in QueueError, keeping the SDK error as cause", async () => {
    const failure = new SQSServiceException({
      name: "QueueDoesNotExist",
      $fault: "client",
      $metadata: {},
      message: "The specified queue does not exist.",
    });
    sqs.on(SendMessageCommand).rejects(failure);

    const error = await newQueue()
      .enqueue({ tenant: "alice", conversation: "conv-1", turn: 3 })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(QueueError);
    expect((error as QueueError).cause).toBe(failure);
    expect((error as QueueError).message).toContain("turn 3");
    expect((error as QueueError).message).toContain("QueueDoesNotExist");
    expect((error as QueueError).message).toContain(QUEUE_URL);
  });
});
