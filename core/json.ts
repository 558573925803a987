/** Bounds on JSON values taken from outside (request bodies, strings holding JSON). */

/** Deeper JSON than this is refused: nothing legitimate nests so deep, and deeper values exhaust the stack later (stringify, marshalling). */
export const MAX_JSON_DEPTH = 100;

/** Whether `value` nests objects or arrays deeper than `limit` levels (iterative: any depth is safe to check). */
export function jsonDepthExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== "object" || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

/** JSON values equal as JSON (object key order aside). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a).filter((key) => (a as Record<string, unknown>)[key] !== undefined);
  const keysB = Object.keys(b).filter((key) => (b as Record<string, unknown>)[key] !== undefined);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) =>
    sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

/** The path of the first number in `value` that is not finite (JSON has no such number), if any (iterative). */
export function nonFinitePath(value: unknown): (string | number)[] | undefined {
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  while (stack.length > 0) {
    const [current, path] = stack.pop() as [unknown, (string | number)[]];
    if (typeof current === "number" && !Number.isFinite(current)) return path;
    if (typeof current !== "object" || current === null) continue;
    const entries = Array.isArray(current)
      ? current.map((item, index): [number, unknown] => [index, item])
      : Object.entries(current);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string | number, unknown];
      stack.push([child, [...path, key]]);
    }
  }
  return undefined;
}
