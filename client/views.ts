/**
 * The views a client read last (docs/architecture.md §8 "Conditional and
 * incremental reads"): `projection()` asks with `since=<etag>` of the view it
 * holds and applies the `delta` it gets back, so a platform reading before
 * every call moves the turns that changed, not the whole view.
 */
import { applySplice } from "../core/splice.ts";
import type { ViewDelta } from "./types.ts";

/** How many views (a conversation in a format) a client keeps; the least recently read goes first. */
export const KEPT_VIEWS = 32;

/** `query` with `since`, when a view is held. */
export function withSince(query: URLSearchParams, since: string | undefined): URLSearchParams {
  const next = new URLSearchParams(query);
  if (since !== undefined) next.set("since", since);
  return next;
}

/** The fields of a view answer that hold its items. */
const ITEM_FIELDS = ["events", "messages", "input"] as const;

/** What a projection answer holds that a delta changes. */
interface ViewAnswer {
  readonly etag?: string;
  readonly delta?: ViewDelta;
  readonly turns: readonly unknown[];
}

/** The answer's items field (`events`, `messages` or `input`). */
function itemsField(answer: object): (typeof ITEM_FIELDS)[number] | undefined {
  return ITEM_FIELDS.find((field) => Array.isArray((answer as Record<string, unknown>)[field]));
}

/** `held` with `answer`'s splices applied: the whole view `answer.etag` names. */
function applied<T extends ViewAnswer>(held: T, answer: T, delta: ViewDelta): T {
  const { delta: _, ...fields } = answer;
  const field = itemsField(answer) as (typeof ITEM_FIELDS)[number];
  const items = (view: T) => (view as unknown as Record<string, unknown[]>)[field] ?? [];
  return {
    ...fields,
    [field]: applySplice(items(held), { ...delta.items, items: items(answer) }),
    turns: applySplice(held.turns, { ...delta.turns, items: answer.turns }),
  } as unknown as T;
}

/** `view` with arrays of its own: a caller that pushes onto its messages leaves the held view alone. */
function copied<T extends ViewAnswer>(view: T): T {
  const field = itemsField(view);
  const items = field && (view as unknown as Record<string, unknown[]>)[field];
  return { ...view, ...(field ? { [field]: [...(items ?? [])] } : {}), turns: [...view.turns] };
}

/** The last view read of each conversation and format, at most {@link KEPT_VIEWS}. */
export class HeldViews {
  readonly #views = new Map<string, ViewAnswer>();

  /**
   * The whole view under `key`: `ask(since)` reads it, with the etag of the
   * view held (none the first time). An answer with a `delta` is applied to
   * that view; a delta of another view (never sent by the service) is
   * answered by reading the whole view again.
   */
  async read<T extends ViewAnswer>(key: string, ask: (since?: string) => Promise<T>): Promise<T> {
    const held = this.#views.get(key) as T | undefined;
    const answer = await ask(held?.etag);
    let view: T;
    if (answer.delta === undefined) view = answer;
    else if (held !== undefined && answer.delta.since === held.etag)
      view = applied(held, answer, answer.delta);
    else view = await ask();
    this.#views.delete(key);
    if (view.etag !== undefined) this.#views.set(key, view);
    // A Map iterates in insertion order: the first key is the least recently read.
    if (this.#views.size > KEPT_VIEWS)
      this.#views.delete(this.#views.keys().next().value as string);
    return copied(view);
  }
}
