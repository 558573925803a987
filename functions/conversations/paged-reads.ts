/**
 * Paged reads of a conversation's views (docs/architecture.md §8 "Paged
 * reads"): `GET …/events` pages by stored turns, `GET …/projection` by
 * projected turns, each page whole turns `[from, to)`, at most
 * {@link MAX_PAGE_TURNS} turns and {@link PAGE_BYTES} bytes, so no answer
 * passes Lambda's 6 MB response limit. A turn larger than the budget alone is
 * answered alone (a post carries at most 5 MiB, so a turn is about that).
 * The cursor is opaque base64url JSON: the view it pages, the next turn, and
 * the conversation's life and compactions version it was issued for; a cursor
 * of another life or version is refused (409 `stale-cursor`): the pages
 * before it may no longer join up with the ones after.
 */
import { type Estimator, estimateTokens } from "../../core/calibration.ts";
import type { InvalidInputError } from "../../core/errors.ts";
import { estimateView } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import type { ProviderFormat } from "../../core/formats/format.ts";
import { messagesOfTurns } from "../../core/formats/pages.ts";
import { type ProviderView, projectedView, rawView } from "../../core/formats/view.ts";
import { type Projection, project } from "../../core/projection.ts";
import { indexTurns } from "../../core/turns.ts";
import { cursorRefused, decodeCursor, encodeCursor } from "../cursors.ts";
import { StaleCursorError } from "../errors.ts";
import type {
  ConversationHead,
  ConversationRef,
  ConversationStore,
  TurnSizeRecord,
} from "../ports.ts";
import { progressOf } from "./evaluation-wait.ts";
import { interleave } from "./state.ts";

/** Turns per page when `limit` is not given. */
export const DEFAULT_PAGE_TURNS = 1_000;
/** The largest `limit`. */
export const MAX_PAGE_TURNS = 10_000;
/** The most bytes an answer of a paged read holds (unless one turn alone is larger). */
export const PAGE_BYTES = 5 * 1024 * 1024;
/** Room left in {@link PAGE_BYTES} for the fields around the items (format, estimate, progress, cursor). */
export const ENVELOPE_BYTES = 16 * 1024;

/** What a paged read asks for: turns per page and where to start (a `next_cursor`). */
export interface PageRequest {
  readonly limit?: number;
  readonly cursor?: string;
  /** The `etag` of a view the caller holds: answer what changed since (conditional-reads.ts). */
  readonly since?: string;
}

/** The view a cursor pages. */
type PagedView = "events" | "projection";

const VIEW_CODES: Record<PagedView, string> = { events: "e", projection: "p" };

/** What a cursor is issued for: the life of the conversation and its compactions. */
function lifeOf(head: ConversationHead): string {
  return `${head.incarnation ?? ""}:${head.compactions_version}`;
}

/** The opaque cursor of the page of `view` starting at `turn`, for `head`'s life. */
function encodePageCursor(view: PagedView, turn: number, head: ConversationHead): string {
  return encodeCursor([VIEW_CODES[view], turn, lifeOf(head)]);
}

/**
 * The first turn of the page `cursor` asks for (0 without one). A cursor this
 * API did not give for `view` is an {@link InvalidInputError}; one of another
 * life or compactions version of the conversation a {@link StaleCursorError}.
 */
function pageStart(view: PagedView, cursor: string | undefined, head: ConversationHead) {
  if (cursor === undefined) return 0;
  const where = ` for …/${view}`;
  const value = decodeCursor(cursor, where);
  if (
    !Array.isArray(value) ||
    value.length !== 3 ||
    !Number.isSafeInteger(value[1]) ||
    (value[1] as number) < 1 ||
    typeof value[2] !== "string"
  ) {
    throw cursorRefused("not a page position", where);
  }
  if (value[0] !== VIEW_CODES[view]) throw cursorRefused("a cursor of another view", where);
  if (value[2] !== lifeOf(head)) {
    throw new StaleCursorError(
      `the conversation's compactions changed (or it was recreated) since this cursor was given: read …/${view} again from the first page`,
    );
  }
  return value[1] as number;
}

/** UTF-8 bytes of `value` as JSON. */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}

/**
 * Where a page starting at `from` ends: as many of the turns `from..end-1`
 * as `limit` and the byte budget allow, at least one. `bytes(t)` is what turn
 * `t` adds to the answer.
 */
function pageEnd(from: number, end: number, limit: number, bytes: (turn: number) => number) {
  let to = from;
  let used = ENVELOPE_BYTES;
  while (to < end && to - from < limit) {
    used += bytes(to) + 1;
    if (used > PAGE_BYTES && to > from) break;
    to++;
  }
  return to;
}

/** A page's items and where the next one starts (absent on the last page). */
export interface Page<T> {
  readonly items: T;
  readonly from: number;
  readonly to: number;
  readonly nextCursor?: string;
}

/**
 * Characters a stored turn's events hold (core/sizes.ts): never more than
 * the bytes of the events as JSON, so turns past this budget are never in
 * the page and need not be read.
 */
function charsOf({ size }: TurnSizeRecord) {
  return size.text + size.reasoning + size.tool_requests + size.tool_responses;
}

/**
 * The page of turns `[from, to)` of a format's messages, shortened while its
 * messages pass the budget: a turn's messages are measured alone, and a
 * format may join a turn's first message onto the one before.
 */
function formatPage(
  format: ProviderFormat,
  view: ProviderView,
  whole: readonly unknown[],
  from: number,
  to: number,
): { to: number; items: unknown[] } {
  let end = to;
  let items = messagesOfTurns(format, view, whole, from, end);
  while (end > from + 1 && jsonBytes(items) + ENVELOPE_BYTES > PAGE_BYTES) {
    end--;
    items = messagesOfTurns(format, view, whole, from, end);
  }
  return { to: end, items };
}

/**
 * A page of the raw stream: stored turns `[from, to)` with the compactions
 * placed after them (those before turn 0 on the first page, those after the
 * last turn on the last), so the pages joined are the unpaged stream. Only
 * the turns that can fit are read. `format` writes the page's turns as that
 * provider's messages (compactions left out), cut from the whole stream's
 * messages (core/formats/pages.ts), so every turn is read.
 */
export async function rawPage(
  store: ConversationStore,
  ref: ConversationRef,
  head: ConversationHead,
  page: PageRequest,
  format?: ProviderFormat,
): Promise<Page<Entry[] | unknown[]>> {
  const from = pageStart("events", page.cursor, head);
  const limit = page.limit ?? DEFAULT_PAGE_TURNS;
  if (format) {
    const turns = await store.readTurns(ref);
    const view = rawView(turns.flatMap((turn) => turn.events));
    const whole = format.fromView(view);
    const fitted = formatPage(
      format,
      view,
      whole,
      from,
      pageEnd(from, turns.length, limit, (t) =>
        jsonBytes(format.fromView([view[t] as ProviderView[number]])),
      ),
    );
    return pageOf("events", head, from, fitted.to, turns.length, fitted.items);
  }
  const [sizes, compactions] = await Promise.all([
    store.listTurnSizes(ref),
    store.listCompactions(ref),
  ]);
  // The read window: the turns whose characters alone stay within the budget (at least one).
  let window = from;
  for (let chars = 0; window < sizes.length && window - from < limit; window++) {
    chars += charsOf(sizes[window] as TurnSizeRecord);
    if (chars > PAGE_BYTES && window > from) break;
  }
  const turns = window > from ? await store.readTurns(ref, from, window - 1) : [];
  // A page holds the compactions after its turns too (those before turn 0 go with it).
  const compactionBytes = new Map<number, number>();
  for (const c of compactions) {
    const t = Math.max(0, c.after_turn);
    compactionBytes.set(t, (compactionBytes.get(t) ?? 0) + jsonBytes(c.compaction) + 1);
  }
  const to = pageEnd(
    from,
    from + turns.length,
    limit,
    (t) =>
      jsonBytes((turns[t - from] as { events: Entry[] }).events) + (compactionBytes.get(t) ?? 0),
  );
  // The last page: no stored turn is left after it (turns appended since are).
  const last = to >= sizes.length;
  const placed = compactions.filter(
    (c) => (c.after_turn >= from || from === 0) && (c.after_turn < to || last),
  );
  const items = interleave(
    turns.slice(0, to - from).map((turn) => turn.events),
    placed,
    from,
  );
  return pageOf("events", head, from, to, sizes.length, items);
}

/** The page `[from, to)` of `view`'s `count` turns: `next_cursor` while turns follow. */
function pageOf<T>(
  view: PagedView,
  head: ConversationHead,
  from: number,
  to: number,
  count: number,
  items: T,
): Page<T> {
  return {
    items,
    from,
    to,
    ...(to >= count ? {} : { nextCursor: encodePageCursor(view, to, head) }),
  };
}

/**
 * A page of the projected view: projected turns `[from, to)` of `projection`
 * (a summarized run is one projected turn, so its summary is in one page),
 * as JP entries or, with `format`, that provider's messages.
 */
function projectedPage(
  raw: readonly Entry[],
  projection: Projection,
  head: ConversationHead,
  page: PageRequest,
  format?: ProviderFormat,
): Page<Entry[] | unknown[]> {
  const from = pageStart("projection", page.cursor, head);
  const limit = page.limit ?? DEFAULT_PAGE_TURNS;
  const count = projection.turns.length;
  const originBytes = (t: number) => jsonBytes(projection.turns[t]);
  // Only an implicit turn 0 can vanish from the projected entries (core/formats/view.ts).
  const { turnOf, turnCount } = indexTurns(projection.entries);
  const vanished = count - turnCount;
  const turnOfEntry = (i: number) => Math.min((turnOf[i] as number) + vanished, count - 1);
  let items: Entry[] | unknown[];
  let to: number;
  if (format) {
    const view = projectedView(raw, projection);
    const at = (t: number) => view[t - vanished];
    const end = pageEnd(from, count, limit, (t) => {
      const turn = at(t);
      return originBytes(t) + (turn ? jsonBytes(format.fromView([turn])) : 0);
    });
    // Cut in the view's turns, which lack a vanished implicit turn 0.
    const whole = format.fromView(view);
    const fitted = formatPage(
      format,
      view,
      whole,
      Math.max(0, from - vanished),
      Math.max(0, end - vanished),
    );
    items = fitted.items;
    to = fitted.to + vanished;
  } else {
    const byTurn = new Map<number, number>();
    projection.entries.forEach((entry, i) => {
      const t = turnOfEntry(i);
      // Only the turns the page can hold are measured.
      if (t < from || t >= from + limit) return;
      byTurn.set(t, (byTurn.get(t) ?? 0) + jsonBytes(entry) + 1);
    });
    to = pageEnd(from, count, limit, (t) => originBytes(t) + (byTurn.get(t) ?? 0));
    const last = to >= count;
    items = projection.entries.filter((_, i) => {
      const t = turnOfEntry(i);
      return (t >= from || from === 0) && (t < to || last);
    });
  }
  return pageOf("projection", head, from, to, count, items);
}

/** The `next_cursor` field of a page's answer: absent on the last page, so one page answers as before. */
export function cursorField(page: Page<unknown>): { next_cursor?: string } {
  return page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor };
}

/**
 * The answer's fields of a page of `raw`'s projected view: the page, its
 * turns' origins, the whole view's estimate and the evaluations' progress.
 */
export function projectedAnswer(
  raw: readonly Entry[],
  head: ConversationHead,
  page: PageRequest,
  options: {
    readonly estimator: Estimator;
    readonly format?: ProviderFormat;
    /** `project(raw)`, when the caller has it already. */
    readonly projection?: Projection;
  },
) {
  const projection = options.projection ?? project(raw);
  const read = projectedPage(raw, projection, head, page, options.format);
  return {
    read,
    turns: projection.turns.slice(read.from, read.to),
    estimated_tokens: estimateTokens(options.estimator, estimateView(projection.entries).chars),
    ...progressOf(head),
  };
}
