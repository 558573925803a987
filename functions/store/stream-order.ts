/**
 * The order both stores list compactions in (the port's `listCompactions`):
 * as they sit in the stream.
 */
import type { StoredCompaction } from "../ports.ts";

/** Compactions in stream order: `after_turn`, then `seq`, then key (a stable tie-break). */
export function byStreamOrder(a: StoredCompaction, b: StoredCompaction): number {
  return (
    a.after_turn - b.after_turn || a.seq - b.seq || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  );
}
