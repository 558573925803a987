/**
 * A turn as a platform posts it — JP events, or one turn of a provider
 * format's messages (docs/architecture.md §15) — checked and made ready to
 * store: its events, the config layers its deltas set, the digest that makes
 * a re-post an idempotent replay, and the latest event time the head keeps so
 * the service never stamps a later turn earlier.
 *
 * A format post without its own `timestamp` is stamped by the service, so its
 * events depend on when it is stored; its digest covers what was posted (the
 * format, messages and options), never the assigned times, so an identical
 * re-post is still recognised as a replay.
 */
import { createHash } from "node:crypto";
import type { TurnUsage } from "../../core/calibration.ts";
import type { ModelInfo } from "../../core/catalog.ts";
import type { AutoConfigLayer } from "../../core/config.ts";
import type { Entry } from "../../core/events.ts";
import { type ProviderFormatName, providerFormat } from "../../core/formats/index.ts";
import type { TurnSize } from "../../core/sizes.ts";
import { formatTimestamp, timestampNanos } from "../../core/timestamp.ts";
import { checkTurnShape, turnConfigLayers } from "../../core/turn-validation.ts";
import type { Warning } from "../../core/warnings.ts";
import type { EvaluationDecision, StoredTurn } from "../ports.ts";

/** A turn posted as JP events (already entries of the wire format: `turnEvents`). */
export interface EventsPost {
  readonly turn: number;
  readonly model?: ModelInfo;
  readonly events: Entry[];
  /** What the provider reported for the turn's last call (core/calibration.ts). */
  readonly usage?: TurnUsage;
}

/** A turn posted as a provider format's messages. */
export interface FormatPost {
  readonly turn: number;
  readonly model?: ModelInfo;
  readonly usage?: TurnUsage;
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
  /** The reported usage, kept with the turn's size record (never in its events). */
  readonly usage?: TurnUsage;
  /** Leading system messages a format post dropped (`drop_system`). */
  readonly droppedSystem: number;
  /** The config layers the turn's config deltas set, in order (none for most turns). */
  readonly configLayers: readonly AutoConfigLayer[];
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

/** The config layers of `events`, once they are checked to be exactly one turn `turn`. */
function checkedLayers(turn: number, events: readonly Entry[]): readonly AutoConfigLayer[] {
  checkTurnShape(turn, events);
  return turnConfigLayers(events);
}

/**
 * Prepares a posted turn, checking it: a format post is converted (and so
 * validated) here, once; a bad post fails before anything is read or written.
 */
export function prepareTurn(post: TurnPost): PreparedTurn {
  const model = post.model ? { model: post.model } : {};
  // Posted usage is part of what was posted; a post without it digests as before it existed.
  const usage = post.usage ? { usage: post.usage } : {};
  if (!("format" in post)) {
    const input: TurnInput = { turn: post.turn, ...model, events: post.events };
    return {
      turn: post.turn,
      ...model,
      ...usage,
      digest: digestOf({ model: post.model ?? null, events: post.events, ...usage }),
      droppedSystem: 0,
      configLayers: checkedLayers(post.turn, post.events),
      at: () => input,
    };
  }
  const format = providerFormat(post.format);
  const dropSystem = post.drop_system === true;
  const converted = format.toEvents(post.messages, {
    timestamp: post.timestamp ?? millisTimestamp(0),
    dropSystem,
  });
  const stamped = (events: Entry[]): TurnInput => ({ turn: post.turn, ...model, events });
  return {
    turn: post.turn,
    ...model,
    ...usage,
    digest: digestOf({
      model: post.model ?? null,
      format: post.format,
      messages: post.messages,
      drop_system: dropSystem,
      timestamp: post.timestamp ?? null,
      ...usage,
    }),
    droppedSystem: converted.droppedSystem,
    // Stamping changes only the times: the shape and the deltas are the converted events'.
    configLayers: checkedLayers(post.turn, converted.events),
    at(nowMs, notBeforeMs = Number.NEGATIVE_INFINITY) {
      if (post.timestamp !== undefined) return stamped(converted.events);
      const timestamp = millisTimestamp(Math.max(nowMs, notBeforeMs));
      return stamped(converted.events.map((event) => ({ ...event, timestamp })));
    },
  };
}

/** The turn as the store keeps it. */
export function storedTurn(input: TurnInput, size: TurnSize, digest: string): StoredTurn {
  return {
    turn: input.turn,
    events: input.events,
    size,
    digest,
    ...(input.model ? { model: input.model } : {}),
  };
}

/** Whether a turn has a tool response whose request is not in the turn (its name is in an earlier turn). */
export function answersEarlierTurns(input: TurnInput): boolean {
  if (input.turn === 0) return false;
  const requested = new Set(
    input.events.flatMap((e) => (e.type === "tool_call_request" ? [(e as { id: string }).id] : [])),
  );
  return input.events.some(
    (e) => e.type === "tool_call_response" && !requested.has((e as { id: string }).id),
  );
}

/** The outcome of posting a turn. */
export interface AppendOutcome {
  readonly status: "created" | "replayed";
  readonly turn: number;
  readonly turn_count: number;
  /** Whether an evaluation was enqueued by this call. */
  readonly evaluation_enqueued: boolean;
  /** Leading system messages dropped from a format post (`drop_system`), when there were any. */
  readonly dropped_system?: number;
  /** How far evaluations had got when the answer was made (see {@link EvaluationProgress}). */
  readonly evaluated_through: number | null;
  readonly decided_through: number | null;
  /**
   * With `wait`: the latest decision once this turn is decided: its own, or
   * a later turn's when one was posted and decided first (the head keeps the
   * latest decision only; its `turn` says which).
   */
  readonly decision?: EvaluationDecision;
  /** The conversation's warnings as of the head the progress is from, the posted model's window counted. */
  readonly warnings: Warning[];
}

/** A stored turn's outcome, before the evaluation progress is added. */
export type Stored = Omit<
  AppendOutcome,
  "evaluated_through" | "decided_through" | "decision" | "warnings"
>;
