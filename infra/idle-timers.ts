/**
 * The idle timers' queue on AWS (issue 29, docs/architecture.md §2 "Idle
 * timers"): a standard queue, since FIFO queues take no per-message delay,
 * whose messages are `DelaySeconds` timers (functions/queue/idle-timers.ts),
 * with a dead-letter queue behind it. The compactor both sends them (a
 * deferral, and each re-deferral hop of a rest over 900 s) and consumes
 * them: no other function schedules a timer.
 */
import { Duration } from "aws-cdk-lib";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";

/** How many times a timer is received before it moves to the DLQ: the evaluation queue's count. */
export const IDLE_TIMER_RECEIVES = 5;

/**
 * The most concurrent compactor invocations the timer queue's event source
 * starts: SQS's minimum. Timers are at most one per deferred turn, a few
 * hops for a long rest; the evaluation queue keeps the compactor's
 * concurrency (docs/architecture.md §10, Concurrency).
 */
export const IDLE_TIMER_MAX_CONCURRENCY = 2;

export interface IdleTimerQueueProps {
  /** As the evaluation queue's: 6x the compactor's timeout (a timer that fires may summarize). */
  readonly visibilityTimeout: Duration;
}

/** The timer queue and its DLQ; {@link IdleTimerQueue.connect} hands both ends to the compactor. */
export class IdleTimerQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: IdleTimerQueueProps) {
    super(scope, id);
    // SSE-SQS as for the evaluation queue: a timer holds ids and times, no content.
    this.deadLetterQueue = new Queue(this, "DeadLetterQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, "Queue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: IDLE_TIMER_RECEIVES },
    });
  }

  /** The compactor consumes the timers as they fall due and sends them (deferrals, re-deferral hops). */
  connect(compactor: LambdaFunction, options: { readonly batchSize: number }): void {
    compactor.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: options.batchSize,
        // As the evaluation source: a failed timer fails alone, the others are deleted.
        reportBatchItemFailures: true,
        maxConcurrency: IDLE_TIMER_MAX_CONCURRENCY,
      }),
    );
    this.queue.grantSendMessages(compactor);
  }
}
