/**
 * The wire format of the evaluation queue, shared by every queue adapter and
 * the compactor: the JSON body `{tenant, conversation, turn}`, the FIFO
 * message group (one per conversation) and the deduplication id (one per
 * turn).
 */
import { createHash } from "node:crypto";
import * as z from "zod";
import type { EvaluationMessage } from "../ports.ts";

/** The body of an evaluation message. Unknown keys are ignored (forward compatibility). */
export const EvaluationMessageBody = z.object({
  tenant: z.string().min(1, "must not be empty"),
  conversation: z.string().min(1, "must not be empty"),
  turn: z.number().int("must be a whole number").nonnegative("must be 0 or more"),
});

/** The JSON body of a message: exactly `{tenant, conversation, turn}`. */
export function encodeMessageBody(message: EvaluationMessage): string {
  return JSON.stringify({
    tenant: message.tenant,
    conversation: message.conversation,
    turn: message.turn,
  });
}

/** Why a body is not an evaluation message, or the message. */
export type DecodedBody =
  | { readonly ok: true; readonly message: EvaluationMessage }
  | { readonly ok: false; readonly error: string };

/** Parses a message body (JSON, then the schema); never throws. */
export function decodeMessageBody(body: string): DecodedBody {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return { ok: false, error: `the body is not JSON (${(error as Error).message})` };
  }
  const result = EvaluationMessageBody.safeParse(json);
  if (!result.success) {
    const issues = result.error.issues.map(
      (issue) => `${issue.path.map(String).join(".") || "(body)"}: ${issue.message}`,
    );
    return { ok: false, error: `the body is not an evaluation message: ${issues.join("; ")}` };
  }
  return { ok: true, message: result.data };
}

const sha256 = (value: string): string => createHash("sha256").update(value).digest("hex");

/**
 * The FIFO message group of a conversation: SHA-256 (hex, 64 characters) of
 * the tenant and conversation ids. Always a valid `MessageGroupId` (at most
 * 128 characters from SQS's allowed set) whatever the ids contain, and
 * injective in practice: `["a","b/c"]` and `["a/b","c"]` are different groups.
 */
export function messageGroupId(
  message: Pick<EvaluationMessage, "tenant" | "conversation">,
): string {
  return sha256(JSON.stringify([message.tenant, message.conversation]));
}

/**
 * The deduplication id of a turn's evaluation: SHA-256 (hex) of tenant,
 * conversation and turn. A second message for the same turn within SQS's
 * 5-minute window is dropped by the queue (it would be skipped as
 * `already_evaluated` anyway).
 */
export function messageDeduplicationId(message: EvaluationMessage): string {
  return sha256(JSON.stringify([message.tenant, message.conversation, message.turn]));
}
