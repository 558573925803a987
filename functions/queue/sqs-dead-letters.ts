/**
 * The evaluation queue's dead letters on Amazon SQS, for `autocompact dlq`:
 * list them without taking them, and redrive them to the source queue.
 *
 * Listing receives (up to 10 a call, `MaxNumberOfMessages`) with a short
 * visibility timeout, so a listing that dies leaves them hidden for seconds
 * only, and releases each message it received at once when the listing is
 * done (`ChangeMessageVisibility` to 0, all in parallel). It receives again
 * until a receive returns nothing new or `limit` messages are seen: on a FIFO
 * queue a received message hides the rest of its group, and releasing
 * between receives would return the same messages again. Receiving adds to
 * a dead letter's `ApproximateReceiveCount` (the DLQ has no redrive policy
 * of its own, so it never moves). Redrive is an SQS message move task
 * (`StartMessageMoveTask`) from the DLQ to the source queue.
 */
import {
  ChangeMessageVisibilityCommand,
  ListMessageMoveTasksCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import { QueueError } from "../errors.ts";
import type { RawDeadLetter } from "./dead-letters.ts";

/** Seconds a listed message stays hidden if the listing never releases it. */
export const LIST_VISIBILITY_TIMEOUT_SECONDS = 10;

/** Where the dead letters are and where they go back to (the stack's outputs). */
export interface SqsDeadLetterQueues {
  /** The DLQ's URL (output DeadLetterQueueUrl). */
  readonly deadLetterQueueUrl: string;
  /** The DLQ's ARN (output DeadLetterQueueArn): the move task's source. */
  readonly deadLetterQueueArn: string;
  /** The evaluation queue's ARN (output QueueArn): the move task's destination. */
  readonly sourceQueueArn: string;
}

/** A message move task, as `ListMessageMoveTasks` reports it. */
export interface MoveTask {
  readonly status: string;
  readonly moved: number;
  readonly to_move?: number;
  readonly failure?: string;
}

export class SqsDeadLetters {
  readonly #client: SQSClient;
  readonly #queues: SqsDeadLetterQueues;

  constructor(client: SQSClient, queues: SqsDeadLetterQueues) {
    this.#client = client;
    this.#queues = queues;
  }

  /** Up to `limit` dead letters (default 100), each released again before this resolves. */
  async list(limit = 100): Promise<RawDeadLetter[]> {
    const seen = new Map<string, Message>();
    try {
      while (seen.size < limit) {
        const { Messages = [] } = await this.#client.send(
          new ReceiveMessageCommand({
            QueueUrl: this.#queues.deadLetterQueueUrl,
            MaxNumberOfMessages: Math.min(10, limit - seen.size),
            VisibilityTimeout: LIST_VISIBILITY_TIMEOUT_SECONDS,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
          }),
        );
        const fresh = Messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
        for (const message of fresh) seen.set(message.MessageId as string, message);
        if (fresh.length === 0) break;
      }
    } catch (error) {
      throw new QueueError(
        `could not receive from the dead-letter queue ${this.#queues.deadLetterQueueUrl}`,
        { cause: error },
      );
    } finally {
      await this.#release([...seen.values()]);
    }
    return [...seen.values()].map((message) => ({
      id: message.MessageId as string,
      body: message.Body ?? "",
      receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
      sentAt: Number(message.Attributes?.SentTimestamp ?? 0),
    }));
  }

  /** Starts moving every dead letter back to the source queue; the task's handle. */
  async redrive(): Promise<string> {
    try {
      const { TaskHandle } = await this.#client.send(
        new StartMessageMoveTaskCommand({
          SourceArn: this.#queues.deadLetterQueueArn,
          DestinationArn: this.#queues.sourceQueueArn,
        }),
      );
      return TaskHandle ?? "";
    } catch (error) {
      throw new QueueError(
        `could not start moving the dead letters of ${this.#queues.deadLetterQueueArn} to ${this.#queues.sourceQueueArn}`,
        { cause: error },
      );
    }
  }

  /** The most recent move task from the DLQ (SQS keeps the last ones), if any. */
  async lastMoveTask(): Promise<MoveTask | undefined> {
    const { Results = [] } = await this.#client.send(
      new ListMessageMoveTasksCommand({
        SourceArn: this.#queues.deadLetterQueueArn,
        MaxResults: 1,
      }),
    );
    const task = Results[0];
    if (!task) return undefined;
    return {
      status: task.Status ?? "UNKNOWN",
      moved: task.ApproximateNumberOfMessagesMoved ?? 0,
      ...(task.ApproximateNumberOfMessagesToMove === undefined
        ? {}
        : { to_move: task.ApproximateNumberOfMessagesToMove }),
      ...(task.FailureReason ? { failure: task.FailureReason } : {}),
    };
  }

  /** Makes every listed message visible again at once (a failed release only delays it). */
  async #release(messages: readonly Message[]): Promise<void> {
    await Promise.allSettled(
      messages.map((message) =>
        this.#client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: this.#queues.deadLetterQueueUrl,
            ReceiptHandle: message.ReceiptHandle,
            VisibilityTimeout: 0,
          }),
        ),
      ),
    );
  }
}
