/**
 * The events of a conversation as the autocompact API answers them: the
 * JP-compatible stream (docs/architecture.md §4), part of the wire types that
 * client/types.ts exports (and test/client/types.test.ts holds to the route
 * schemas).
 */

/** A JSON object, kept verbatim. */
export type JsonObject = Record<string, unknown>;

// Events: the JP-compatible stream (docs/architecture.md §4), as the service answers it

/** Fields every known entry has; unmodelled fields are kept (and answered) verbatim. */
interface EntryFields {
  /** RFC 3339, UTC. */
  timestamp: string;
  metadata?: JsonObject;
  [key: string]: unknown;
}

/** Opens a turn (not provider-visible). */
export interface TurnStartEvent extends EntryFields {
  type: "turn_start";
}

/** A user (or platform) message. */
export interface ChatRequestEvent extends EntryFields {
  type: "chat_request";
  content: string;
  schema?: unknown;
  author?: unknown;
}

/** An assistant output: exactly one of `message`, `reasoning`, `data`. */
export interface ChatResponseEvent extends EntryFields {
  type: "chat_response";
  message?: string;
  reasoning?: string;
  data?: unknown;
}

/** A tool invocation by the assistant. */
export interface ToolCallRequestEvent extends EntryFields {
  type: "tool_call_request";
  id: string;
  name: string;
  arguments: JsonObject;
}

/** The result of a tool invocation, matched to its request by `id`. */
export interface ToolCallResponseEvent extends EntryFields {
  type: "tool_call_response";
  id: string;
  content: string;
  is_error: boolean;
}

/** An inquiry to the user (opaque, not provider-visible). */
export interface InquiryRequestEvent extends EntryFields {
  type: "inquiry_request";
}

/** An answer to an inquiry (opaque, not provider-visible). */
export interface InquiryResponseEvent extends EntryFields {
  type: "inquiry_response";
}

/** A configuration change from this point of the stream on. */
export interface ConfigDeltaEvent extends EntryFields {
  type: "config_delta";
  delta?: JsonObject;
}

/** Who created a compaction. */
export type CompactionSource = "manual" | "auto";

/** Tool call policy of a compaction (RFD 064 `ToolCallPolicy`). */
export type ToolCallPolicy =
  | { policy: "omit" }
  | { policy: "strip"; request: boolean; response: boolean };

/** The audit record of why an automatic compaction fired. */
export interface CompactionTrigger {
  turn: number;
  estimated_tokens: number;
  threshold: number;
  context_window: number;
  estimated_tokens_after: number;
  [key: string]: unknown;
}

/** A non-destructive overlay over the turns `[from_turn, to_turn]` (RFD 064). */
export interface CompactionEvent extends EntryFields {
  type: "compaction";
  from_turn: number;
  to_turn: number;
  source: CompactionSource;
  summary?: { summary: string; [key: string]: unknown };
  reasoning?: "strip";
  tool_calls?: ToolCallPolicy;
  trigger?: CompactionTrigger;
}

/** An entry of a type the service does not know: kept verbatim, never provider-visible. */
export interface UnknownEvent {
  type: string;
  timestamp?: string;
  [key: string]: unknown;
}

/** Any entry of the stream (the OpenAPI component `Event`). */
export type JpEvent =
  | TurnStartEvent
  | ChatRequestEvent
  | ChatResponseEvent
  | ToolCallRequestEvent
  | ToolCallResponseEvent
  | InquiryRequestEvent
  | InquiryResponseEvent
  | ConfigDeltaEvent
  | CompactionEvent
  | UnknownEvent;

/**
 * An event as posted: the service fills the defaults (`arguments: {}`,
 * `is_error: false`, `source: "manual"`) and checks each entry's fields,
 * naming every problem by JSON pointer (`/events/3/content`).
 */
export interface EventInput {
  type: string;
  timestamp?: string;
  [key: string]: unknown;
}
