/**
 * The Lambda shapes the in-process queue speaks (in-process.ts): the SQS
 * record of a received message, and which records a batch handler's answer
 * failed under `ReportBatchItemFailures`.
 */
import { createHash } from "node:crypto";
import type { SQSRecord } from "aws-lambda";

/** A received message, as the queue hands it over. */
export interface ReceivedMessage {
  readonly id: string;
  readonly receipt: string;
  readonly body: string;
  readonly group: string;
  readonly dedup: string;
  readonly sequence: number;
  readonly sentAt: number;
  readonly receiveCount: number;
  readonly firstReceivedAt: number | undefined;
}

/** The record of a received message, as SQS gives it to a Lambda from the queue `arn`. */
export function sqsRecord(message: ReceivedMessage, arn: string): SQSRecord {
  return {
    messageId: message.id,
    receiptHandle: message.receipt,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: "in-process",
      ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
      SequenceNumber: String(message.sequence).padStart(20, "0"),
      MessageGroupId: message.group,
      MessageDeduplicationId: message.dedup,
    },
    messageAttributes: {},
    md5OfBody: createHash("md5").update(message.body).digest("hex"),
    eventSource: "aws:sqs",
    eventSourceARN: arn,
    awsRegion: "local",
  };
}

/**
 * The ids of the records a handler's answer failed, of the batch's `all`:
 * none for no answer or no `batchItemFailures` (all done); undefined when
 * the answer is not a partial batch response for this batch (Lambda then
 * retries the whole batch).
 */
export function failedRecordIds(
  response: unknown,
  all: ReadonlySet<string>,
): Set<string> | undefined {
  if (response === undefined || response === null) return new Set();
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined) return new Set();
  const failed = new Set<string>();
  const valid =
    Array.isArray(failures) &&
    failures.every((failure) => {
      const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
      if (typeof id !== "string" || !all.has(id)) return false;
      failed.add(id);
      return true;
    });
  return valid ? failed : undefined;
}
