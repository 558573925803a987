/**
 * The API's guard against a signed post replayed under its `webhook-id` for
 * another message (the signature itself is checked by
 * functions/webhook-signature.ts).
 */
import { createHash } from "node:crypto";
import type { WebhookReceipts } from "../ports.ts";
import { TOLERANCE_SECONDS, type VerifiedWebhook } from "../webhook-signature.ts";
import { REJECTED, RequestRejectedError } from "./errors.ts";

/**
 * Remembers a verified message's id with its digest (SHA-256 of the
 * conversation it posts to and its body) until both its signature and one
 * tolerance window from now have expired (the timestamp may be up to
 * {@link TOLERANCE_SECONDS} ahead of the clock). A redelivery (same id, same
 * conversation and body, whatever its timestamp and signatures) goes on and
 * is answered as the first delivery's replay; the id reused for another
 * message within that time throws {@link RequestRejectedError}
 * (`webhook-id-reused`, 409) before anything is stored. Call it only once the
 * signature verified, so only the tenant's signer can take an id.
 */
export async function rememberWebhook(
  receipts: WebhookReceipts,
  tenant: string,
  message: VerifiedWebhook,
  posted: { readonly conversation: string; readonly body: string },
  nowSeconds: number,
): Promise<void> {
  // Length-prefixed, so no conversation id and body can pass for another pair.
  const digest = createHash("sha256")
    .update(`${posted.conversation.length}:${posted.conversation}\n`)
    .update(posted.body)
    .digest("hex");
  const expiresAt = Math.max(nowSeconds, message.timestamp) + TOLERANCE_SECONDS;
  const match = await receipts.remember({ tenant, id: message.id, digest }, nowSeconds, expiresAt);
  if (match === "different") {
    throw new RequestRejectedError(
      REJECTED.webhookIdReused,
      `webhook-id ${JSON.stringify(message.id)} was already used for another message: send each message under an id of its own (only a redelivery of the same body to the same conversation keeps its id)`,
    );
  }
}
