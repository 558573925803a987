/**
 * Materialized bands (the view, docs/architecture.md §5; issue 28): a
 * band's turns in the form the projection reduces them to, written with the
 * band so a read of the view need not read their raw events.
 *
 * The form is a stream, not a view: each turn keeps every entry the view
 * holds in its projected form, a skeleton of each tool event it drops (id,
 * name, status: what pairs calls and names stripped results in other turns)
 * and of its first conversation event (what starts the turn and stamps a
 * summary), and nothing else. Projecting it in place of the raw turns, under
 * the same compactions, gives the same view: `project` stays the one home of
 * the rule, and reads run it over the form.
 *
 * The form is computed from the band's turns alone, so only turns whose tool
 * calls all pair within their turn are materialized (a pending call or a
 * carried result depends on the turns around it); it holds while the
 * compactions covering its turns are the ones it was built under.
 */
import type { Compaction, Entry } from "./events.ts";
import { projectWithSources, toolRoles } from "./projection.ts";
import { isConversationEvent } from "./turns.ts";

/**
 * Whether `events` (one turn) has only tool calls answered within it: its
 * projection then depends on no other turn's events.
 */
export function pairsWithinTurn(events: readonly Entry[]): boolean {
  // Only tool events get a role: the other events' places stay empty, and `every` skips them.
  const roles = toolRoles(
    events,
    // Stryker disable next-line ArrowFunction,BooleanLiteral: it only tells a carried result from an orphan, and neither is paired.
    () => false,
  );
  return roles.every((role) => role === "paired");
}

/** What is left of an entry the view drops: what other turns' projection reads of it. */
function skeleton(entry: Entry): Entry {
  const { type, timestamp } = entry as { type: string; timestamp: string };
  switch (entry.type) {
    case "chat_request":
      return { type, timestamp, content: "" } as Entry;
    case "chat_response":
      return (
        entry.reasoning !== undefined
          ? { type, timestamp, reasoning: "" }
          : { type, timestamp, message: "" }
      ) as Entry;
    case "tool_call_request":
      return { type, timestamp, id: entry.id, name: entry.name, arguments: {} } as Entry;
    case "tool_call_response":
      return { type, timestamp, id: entry.id, content: "", is_error: entry.is_error } as Entry;
    default:
      return { type, timestamp } as Entry;
  }
}

/**
 * The materialized form of turns `first..first + turns.length - 1` under
 * `compactions` (every compaction covering any of them, in stream order;
 * others may be among them and change nothing), or `undefined` when a
 * turn's tool calls do not pair within it.
 *
 * @example
 * const form = materializeTurns(bandTurns, band.from_turn, [band]);
 * // project(interleave([...before, ...form, ...after], compactions)) equals the full stream's view
 */
export function materializeTurns(
  turns: readonly (readonly Entry[])[],
  first: number,
  compactions: readonly Compaction[],
): Entry[][] | undefined {
  if (!turns.every(pairsWithinTurn)) return undefined;
  // The turns alone, numbered from 0: the compactions move with them. One that
  // covers none of the turns covers none once moved (it ends before turn 0 or
  // starts after the last), so it needs no filtering out.
  const shifted = compactions.map((c) => ({
    ...c,
    from_turn: Math.max(0, c.from_turn - first),
    to_turn: c.to_turn - first,
  }));
  const stream = [...turns.flat(), ...shifted];
  const { emitted } = projectWithSources(stream);
  let index = 0;
  return turns.map((events) => {
    let opened = false;
    const form: Entry[] = [];
    for (const entry of events) {
      const kept = emitted[index++];
      const first = isConversationEvent(entry) && !opened;
      if (isConversationEvent(entry)) opened = true;
      if (kept) form.push(kept);
      else if (first || entry.type === "tool_call_request" || entry.type === "tool_call_response")
        form.push(skeleton(entry));
    }
    return form;
  });
}
