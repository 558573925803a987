/**
 * The view a provider format is written from: the provider-visible events of
 * a stream, turn by turn, each marked with what compaction did to it. Formats
 * need more than the projected entries: an event the projection rewrote
 * (stripped arguments or result) must not carry its opaque provider data
 * back, and some providers refuse items whose siblings were dropped (OpenAI
 * Responses item ids in a turn whose reasoning was stripped).
 */
import type { Entry } from "../events.ts";
import {
  compactionsOf,
  type Projection,
  project,
  resolvePolicies,
  type TurnOrigin,
  type TurnPolicies,
} from "../projection.ts";
import { indexTurns } from "../turns.ts";

const PROVIDER_TYPES = [
  "chat_request",
  "chat_response",
  "tool_call_request",
  "tool_call_response",
] as const;

/** An event a provider sees: a chat request or response, a tool call request or response. */
export type ProviderEvent = Extract<Entry, { type: (typeof PROVIDER_TYPES)[number] }>;

/** One provider-visible event of a view. */
export interface ViewEvent {
  readonly event: ProviderEvent;
  /** The projection rewrote it (or made it, for a summary): its stored provider metadata no longer applies. */
  readonly rewritten: boolean;
}

/** One turn of a view. */
export interface ViewTurn {
  /** Its provider-visible events, in stream order (possibly none). */
  readonly events: readonly ViewEvent[];
  /** A compaction stripped this turn's reasoning. */
  readonly reasoningStripped: boolean;
  /** This turn stands for a summarized run (a summary request and its answer). */
  readonly summary: boolean;
}

/** A view, turn by turn. */
export type ProviderView = readonly ViewTurn[];

const PROVIDER_TYPE_SET: ReadonlySet<string> = new Set(PROVIDER_TYPES);

function isProviderEvent(entry: Entry): entry is ProviderEvent {
  return PROVIDER_TYPE_SET.has(entry.type);
}

/** Groups the provider-visible entries of `entries` by turn. */
function byTurn(
  entries: readonly Entry[],
  turn: (index: number) => Omit<ViewTurn, "events">,
  rewritten: (entry: Entry) => boolean,
): ViewTurn[] {
  const { turnOf, turnCount } = indexTurns(entries);
  const events: ViewEvent[][] = Array.from({ length: turnCount }, () => []);
  entries.forEach((entry, i) => {
    // A provider event is a conversation event: the turn it fills exists.
    if (isProviderEvent(entry)) {
      (events[turnOf[i] as number] as ViewEvent[]).push({
        event: entry,
        rewritten: rewritten(entry),
      });
    }
  });
  return events.map((turnEvents, index) => ({ ...turn(index), events: turnEvents }));
}

/** The raw stream, compactions left out (what `GET …/events?format=` answers). */
export function rawView(raw: readonly Entry[]): ProviderView {
  return byTurn(
    raw,
    () => ({ reasoningStripped: false, summary: false }),
    () => false,
  );
}

/**
 * The projected view of a raw stream (what `GET …/projection?format=`
 * answers); `projection` is `project(raw)` when the caller has it already.
 */
export function projectedView(
  raw: readonly Entry[],
  projection: Projection = project(raw),
): ProviderView {
  const policies = resolvePolicies(compactionsOf(raw), indexTurns(raw).turnCount);
  const stored = new Set(raw);
  // Only an implicit turn 0 (no turn_start) can lose every event to a
  // compaction and so vanish from the projected entries' turns. Every other
  // projected turn opens with a kept raw turn's turn_start or a summary's, so
  // each has its origin, and each kept origin a raw turn.
  const vanished = projection.turns.length - indexTurns(projection.entries).turnCount;
  return byTurn(
    projection.entries,
    (index) => {
      const origin = projection.turns[index + vanished] as TurnOrigin;
      if ("summary" in origin) return { reasoningStripped: false, summary: true };
      return {
        reasoningStripped: (policies[origin.kept] as TurnPolicies).reasoning !== undefined,
        summary: false,
      };
    },
    (entry) => !stored.has(entry),
  );
}
