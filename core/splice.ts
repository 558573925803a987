/**
 * The change between two versions of a list as one splice: what a
 * conditional read (`GET …/projection?since=<etag>`, docs/architecture.md §8
 * "Conditional and incremental reads") sends instead of the whole view.
 * After an append the splice is the appended turns; after a firing it is the
 * replaced range and what replaces it; the common prefix and suffix stay
 * with the caller.
 */

/** The items `[from, to)` of the old list, replaced by `items`. */
export interface Splice<T> {
  readonly from: number;
  readonly to: number;
  readonly items: readonly T[];
}

/** Two items are the same when they are one object or their JSON is equal. */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The one splice that turns `before` into `after`, keeping their longest
 * common prefix and then the longest common suffix of what is left, so an
 * append replaces nothing and a replaced range is no wider than the change.
 *
 * @example
 * spliceOf([1, 2, 3], [1, 9, 3]); // { from: 1, to: 2, items: [9] }
 */
export function spliceOf<T>(
  before: readonly T[],
  after: readonly T[],
  same: (a: T, b: T) => boolean = sameJson,
): Splice<T> {
  let prefix = 0;
  const shorter = Math.min(before.length, after.length);
  while (prefix < shorter && same(before[prefix] as T, after[prefix] as T)) prefix++;
  let suffix = 0;
  // The suffix never reaches into the prefix of either list.
  while (
    suffix < shorter - prefix &&
    same(before[before.length - 1 - suffix] as T, after[after.length - 1 - suffix] as T)
  ) {
    suffix++;
  }
  return {
    from: prefix,
    to: before.length - suffix,
    items: after.slice(prefix, after.length - suffix),
  };
}

/**
 * `list` with `splice` applied: its items `[from, to)` replaced. The inverse
 * of {@link spliceOf}: `applySplice(a, spliceOf(a, b))` is `b`.
 */
export function applySplice<T>(list: readonly T[], splice: Splice<T>): T[] {
  if (!(0 <= splice.from && splice.from <= splice.to && splice.to <= list.length)) {
    throw new RangeError(
      `splice [${splice.from}, ${splice.to}) is outside a list of ${list.length}`,
    );
  }
  return [...list.slice(0, splice.from), ...splice.items, ...list.slice(splice.to)];
}
