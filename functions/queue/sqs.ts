/**
 * The evaluation queue on Amazon SQS FIFO: one message group per
 * conversation (so a conversation's turns are evaluated in order) and one
 * deduplication id per turn (so a retried enqueue within 5 minutes is sent
 * once). The client comes from the caller: no SDK client at module scope.
 */
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { QueueError } from "../errors.ts";
import type { EvaluationMessage, TurnQueue } from "../ports.ts";
import { encodeMessageBody, messageDeduplicationId, messageGroupId } from "./message.ts";

export class SqsTurnQueue implements TurnQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(client: SQSClient, queueUrl: string) {
    this.#client = client;
    this.#queueUrl = queueUrl;
  }

  async enqueue(message: EvaluationMessage): Promise<void> {
    const command = new SendMessageCommand({
      QueueUrl: this.#queueUrl,
      MessageBody: encodeMessageBody(message),
      MessageGroupId: messageGroupId(message),
      MessageDeduplicationId: messageDeduplicationId(message),
    });
    try {
      await this.#client.send(command);
    } catch (error) {
      throw new QueueError(
        `could not enqueue the evaluation of turn ${message.turn} of conversation ${JSON.stringify(message.conversation)} (tenant ${JSON.stringify(message.tenant)}) on ${this.#queueUrl}`,
        { cause: error },
      );
    }
  }
}
