/**
 * What `autocompact dlq list` prints for one dead letter, on AWS (the SQS
 * DLQ, sqs-dead-letters.ts) and locally (the in-process queue's dead-letter
 * list, functions/local/admin.ts): the message's tenant, conversation and
 * turn, beside the last failure the compactor recorded on the conversation
 * (SQS keeps no error text). A body that is not an evaluation message is
 * shown (cut to 1 KB) with the reason.
 */
import type { ConversationRef, EvaluationFailure } from "../ports.ts";
import { decodeMessageBody } from "./message.ts";

/** A dead letter as the queue gives it. */
export interface RawDeadLetter {
  readonly id: string;
  readonly body: string;
  readonly receiveCount: number;
  /** When it was first sent (epoch milliseconds). */
  readonly sentAt: number;
}

/** One line of `dlq list`. */
export type DeadLetterEntry = {
  readonly message_id: string;
  readonly receive_count: number;
  readonly sent_at: string;
} & (
  | {
      readonly tenant: string;
      readonly conversation: string;
      readonly turn: number;
      /** The conversation's last recorded failure (of this turn or a later one), or null. */
      readonly last_failure: EvaluationFailure | null;
    }
  | { readonly invalid: string; readonly body: string }
);

const BODY_MAX = 1024;

/** The entry of a dead letter, reading its conversation's last failure. */
export async function describeDeadLetter(
  raw: RawDeadLetter,
  lastFailure: (ref: ConversationRef) => Promise<EvaluationFailure | undefined>,
): Promise<DeadLetterEntry> {
  const base = {
    message_id: raw.id,
    receive_count: raw.receiveCount,
    sent_at: new Date(raw.sentAt).toISOString(),
  };
  const decoded = decodeMessageBody(raw.body);
  if (!decoded.ok) {
    const body = raw.body.length > BODY_MAX ? `${raw.body.slice(0, BODY_MAX)}…` : raw.body;
    return { ...base, invalid: decoded.error, body };
  }
  const { tenant, conversation, turn } = decoded.message;
  const failure = await lastFailure({ tenant, conversation });
  return { ...base, tenant, conversation, turn, last_failure: failure ?? null };
}
