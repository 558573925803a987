/**
 * Where notifications travel on AWS (docs/architecture.md §16): the stack's
 * EventBridge bus, where the api and the compactor put them (and AWS-side
 * consumers may attach rules of their own), a rule forwarding autocompact's
 * events to the notifier's queue, and that queue's dead-letter queue, which
 * also takes what EventBridge itself could not put on the queue.
 */
import { Duration, type Stack } from "aws-cdk-lib";
import { EventBus, Rule } from "aws-cdk-lib/aws-events";
import { SqsQueue } from "aws-cdk-lib/aws-events-targets";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { EVENT_SOURCE } from "../functions/notifications/size.ts";

/**
 * How many times a notification is received (tried) before it moves to the
 * DLQ: with a visibility timeout of 6x the notifier's timeout, about 15 minutes.
 */
export const NOTIFICATION_RECEIVES = 6;

/** The bus, rule, queue and DLQ of a stack whose notifier times out after `notifierTimeout`. */
export function notificationChannel(stack: Stack, notifierTimeout: Duration) {
  const eventBus = new EventBus(stack, "NotificationBus", {
    description:
      "autocompact: compaction.fired, compaction.still_over_threshold, compactions.reset",
  });
  // SSE-SQS as for the evaluation queue: EventBridge can send to it without a
  // key policy. A notification holds a band (perhaps a summary), never a secret.
  const deadLetterQueue = new Queue(stack, "NotificationDeadLetterQueue", {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  const queue = new Queue(stack, "NotificationQueue", {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(notifierTimeout.toSeconds() * 6),
    retentionPeriod: Duration.days(4),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: NOTIFICATION_RECEIVES },
  });
  const rule = new Rule(stack, "NotificationRule", {
    eventBus,
    description: "autocompact notifications to the notifier's queue",
    eventPattern: { source: [EVENT_SOURCE] },
    targets: [
      new SqsQueue(queue, {
        // What EventBridge itself cannot put on the queue (retried for a day) lands in the DLQ.
        deadLetterQueue,
        retryAttempts: 185,
        maxEventAge: Duration.hours(24),
      }),
    ],
  });
  return { eventBus, rule, queue, deadLetterQueue };
}
