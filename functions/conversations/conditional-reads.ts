/**
 * Conditional and incremental reads of the projection (docs/architecture.md
 * §8 "Conditional and incremental reads"). Every answer names the version of
 * the whole view it belongs to, its `etag`:
 * `"<turns>.<compactions version>.<view hash>.<rest hash>"`, the turns and
 * band set it was projected from, a hash of the view (its life, format,
 * items and origins) and one of the fields about it (estimate, progress,
 * warnings). `If-None-Match` with it answers 304; `since=<etag>` answers one
 * splice of the items and one of the origins, what changed since that
 * version: the turns appended, or, after a firing, the range the band
 * replaced and its projected turns.
 *
 * The old view is rebuilt from the store, not kept: its first `<turns>`
 * turns and the compactions written at or before `<compactions version>`.
 * The view hash proves the rebuild is the view the caller holds; one that is
 * not (a compaction removed since, a band that landed between the head's read
 * and the stream's, another life) is answered in full, never as a wrong
 * splice.
 */

import { createHash } from "node:crypto";
import type { Estimator } from "../../core/calibration.ts";
import { InvalidInputError } from "../../core/errors.ts";
import type { Entry } from "../../core/events.ts";
import type { ProviderFormat } from "../../core/formats/format.ts";
import { projectedView } from "../../core/formats/view.ts";
import { type Projection, project, type TurnOrigin } from "../../core/projection.ts";
import { type Splice, spliceOf } from "../../core/splice.ts";
import type { ConversationHead, ConversationRef, ConversationStore } from "../ports.ts";
import { readProjectable } from "./materialized.ts";
import { ENVELOPE_BYTES, PAGE_BYTES, type PageRequest, projectedAnswer } from "./paged-reads.ts";
import { interleave } from "./state.ts";

/** A version of a view, as its etag spells it. */
interface ViewTag {
  readonly turns: number;
  readonly version: number;
  readonly view: string;
  readonly rest: string;
}

/** What a delta answer says it replaces in the view `since` named: `[from, to)` of its items and of its origins. */
export interface ViewDelta {
  readonly since: string;
  readonly items: { readonly from: number; readonly to: number };
  readonly turns: { readonly from: number; readonly to: number };
}

/** A strong etag: quoted, four dot-separated parts. */
const TAG = /^"(\d{1,9})\.(\d{1,9})\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{1,32})"$/;

/** The etag of a version. */
function spell(tag: ViewTag): string {
  return `"${tag.turns}.${tag.version}.${tag.view}.${tag.rest}"`;
}

/** A short hash of `value` as JSON. */
function digest(value: unknown, length: number): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, length);
}

/**
 * The version `since` names. Quotes may be left out (it rides in a query);
 * anything else that is not an etag this API gave is an {@link InvalidInputError}.
 */
function parseSince(since: string): ViewTag {
  const match = TAG.exec(since.startsWith('"') ? since : `"${since}"`);
  if (!match) {
    throw new InvalidInputError(
      `since must be the etag of an earlier answer of this route, unchanged (got ${JSON.stringify(since.slice(0, 80))})`,
    );
  }
  const [, turns, version, view, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  return { turns: Number(turns), version: Number(version), view, rest };
}

/** A whole projected view: its items (JP entries, or a format's messages) and its turns' origins. */
interface WholeView {
  readonly projection: Projection;
  readonly items: readonly unknown[];
  readonly turns: readonly TurnOrigin[];
}

/** The whole projected view of `raw`, as the pages of a read joined give it. */
function wholeView(raw: readonly Entry[], format: ProviderFormat | undefined): WholeView {
  const projection = project(raw);
  const items = format ? format.fromView(projectedView(raw, projection)) : projection.entries;
  return { projection, items, turns: projection.turns };
}

/** The hash of a view: the life and format it is of, its items and origins. */
function viewHash(head: ConversationHead, format: ProviderFormat | undefined, view: WholeView) {
  return digest([head.incarnation ?? "", format?.name ?? "jp", view.items, view.turns], 16);
}

/** The options of {@link projectedRead}: as `projectedAnswer`'s, with the answer's warnings. */
export interface ProjectedReadOptions {
  readonly estimator: Estimator;
  readonly format?: ProviderFormat;
  readonly warnings: readonly unknown[];
}

/**
 * The projection's answer fields for `head`: a page of the view with its
 * `etag`, or, with `page.since` naming a version the store can rebuild and
 * a splice that fits a page, only the splice (`delta`, the items and the
 * origins replacing the ranges it names). Reads the turns and the
 * compactions once.
 */
export async function projectedRead(
  store: ConversationStore,
  ref: ConversationRef,
  head: ConversationHead,
  page: PageRequest,
  options: ProjectedReadOptions,
) {
  if (page.since !== undefined && page.cursor !== undefined) {
    throw new InvalidInputError(
      "since and cursor cannot be combined: since asks for the whole change",
    );
  }
  const since = page.since === undefined ? undefined : parseSince(page.since);
  // A JP view asked whole is read from the bands' materialized forms (docs/architecture.md §8); a
  // provider format writes from the raw events, and a splice needs the raw turns to rebuild the older view.
  const fromForms = since === undefined && options.format === undefined;
  const [turns, compactions, projectable] = await Promise.all([
    fromForms ? undefined : store.readTurns(ref),
    store.listCompactions(ref),
    fromForms ? readProjectable(store, ref) : undefined,
  ]);
  const events = (turns ?? []).map((turn) => turn.events);
  const raw = projectable ?? interleave(events, compactions);
  const now = wholeView(raw, options.format);
  const answer = projectedAnswer(raw, head, page, { ...options, projection: now.projection });
  // The band set read, which may be newer than the head's (a band landed between the two reads).
  const version = Math.max(head.compactions_version, ...compactions.map((c) => c.seq));
  const turnCount = turns?.length ?? head.turn_count;
  const tag: ViewTag = {
    turns: turnCount,
    version,
    view: viewHash(head, options.format, now),
    rest: digest(
      [answer.estimated_tokens, answer.evaluated_through, answer.decided_through, options.warnings],
      8,
    ),
  };
  const etag = spell(tag);
  if (since === undefined || since.turns > turnCount) return { ...answer, etag };
  const before = wholeView(
    interleave(
      events.slice(0, since.turns),
      compactions.filter((c) => c.seq <= since.version),
    ),
    options.format,
  );
  if (viewHash(head, options.format, before) !== since.view) return { ...answer, etag };
  const items: Splice<unknown> = spliceOf(before.items, now.items);
  const origins: Splice<TurnOrigin> = spliceOf(before.turns, now.turns);
  const bytes = Buffer.byteLength(JSON.stringify([items.items, origins.items]), "utf8");
  if (bytes + ENVELOPE_BYTES > PAGE_BYTES) return { ...answer, etag };
  const delta: ViewDelta = {
    since: spell(since),
    items: { from: items.from, to: items.to },
    turns: { from: origins.from, to: origins.to },
  };
  return {
    ...answer,
    read: { items: items.items as unknown[], from: 0, to: 0 },
    turns: origins.items as TurnOrigin[],
    etag,
    delta,
  };
}

/** Whether `ifNoneMatch` (an `If-None-Match` header) lists `etag`, or is `*`. */
export function matchesTag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(",")
    .map((tag) => tag.trim())
    .some((tag) => tag === "*" || tag === etag);
}
