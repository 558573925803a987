/**
 * The incarnation a new conversation head gets (ports.ts
 * `ConversationHead.incarnation`): random, so no later life of the same
 * conversation id can have the same one, whichever store and however soon
 * after a delete it is created.
 */
import { randomBytes } from "node:crypto";

/** A fresh incarnation: 96 random bits, base64url (16 characters). */
export function newIncarnation(): string {
  return randomBytes(12).toString("base64url");
}
