/**
 * A turn as a platform posts it — JP events, or one turn of a provider
 * format's messages (docs/architecture.md §15) — made ready to store: its events, the
 * digest that makes a re-post an idempotent replay, and the latest event
 * time the head keeps so the service never stamps a later turn earlier.
 *
 * A format post without its own `timestamp` is stamped by the service, so its
 * events depend on when it is stored; its digest covers what was posted (the
 * format, messages and options), never the assigned times, so an identical
 * re-post is still recognised as a replay.
 */
import { createHash } from "node:crypto";
import type { ModelInfo } from "../../core/catalog.ts";
import type { Entry } from "../../core/events.ts";
import { type ProviderFormatName, providerFormat } from "../../core/formats/index.ts";
import { formatTimestamp, timestampNanos } from "../../core/timestamp.ts";

/** A turn posted as JP events (already schema-validated). */
export interface EventsPost {
  readonly turn: number;
  readonly model?: ModelInfo;
  readonly events: Entry[];
}

/** A turn posted as a provider format's messages. */
export interface FormatPost {
  readonly turn: number;
  readonly model?: ModelInfo;
  readonly format: ProviderFormatName;
  /** The format's messages of this turn (validated by the format). */
  readonly messages: unknown;
  /** Drop leading system/developer messages instead of refusing the turn. */
  readonly drop_system?: boolean;
  /** Stamp every event with this time instead of the service's clock (RFC 3339, canonical). */
  readonly timestamp?: string;
}

/** Any posted turn. */
export type TurnPost = EventsPost | FormatPost;

/** A posted turn with its events stamped at one time. */
export interface TurnInput {
  readonly turn: number;
  readonly model?: ModelInfo;
  readonly events: Entry[];
}

/** A posted turn, converted once its time is known. */
export interface PreparedTurn {
  readonly turn: number;
  readonly model?: ModelInfo;
  /** SHA-256 of what was posted: equal digests are identical replays. */
  readonly digest: string;
  /** Leading system messages a format post dropped (`drop_system`). */
  readonly droppedSystem: number;
  /**
   * The turn's events when stored with no event earlier than `notBeforeMs`:
   * a service-stamped turn is stamped at `max(nowMs, notBeforeMs)`; a turn
   * that carries its own times ignores both.
   */
  at(nowMs: number, notBeforeMs?: number): TurnInput;
}

/** The latest timestamp of `events` in milliseconds since the epoch, rounded up (-Infinity for none). */
export function latestEventMillis(events: readonly Entry[]): number {
  let latest = Number.NEGATIVE_INFINITY;
  for (const event of events) {
    if (typeof event.timestamp !== "string") continue;
    const nanos = timestampNanos(event.timestamp);
    const ms = Number(nanos / 1_000_000n) + (nanos % 1_000_000n > 0n ? 1 : 0);
    if (ms > latest) latest = ms;
  }
  return latest;
}

/** Epoch milliseconds in the canonical form every stored timestamp has. */
function millisTimestamp(ms: number): string {
  return formatTimestamp(BigInt(ms) * 1_000_000n);
}

function digestOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex");
}

/** Prepares a posted turn; a format post is converted (and so validated) here, once. */
export function prepareTurn(post: TurnPost): PreparedTurn {
  const model = post.model ? { model: post.model } : {};
  if (!("format" in post)) {
    const input: TurnInput = { turn: post.turn, ...model, events: post.events };
    return {
      turn: post.turn,
      ...model,
      digest: digestOf({ model: post.model ?? null, events: post.events }),
      droppedSystem: 0,
      at: () => input,
    };
  }
  const format = providerFormat(post.format);
  const dropSystem = post.drop_system === true;
  // Converting validates: a bad post fails before anything is read or written.
  const converted = format.toEvents(post.messages, {
    timestamp: post.timestamp ?? millisTimestamp(0),
    dropSystem,
  });
  const stamped = (events: Entry[]): TurnInput => ({ turn: post.turn, ...model, events });
  return {
    turn: post.turn,
    ...model,
    digest: digestOf({
      model: post.model ?? null,
      format: post.format,
      messages: post.messages,
      drop_system: dropSystem,
      timestamp: post.timestamp ?? null,
    }),
    droppedSystem: converted.droppedSystem,
    at(nowMs, notBeforeMs = Number.NEGATIVE_INFINITY) {
      if (post.timestamp !== undefined) return stamped(converted.events);
      const timestamp = millisTimestamp(Math.max(nowMs, notBeforeMs));
      return stamped(converted.events.map((event) => ({ ...event, timestamp })));
    },
  };
}
