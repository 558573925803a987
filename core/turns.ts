/**
 * Turn indexing (docs/architecture.md §5, JP's `ConversationStream` turn walk).
 *
 * A counter starts at 0; a `turn_start` opens a new turn only when the current
 * turn already holds a conversation event, so events before the first
 * `turn_start` form an implicit turn 0 and a leading `turn_start` does not
 * leave an empty turn behind. Stream metadata (config deltas, compactions,
 * unknown entries) never opens or fills a turn; it takes the current index.
 */
import type { Entry } from "./events.ts";

/**
 * The largest turn index the service accepts: 10^9 - 1, the most a
 * 9-digit zero-padded number holds, as the store's sort keys need turns to
 * sort as strings (docs/architecture.md §7); no conversation comes near it.
 */
export const MAX_TURN = 999_999_999;

/** Entry types that are conversation events: they fill a turn (and are the ones JP base64-encodes). */
export const CONVERSATION_EVENT_TYPES: ReadonlySet<string> = new Set([
  "turn_start",
  "chat_request",
  "chat_response",
  "tool_call_request",
  "tool_call_response",
  "inquiry_request",
  "inquiry_response",
]);

/** True for entries that belong to the conversation itself rather than stream metadata. */
export function isConversationEvent(entry: Entry): boolean {
  return CONVERSATION_EVENT_TYPES.has(entry.type);
}

/** The turn index of every entry, and the number of turns. */
export interface TurnIndex {
  /** `turnOf[i]` is the turn of `entries[i]`. */
  readonly turnOf: Int32Array;
  /** Number of turns holding at least one conversation event. */
  readonly turnCount: number;
}

/** Assigns every entry its turn index. */
export function indexTurns(entries: readonly Entry[]): TurnIndex {
  const turnOf = new Int32Array(entries.length);
  let current = 0;
  let currentHasEvent = false;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Entry;
    const isEvent = isConversationEvent(entry);
    // The turn_start that opens a turn is itself its first event.
    if (entry.type === "turn_start" && currentHasEvent) current++;
    if (isEvent) currentHasEvent = true;
    turnOf[i] = current;
  }
  return { turnOf, turnCount: currentHasEvent ? current + 1 : current };
}

/** Number of turns in a stream (0 for a stream with no conversation event). */
export function turnCount(entries: readonly Entry[]): number {
  return indexTurns(entries).turnCount;
}

/** Splits a stream into the events of each turn (stream metadata goes with the turn it sits in). */
export function splitTurns(entries: readonly Entry[]): Entry[][] {
  const { turnOf, turnCount } = indexTurns(entries);
  const turns: Entry[][] = Array.from({ length: turnCount }, () => []);
  // Metadata in a stream with no turn has no turn to go with: it is dropped.
  entries.forEach((entry, i) => {
    turns[turnOf[i] as number]?.push(entry);
  });
  return turns;
}
