/**
 * Whole views read page by page (docs/architecture.md §8 "Paged reads"):
 * `GET …/events` and `GET …/projection` answer at most a page (whole turns,
 * at most 5 MiB) and a `next_cursor` while more follow; the client follows
 * the cursors and hands its caller the whole view.
 */
import { ServiceError } from "./errors.ts";

/** How many times a whole-view read starts again when the view changed under its cursor. */
const MAX_READ_RESTARTS = 3;

/** `query` with `cursor` set. */
export function withCursor(query: URLSearchParams, cursor: string): URLSearchParams {
  const next = new URLSearchParams(query);
  next.set("cursor", cursor);
  return next;
}

/**
 * Every page of a read joined into one answer: `first()` answers the first
 * page, `next(cursor)` each following one; their arrays of items are
 * concatenated and the other fields (`warnings` too) are the last page's. A one-page answer is returned as it
 * came. A cursor refused as stale (the conversation's compactions changed
 * meanwhile) starts the read again, at most {@link MAX_READ_RESTARTS} times.
 */
export async function allPages<T extends object>(
  first: () => Promise<T>,
  next: (cursor: string) => Promise<T>,
): Promise<T> {
  for (let restarts = 0; ; restarts++) {
    const pages: T[] = [await first()];
    try {
      for (let cursor = nextCursor(pages[0]); cursor !== undefined; ) {
        const page = await next(cursor);
        pages.push(page);
        cursor = nextCursor(page);
      }
    } catch (error) {
      if (restarts < MAX_READ_RESTARTS && isStaleCursor(error)) continue;
      throw error;
    }
    return joinPages(pages);
  }
}

/** A page's `next_cursor`, when more pages follow. */
function nextCursor(page: unknown): string | undefined {
  const cursor = (page as { next_cursor?: unknown } | undefined)?.next_cursor;
  return typeof cursor === "string" ? cursor : undefined;
}

/** The 409 `/problems/stale-cursor` of a page asked for after the view's compactions changed. */
function isStaleCursor(error: unknown): boolean {
  return (
    error instanceof ServiceError &&
    error.status === 409 &&
    error.problem?.type === "/problems/stale-cursor"
  );
}

/**
 * The fields a page holds a part of: the stored events, a format's messages
 * (`messages` or `input`) and the projected turns' origins. Every other field
 * (the estimate, the progress, warnings) is about the whole view.
 */
const PAGED_FIELDS: ReadonlySet<string> = new Set(["events", "messages", "input", "turns"]);

/** Pages joined into one answer: each paged field concatenated, the rest from the last page. */
function joinPages<T extends object>(pages: readonly T[]): T {
  if (pages.length === 1) return pages[0] as T;
  const joined: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(pages.at(-1) as object)) {
    if (key === "next_cursor") continue;
    joined[key] = PAGED_FIELDS.has(key)
      ? pages.flatMap((page) => (page as Record<string, unknown[]>)[key] ?? [])
      : value;
  }
  return joined as T;
}
