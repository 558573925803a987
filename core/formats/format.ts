/**
 * Provider message formats (docs/architecture.md §15). A platform posts a turn as the
 * message array it already holds for its provider and reads the projected
 * view back in the same shape. JP events stay the stored form: a format is a
 * pair of pure functions, one turn's messages → JP events, and a
 * {@link ProviderView} → messages, so every D50 rule runs on the same events
 * whatever the format a turn came in.
 *
 * What the provider needs back byte for byte and JP has no field for
 * (thinking signatures, image parts, `cache_control`, …) travels in each
 * event's `metadata` under the format's name, and is re-emitted only while
 * the event is not rewritten by a compaction.
 */
import type * as z from "zod";
import type { TurnUsage } from "../calibration.ts";
import type { Entry } from "../events.ts";
import type { ProviderView } from "./view.ts";

/** The body field that carries a format's messages (the provider's own request parameter). */
export type MessagesField = "messages" | "input";

/** How a posted turn is converted. */
export interface ToEventsOptions {
  /** Every event of the turn gets this timestamp (the service assigns it). */
  readonly timestamp: string;
  /** Drop leading system/developer messages instead of refusing them. */
  readonly dropSystem: boolean;
}

/** One posted turn as JP events, and how many leading system messages were dropped. */
export interface ConvertedTurn {
  /** `turn_start` first, then the turn's events in message order. */
  readonly events: Entry[];
  readonly droppedSystem: number;
}

/** One provider format: the two conversions and the schema of what is posted. */
export interface ProviderFormat<Message = unknown> {
  /** The format's name on the wire (`format`) and its key in event `metadata`. */
  readonly name: string;
  /** The body field that carries the messages, in posts and projections alike. */
  readonly field: MessagesField;
  /** One message as posted: documents the API body (structure only; pairing rules are checked by {@link toEvents}). */
  readonly messageSchema: z.ZodType<Message>;
  /**
   * One turn's messages → its JP events. Throws `InvalidInputError` (shape,
   * an orphan tool result, a duplicate call id within the turn, empty
   * content) or `UnprocessableError` (a system or developer message without
   * `dropSystem`, an item the service does not model), with a detail that
   * names the message (`messages[3].content[1]`) and what to change.
   */
  toEvents(messages: unknown, options: ToEventsOptions): ConvertedTurn;
  /** A view (projected or raw) → the messages of the provider's next request. */
  fromView(view: ProviderView): Message[];
  /** The SDK's response object of a call → the usage it reports (core/formats/usage.ts). */
  readonly responseUsage: z.ZodType<TurnUsage>;
}
