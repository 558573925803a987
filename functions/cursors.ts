/**
 * Opaque page cursors, shared by the conversation list
 * (functions/store/conversation-list.ts) and the paged reads
 * (functions/conversations/paged-reads.ts): base64url JSON, and the 400 of
 * a cursor the API did not give.
 */
import { InvalidInputError } from "../core/errors.ts";

/** The opaque cursor holding `value`. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

/** The 400 of a cursor the API did not give (`where`, e.g. ` for …/events`), saying `why`. */
export function cursorRefused(why: string, where = ""): InvalidInputError {
  return new InvalidInputError(
    `cursor is not one this API gave${where} (${why}): pass a page's next_cursor unchanged, or leave it out for the first page`,
    { issues: [{ pointer: "/cursor", detail: why }] },
  );
}

/** The JSON value a cursor of {@link encodeCursor} holds; anything else is {@link cursorRefused}. */
export function decodeCursor(cursor: string, where = ""): unknown {
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(cursor)) throw cursorRefused("not base64url", where);
  try {
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw cursorRefused("not a page position", where);
  }
}
