/**
 * Lambda's SQS event source mapping, played against a FIFO queue on moto (or
 * a standard one, the idle timers', where group and deduplication ids are none) as
 * AWS documents it for a function with `ReportBatchItemFailures`
 * (infra/stack.ts maps the compactor so):
 *
 * - it receives up to 10 messages (the most `BatchSize` takes on a FIFO queue) with
 *   every system attribute; a batch may hold several messages of one group,
 *   in the group's order, and a group with a message in flight gives none;
 * - it invokes the function once per batch with an `SQSEvent` (body, receipt
 *   handle, attributes) and a Lambda context whose remaining time starts at
 *   the function's timeout;
 * - it deletes every record the answer does not name in `batchItemFailures`;
 *   the named ones stay, become visible again after the queue's visibility
 *   timeout with their receive count one higher, and the queue's redrive
 *   policy moves one to the DLQ once it has been received `maxReceiveCount`
 *   times;
 * - an invocation that throws, or an answer naming a record that is not in
 *   the batch, fails the whole batch (nothing is deleted).
 *
 * One batch at a time (a mapping on a FIFO queue may run batches of
 * different groups at once; one at a time keeps each test's batches in the
 * order they were received, which is what the tests read).
 *
 * moto forgets a message's deduplication id once the message is deleted,
 * where SQS keeps it for 5 minutes from the first send whatever happens to
 * the message: moto then delivers a message SQS would have dropped. The
 * mapping keeps every id it saw and lists such messages
 * ({@link EventSourceMapping.droppedBySqs}); a test expects none. moto also
 * departs from FIFO order when several failed messages of one group become
 * visible again together: it may give a later one first (SQS gives the
 * first). Evaluation does not depend on order (the stale rule), and no test
 * reads that order.
 */
import { randomUUID } from "node:crypto";
import {
  DeleteMessageBatchCommand,
  type Message,
  MessageSystemAttributeName,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { EvaluationMessage } from "../../functions/ports.ts";
import { decodeMessageBody } from "../../functions/queue/message.ts";
import { MOTO_ACCOUNT, MOTO_REGION } from "./moto.ts";

/** SQS's deduplication interval (AWS, "Using the message deduplication ID"). */
const DEDUPLICATION_INTERVAL_MS = 5 * 60_000;

/** One record as the function received it. */
export interface DeliveredRecord {
  readonly messageId: string;
  /** The evaluation message the body holds (undefined for a body that is not one). */
  readonly message: EvaluationMessage | undefined;
  readonly receiveCount: number;
  readonly groupId: string;
  readonly deduplicationId: string;
  readonly sentAt: number;
}

/** One invocation: its records in the order received, and the ids its answer reported failed. */
export interface DeliveredBatch {
  readonly records: readonly DeliveredRecord[];
  readonly failed: readonly string[];
}

/** What the mapping invokes: the compactor's handler, or any SQS handler with a partial batch response. */
export type BatchFunction = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Options of {@link EventSourceMapping}. */
export interface EventSourceMappingOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly handler: BatchFunction;
  /** The function's timeout, the context's remaining time at the start (default 30 s). */
  readonly functionTimeoutMs?: number;
}

/** `tenant/conversation/turn` of a record, for a test's expectations ("?" for a body that is not one). */
export const recordName = (record: DeliveredRecord): string =>
  record.message ? `${record.message.conversation}/${record.message.turn}` : `?${record.messageId}`;

const SYSTEM_ATTRIBUTES = [MessageSystemAttributeName.All];

/** The pause after a receive that returned nothing. */
const IDLE_PAUSE_MS = 50;

export class EventSourceMapping {
  readonly batches: DeliveredBatch[] = [];
  /** Handler errors (a whole batch failed): none expected in a test. */
  readonly errors: unknown[] = [];
  readonly #options: EventSourceMappingOptions;
  /** Every message seen: id → deduplication id and first send. */
  readonly #seen = new Map<string, { deduplicationId: string; sentAt: number }>();
  readonly #droppedBySqs = new Set<string>();
  #stopping = false;
  #loop: Promise<void> | undefined;

  constructor(options: EventSourceMappingOptions) {
    this.#options = options;
  }

  /** Starts polling (resolves at once). */
  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#loop = this.#poll();
  }

  /**
   * Stops polling; resolves once the receive in hand has returned and its
   * batch (if any) is answered and deleted. A receive is never abandoned:
   * SQS would still hide what it took, and those messages would come back
   * later with one receive more.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#loop;
    this.#loop = undefined;
  }

  /** Every record delivered so far, batch after batch. */
  records(): DeliveredRecord[] {
    return this.batches.flatMap((batch) => batch.records);
  }

  /**
   * Messages delivered whose deduplication id another message had when it was
   * sent less than 5 minutes before: SQS would have accepted and dropped them.
   */
  droppedBySqs(): DeliveredRecord[] {
    return this.records().filter((record) => this.#droppedBySqs.has(record.messageId));
  }

  async #poll(): Promise<void> {
    const { client, queueUrl } = this.#options;
    while (!this.#stopping) {
      let messages: Message[];
      try {
        const answer = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            // Lambda long-polls (20 s); short receives 50 ms apart keep a stop quick.
            WaitTimeSeconds: 0,
            MessageSystemAttributeNames: SYSTEM_ATTRIBUTES,
            MessageAttributeNames: ["All"],
          }),
        );
        messages = answer.Messages ?? [];
      } catch (error) {
        this.errors.push(error);
        messages = [];
      }
      if (messages.length > 0) await this.#invoke(messages);
      else await new Promise((resolve) => setTimeout(resolve, IDLE_PAUSE_MS));
    }
  }

  async #invoke(messages: readonly Message[]): Promise<void> {
    const { client, queueUrl, handler } = this.#options;
    const records = messages.map((message) => this.#record(message));
    const delivered = records.map((record) => this.#delivered(record));
    const timeoutMs = this.#options.functionTimeoutMs ?? 30_000;
    let failed: string[];
    try {
      const answer = await handler({ Records: records }, context(timeoutMs));
      failed = answer.batchItemFailures.map((failure) => failure.itemIdentifier);
      const ids = new Set(delivered.map((record) => record.messageId));
      // Lambda reads an answer naming a record it did not send as a failure of the whole batch.
      if (failed.some((id) => !ids.has(id))) failed = [...ids];
    } catch (error) {
      this.errors.push(error);
      failed = delivered.map((record) => record.messageId);
    }
    this.batches.push({ records: delivered, failed });
    const done = records.filter((record) => !failed.includes(record.messageId));
    if (done.length === 0) return;
    const answer = await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done.map((record, index) => ({
          Id: String(index),
          ReceiptHandle: record.receiptHandle,
        })),
      }),
    );
    if ((answer.Failed ?? []).length > 0) this.errors.push(answer.Failed);
  }

  /** The Lambda record of a received message (what the event source mapping builds). */
  #record(message: Message): SQSRecord {
    const attributes = message.Attributes ?? {};
    return {
      messageId: message.MessageId as string,
      receiptHandle: message.ReceiptHandle as string,
      body: message.Body ?? "",
      attributes: {
        ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? "1",
        SentTimestamp: attributes.SentTimestamp ?? "0",
        SenderId: attributes.SenderId ?? "",
        ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? "0",
        ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
        ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
        ...(attributes.MessageDeduplicationId
          ? { MessageDeduplicationId: attributes.MessageDeduplicationId }
          : {}),
      },
      messageAttributes: {},
      md5OfBody: message.MD5OfBody ?? "",
      eventSource: "aws:sqs",
      eventSourceARN: this.#options.queueArn,
      awsRegion: MOTO_REGION,
    };
  }

  /** What the test reads of a record; notes a message SQS would have dropped. */
  #delivered(record: SQSRecord): DeliveredRecord {
    const decoded = decodeMessageBody(record.body);
    const delivered: DeliveredRecord = {
      messageId: record.messageId,
      message: decoded.ok ? decoded.message : undefined,
      receiveCount: Number(record.attributes.ApproximateReceiveCount),
      groupId: record.attributes.MessageGroupId ?? "",
      deduplicationId: record.attributes.MessageDeduplicationId ?? "",
      sentAt: Number(record.attributes.SentTimestamp),
    };
    // A standard queue's messages (the idle timers') have no deduplication id: SQS drops none.
    if (delivered.deduplicationId !== "" && !this.#seen.has(delivered.messageId)) {
      const earlier = [...this.#seen.values()].some(
        (seen) =>
          seen.deduplicationId === delivered.deduplicationId &&
          Math.abs(delivered.sentAt - seen.sentAt) < DEDUPLICATION_INTERVAL_MS,
      );
      if (earlier) this.#droppedBySqs.add(delivered.messageId);
      this.#seen.set(delivered.messageId, {
        deduplicationId: delivered.deduplicationId,
        sentAt: delivered.sentAt,
      });
    }
    return delivered;
  }
}

/** A Lambda context of a function with `timeoutMs`, started now. */
function context(timeoutMs: number): Context {
  const started = Date.now();
  const fail = () => {
    throw new Error("the handler returns a promise; Lambda's callbacks are not used");
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: "autocompact-compactor",
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:${MOTO_REGION}:${MOTO_ACCOUNT}:function:autocompact-compactor`,
    memoryLimitInMB: "512",
    awsRequestId: randomUUID(),
    logGroupName: "/aws/lambda/autocompact-compactor",
    logStreamName: "moto",
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    done: fail,
    fail,
    succeed: fail,
  };
}
