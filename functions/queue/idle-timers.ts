/**
 * The idle timers (issue 29, docs/architecture.md §2 "Idle timers"): a timer
 * is an evaluation message with `idle_from_ms`, delivered to the compactor
 * once it is due. Locally it is a delayed message of an in-process queue of
 * its own (journaled, so pending timers survive a restart); on AWS a message
 * with `DelaySeconds` on a standard queue. A standard queue delays a message
 * 900 s at most: a timer due later arrives early, its evaluation finds the
 * conversation has not rested long enough, defers again and schedules the
 * rest (at most four hops for the longest rest, 3600 s), so no scheduler
 * service is needed. A timer is its own FIFO group locally: a pending one
 * never holds back another.
 */
import { createHash } from "node:crypto";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { QueueError } from "../errors.ts";
import type { Clock, EvaluationMessage, IdleTimers } from "../ports.ts";
import type { InProcessQueue } from "./in-process.ts";
import { encodeMessageBody, messageDeduplicationId } from "./message.ts";

/** The longest delay SQS gives a message (`DelaySeconds`). */
export const MAX_DELAY_SECONDS = 900;

/** One id per timer: its turn's message and its due time (a re-deferral is another timer). */
export function timerId(message: EvaluationMessage, dueMillis: number): string {
  return createHash("sha256")
    .update(JSON.stringify([messageDeduplicationId(message), dueMillis]))
    .digest("hex");
}

/** The whole seconds of delay until `dueMillis`, capped at SQS's maximum. */
export function delaySeconds(dueMillis: number, nowMillis: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueMillis - nowMillis) / 1000)));
}

/** Timers as delayed messages of a local in-process queue (with its journal). */
export class QueueIdleTimers implements IdleTimers {
  constructor(
    readonly queue: InProcessQueue,
    readonly clock: Clock,
  ) {}

  async schedule(message: EvaluationMessage, dueMillis: number): Promise<void> {
    const id = timerId(message, dueMillis);
    await this.queue.send(encodeMessageBody(message), {
      groupId: id,
      deduplicationId: id,
      delayMs: Math.max(0, dueMillis - this.clock.nowMillis()),
    });
  }
}

/** Timers as `DelaySeconds` messages of a standard SQS queue. */
export class SqsIdleTimers implements IdleTimers {
  constructor(
    readonly client: SQSClient,
    readonly queueUrl: string,
    readonly clock: Clock,
  ) {}

  async schedule(message: EvaluationMessage, dueMillis: number): Promise<void> {
    const command = new SendMessageCommand({
      QueueUrl: this.queueUrl,
      MessageBody: encodeMessageBody(message),
      DelaySeconds: delaySeconds(dueMillis, this.clock.nowMillis()),
    });
    try {
      await this.client.send(command);
    } catch (error) {
      throw new QueueError(
        `could not schedule the idle timer of turn ${message.turn} of conversation ${JSON.stringify(message.conversation)} on ${this.queueUrl}`,
        { cause: error },
      );
    }
  }
}
