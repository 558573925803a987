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
