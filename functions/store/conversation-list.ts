/**
 * The conversation list, as both stores page it: what a head lists as, and
 * the cursor of a page, where it ended in the tenant's activity order (the
 * last conversation's activity time and id), as opaque base64url JSON. The
 * tenant is never in the cursor: a page is always read for the tenant of the
 * API key, so a cursor cannot reach another tenant's list.
 */
import type { InvalidInputError } from "../../core/errors.ts";
import { cursorRefused, decodeCursor, encodeCursor } from "../cursors.ts";
import type { ConversationHead, ListedConversation } from "../ports.ts";

/** What the list shows of `conversation`, whose head is `head`. */
export function listedConversation(
  conversation: string,
  head: ConversationHead,
): ListedConversation {
  return {
    conversation,
    turn_count: head.turn_count,
    projected_chars: head.projected_chars,
    ...(head.model ? { model: head.model } : {}),
    ...(head.bands ? { bands: head.bands } : {}),
    ...(head.last_fired_at ? { last_fired_at: head.last_fired_at } : {}),
  };
}

/** The position a page ended at. */
export interface ListPosition {
  /** The last listed conversation's activity time (ms since the epoch). */
  readonly active_at: number;
  readonly conversation: string;
}

/** The opaque cursor of `position`. */
export function encodeListCursor(position: ListPosition): string {
  return encodeCursor([position.active_at, position.conversation]);
}

/** The position a cursor of {@link encodeListCursor} holds; anything else is an {@link InvalidInputError}. */
export function decodeListCursor(cursor: string): ListPosition {
  const value = decodeCursor(cursor);
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    (value[0] as number) < 0 ||
    typeof value[1] !== "string" ||
    value[1] === ""
  ) {
    throw cursorRefused("not a page position");
  }
  return { active_at: value[0] as number, conversation: value[1] as string };
}
