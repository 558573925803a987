/**
 * moto for tests: the server test/setup/moto.ts started (or the one
 * `AUTOCOMPACT_TEST_MOTO_ENDPOINT` names), SDK clients for it, and fresh
 * resources per suite: an evaluation queue pair as the stack declares it (a
 * FIFO queue whose redrive policy sends a message to a FIFO dead-letter
 * queue after `maxReceiveCount` receives), the idle timers' standard queue
 * pair, KMS keys, an EventBridge bus.
 */
import { randomUUID } from "node:crypto";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { KMSClient } from "@aws-sdk/client-kms";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  QueueAttributeName,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { inject } from "vitest";
import type { SqsDeadLetterQueues } from "../../functions/queue/sqs-dead-letters.ts";

/** The region every moto client of the tests uses (moto keeps one set of resources per region). */
export const MOTO_REGION = "us-east-1";

/** The endpoint of the run's moto server; throws the setup's reason when there is none. */
export function motoEndpoint(): string {
  const environment = inject("moto");
  if (environment?.endpoint === undefined) {
    throw new Error(
      `moto is not available for this test run: ${environment?.error ?? "test/setup/moto.ts did not run (is it in vitest.config.ts globalSetup?)"}`,
    );
  }
  return environment.endpoint;
}

/** What every client for moto is built with: its endpoint, a region, credentials moto accepts. */
export function motoClientConfig(region = MOTO_REGION) {
  return {
    endpoint: motoEndpoint(),
    region,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  };
}

/** moto's account when a request names none. */
export const MOTO_ACCOUNT = "123456789012";

/**
 * A client's requests go to `account` of moto (moto keeps resources per
 * account and reads the account from the `x-moto-account-id` header).
 */
function inAccount(client: KMSClient, account: string): KMSClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers["x-moto-account-id"] = account;
      return next(args);
    },
    { step: "build", name: "motoAccount" },
  );
  return client;
}

export const motoSqs = (): SQSClient => new SQSClient(motoClientConfig());
/** A KMS client of `account` (default {@link MOTO_ACCOUNT}). */
export const motoKms = (account = MOTO_ACCOUNT): KMSClient =>
  inAccount(new KMSClient(motoClientConfig()), account);
export const motoEventBridge = (): EventBridgeClient => new EventBridgeClient(motoClientConfig());

/** A unique resource name (SQS allows letters, digits, `-` and `_`, 80 characters). */
export const uniqueName = (prefix: string): string =>
  `${prefix}-${randomUUID().replaceAll("-", "").slice(0, 16)}`;

/** The evaluation queue and its dead-letter queue, as infra/stack.ts declares them. */
export interface EvaluationQueues extends SqsDeadLetterQueues {
  readonly queueUrl: string;
}

/** Options of {@link freshEvaluationQueues}; the stack's are 5 receives and 6x the function's timeout. */
export interface QueueOptions {
  readonly maxReceiveCount: number;
  readonly visibilityTimeoutSeconds: number;
}

/** Creates a FIFO queue with a FIFO DLQ behind it (a redrive policy of `maxReceiveCount`). */
export async function freshEvaluationQueues(
  client: SQSClient,
  options: QueueOptions,
): Promise<EvaluationQueues> {
  const name = uniqueName("evaluation");
  const fifo = { FifoQueue: "true", ContentBasedDeduplication: "false" };
  const dlq = await client.send(
    new CreateQueueCommand({ QueueName: `${name}-dlq.fifo`, Attributes: fifo }),
  );
  const deadLetterQueueUrl = dlq.QueueUrl as string;
  const deadLetterQueueArn = await queueArn(client, deadLetterQueueUrl);
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: `${name}.fifo`,
      Attributes: {
        ...fifo,
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: deadLetterQueueArn,
          maxReceiveCount: options.maxReceiveCount,
        }),
      },
    }),
  );
  const queueUrl = queue.QueueUrl as string;
  return {
    queueUrl,
    deadLetterQueueUrl,
    deadLetterQueueArn,
    sourceQueueArn: await queueArn(client, queueUrl),
  };
}

/** The idle timer queue and its DLQ, as infra/idle-timers.ts declares them: standard queues. */
export interface IdleTimerQueues {
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
}

/** Creates a standard queue (per-message `DelaySeconds`) with a standard DLQ behind it. */
export async function freshIdleTimerQueues(
  client: SQSClient,
  options: QueueOptions,
): Promise<IdleTimerQueues> {
  const name = uniqueName("idle-timers");
  const dlq = await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const deadLetterQueueUrl = dlq.QueueUrl as string;
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await queueArn(client, deadLetterQueueUrl),
          maxReceiveCount: options.maxReceiveCount,
        }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl as string, deadLetterQueueUrl };
}

/**
 * How many messages a queue holds, visible or in flight (SQS's approximate
 * counts, exact on moto). A message waiting to be moved to the DLQ counts
 * until a receive moves it.
 */
export async function queueDepth(client: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        QueueAttributeName.ApproximateNumberOfMessages,
        QueueAttributeName.ApproximateNumberOfMessagesNotVisible,
      ],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

/** A queue's ARN. */
export async function queueArn(client: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [QueueAttributeName.QueueArn],
    }),
  );
  return Attributes?.QueueArn as string;
}
