/**
 * The wire format of the evaluation queue, shared by every queue adapter and
 * the compactor: the JSON body `{tenant, conversation, turn, posted_at_ms,
 * incarnation}` (the last two optional: bodies sent before they existed
 * still decode), the FIFO message group (one per conversation id) and the
 * deduplication id (one per turn of one life of the conversation).
 */
import { createHash } from "node:crypto";
import * as z from "zod";
import { issueLines } from "../../core/issues.ts";
import type { EvaluationMessage } from "../ports.ts";

/** The body of an evaluation message. Unknown keys are ignored (forward compatibility). */
export const EvaluationMessageBody = z.object({
  tenant: z.string().min(1, "must not be empty"),
  conversation: z.string().min(1, "must not be empty"),
  turn: z.number().int("must be a whole number").nonnegative("must be 0 or more"),
  /**
   * When the API stored the turn (Unix ms), the start of the evaluation lag.
   * Only a metric reads it: one that is not a time is dropped, never a reason
   * to fail (and dead-letter) the turn's evaluation.
   */
  posted_at_ms: z.number().int().nonnegative().optional().catch(undefined),
  /** The life of the conversation the turn was stored in (ports.ts `EvaluationMessage`). */
  incarnation: z.string().min(1, "must not be empty").optional(),
  /** Set on an idle timer: when the rest began (ports.ts `EvaluationMessage`). */
  idle_from_ms: z.number().int().nonnegative().optional(),
});

/** The JSON body of a message: exactly `{tenant, conversation, turn}`, and `posted_at_ms` and `incarnation` when set. */
export function encodeMessageBody(message: EvaluationMessage): string {
  return JSON.stringify({
    tenant: message.tenant,
    conversation: message.conversation,
    turn: message.turn,
    ...(message.posted_at_ms === undefined ? {} : { posted_at_ms: message.posted_at_ms }),
    ...(message.incarnation === undefined ? {} : { incarnation: message.incarnation }),
    ...(message.idle_from_ms === undefined ? {} : { idle_from_ms: message.idle_from_ms }),
  });
}

/** Why a body is not an evaluation message, or the message. */
export type DecodedBody =
  | { readonly ok: true; readonly message: EvaluationMessage }
  | { readonly ok: false; readonly error: string };

/**
 * Parses a message body (JSON, then the schema); never throws. Plain
 * `JSON.parse` and zod: Powertools' `JSONStringified` did the same, but
 * takes zod's whole namespace, which keeps all of zod in the compactor's
 * bundle (docs/architecture.md §13).
 */
export function decodeMessageBody(body: string): DecodedBody {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return { ok: false, error: `the body is not JSON (${(error as Error).message})` };
  }
  const result = EvaluationMessageBody.safeParse(json);
  if (result.success) return { ok: true, message: result.data };
  const issues = issueLines(result.error.issues, { root: "(body)" });
  return { ok: false, error: `the body is not an evaluation message: ${issues.join("; ")}` };
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
 * conversation, turn and incarnation. A second message for the same turn of
 * the same life within SQS's 5-minute window is dropped by the queue (it
 * would be skipped as `already_evaluated` anyway); the same turn of a
 * conversation deleted and created again under the id is another life, so
 * its message goes through. A message without an incarnation keeps the id
 * of before it existed.
 */
export function messageDeduplicationId(message: EvaluationMessage): string {
  const { tenant, conversation, turn, incarnation, idle_from_ms: idleFrom } = message;
  const named = incarnation === undefined ? [] : [incarnation];
  // A timer is another message than its turn's evaluation; its due time tells a re-deferral apart.
  const timer = idleFrom === undefined ? [] : ["idle", idleFrom];
  return sha256(JSON.stringify([tenant, conversation, turn, ...named, ...timer]));
}
