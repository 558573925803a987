/**
 * The conversation list, as both stores page it: what a head lists as, and
 * the cursor of a page, where it ended in the tenant's activity order (the
 * last conversation's activity time and id), as opaque base64url JSON. The
 * tenant is never in the cursor: a page is always read for the tenant of the
 * API key, so a cursor cannot reach another tenant's list.
 */
import { InvalidInputError } from "../../core/errors.ts";
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
  return Buffer.from(JSON.stringify([position.active_at, position.conversation]), "utf8").toString(
    "base64url",
  );
}

/** The position a cursor of {@link encodeListCursor} holds; anything else is an {@link InvalidInputError}. */
export function decodeListCursor(cursor: string): ListPosition {
  const refuse = (why: string) =>
    new InvalidInputError(
      `cursor is not one this API gave (${why}): pass a page's next_cursor unchanged, or leave it out for the first page`,
      { issues: [{ pointer: "/cursor", detail: why }] },
    );
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(cursor)) throw refuse("not base64url");
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw refuse("not a page position");
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    (value[0] as number) < 0 ||
    typeof value[1] !== "string" ||
    value[1] === ""
  ) {
    throw refuse("not a page position");
  }
  return { active_at: value[0] as number, conversation: value[1] as string };
}
