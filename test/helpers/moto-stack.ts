/**
 * The deployed pipeline with SQS on moto: the service enqueues through the
 * real SQS FIFO adapter (functions/queue/sqs.ts) onto a FIFO queue with a
 * DLQ behind it, and an {@link EventSourceMapping} feeds the compactor's real
 * handler, wired as functions/compactor/index.ts and functions/local/runtime.ts
 * wire it (evaluateTurn on the conversation store and tenant directory,
 * failures recorded on the conversation), on a fresh table of the run's
 * DynamoDB Local. The api and the compactor have a DynamoDB client each, as
 * two Lambdas would.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { type EvaluationOutcome, evaluateTurn } from "../../functions/compactor/evaluate-turn.ts";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import { ConversationService } from "../../functions/conversations/service.ts";
import type { ServiceSettings } from "../../functions/conversations/state.ts";
import type { ConversationRef, EvaluationMessage } from "../../functions/ports.ts";
import { SqsTurnQueue } from "../../functions/queue/sqs.ts";
import { SqsDeadLetters } from "../../functions/queue/sqs-dead-letters.ts";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { getFailure } from "../../functions/store/dynamodb-failures.ts";
import { DynamoTenantDirectory, SECRETS_NOT_READ } from "../../functions/store/tenants-dynamodb.ts";
import { freshTable, localClient } from "./dynamodb.ts";
import { EventSourceMapping } from "./event-source-mapping.ts";
import {
  type EvaluationQueues,
  freshEvaluationQueues,
  motoSqs,
  type QueueOptions,
} from "./moto.ts";

/** One evaluation the compactor ran: its outcome, or what it threw. */
export interface Evaluation {
  readonly message: EvaluationMessage;
  readonly outcome?: EvaluationOutcome;
  readonly error?: unknown;
}

/** Options of {@link startMotoStack}. */
export interface MotoStackOptions extends QueueOptions {
  readonly tenant: string;
  readonly settings?: ServiceSettings;
  /** Messages whose evaluation throws every time they are received (poison records). */
  readonly poison?: (message: EvaluationMessage) => boolean;
}

/** The error a poison record's evaluation throws. */
export class PoisonError extends Error {
  override readonly name = "PoisonError";
}

export async function startMotoStack(options: MotoStackOptions) {
  const sqs = motoSqs();
  const queues: EvaluationQueues = await freshEvaluationQueues(sqs, options);
  const plain = localClient();
  const table = await freshTable(plain, "moto");
  const apiClient = localClient();
  const compactorClient = localClient();
  await new DynamoTenantDirectory(plain, table, SECRETS_NOT_READ).createTenant(options.tenant);
  const settings = options.settings ?? {};

  const service = new ConversationService({
    store: new DynamoConversationStore(apiClient, table),
    queue: new SqsTurnQueue(sqs, queues.queueUrl),
    settings,
  });

  const store = new DynamoConversationStore(compactorClient, table);
  const tenants = new DynamoTenantDirectory(compactorClient, table, SECRETS_NOT_READ);
  const evaluations: Evaluation[] = [];
  const handler = createCompactorHandler({
    evaluate: async (message, evaluateOptions) => {
      try {
        if (options.poison?.(message)) {
          throw new PoisonError(`turn ${message.turn} of ${message.conversation} is poison`);
        }
        const outcome = await evaluateTurn({ store, tenants, settings }, message, evaluateOptions);
        evaluations.push({ message, outcome });
        return outcome;
      } catch (error) {
        evaluations.push({ message, error });
        throw error;
      }
    },
    logger: new Logger({ serviceName: "moto-compactor", logLevel: "SILENT" }),
    metrics: new Metrics({ namespace: "AutocompactMoto", serviceName: "moto-compactor" }),
    recordFailure: (ref, failure) => store.recordFailure(ref, failure),
  });
  const mapping = new EventSourceMapping({
    client: sqs,
    queueUrl: queues.queueUrl,
    queueArn: queues.sourceQueueArn,
    handler,
    // AWS requires the queue's visibility timeout to be at least the function's timeout.
    functionTimeoutMs: options.visibilityTimeoutSeconds * 1_000,
  });

  return {
    sqs,
    queues,
    service,
    /** The test's view of the table (its own client). */
    store: new DynamoConversationStore(plain, table),
    /** What `autocompact dlq list` reads beside a dead letter: its conversation's last failure. */
    lastFailure: (ref: ConversationRef) => getFailure(plain, table, ref),
    mapping,
    evaluations,
    deadLetters: new SqsDeadLetters(sqs, queues),
    async stop() {
      await mapping.stop();
      for (const client of [plain, apiClient, compactorClient, sqs]) client.destroy();
    },
  };
}

/** A running {@link startMotoStack}. */
export type MotoStack = Awaited<ReturnType<typeof startMotoStack>>;
