/**
 * The JP-compatible event stream: one zod schema per entry type, the single
 * source of the wire format (docs/architecture.md §4). Known entries keep fields we do
 * not model (loose objects) and unknown entry types are kept verbatim, so a
 * stream round-trips through us without losing anything JP or a platform wrote.
 */
import * as z from "zod";
import type { InvalidInputError } from "./errors.ts";
import { issuePath } from "./issues.ts";
import { nonFinitePath } from "./json.ts";
import { canonicalTimestamp } from "./timestamp.ts";

/** A timestamp accepted as RFC 3339 or JP's stored form, normalized to RFC 3339 UTC. */
export const Timestamp = z.string().transform((text, ctx) => {
  try {
    return canonicalTimestamp(text);
  } catch (error) {
    // canonicalTimestamp throws only InvalidInputError, whose message names the
    // text and what is wrong with it.
    ctx.addIssue((error as InvalidInputError).message);
    return z.NEVER;
  }
});

/**
 * A JSON object kept as the very object given: no copy, so keys such as
 * `__proto__` (an own property after `JSON.parse`) survive verbatim.
 */
export const JsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "expected a JSON object" },
);

/** Free-form metadata carried on any entry, kept verbatim. */
export const Metadata = JsonObject;

const base = { timestamp: Timestamp, metadata: Metadata.optional() };

/** Opens a turn (not provider-visible). */
export const TurnStart = z.looseObject({ type: z.literal("turn_start"), ...base });

/** A user (or platform) message. */
export const ChatRequest = z.looseObject({
  type: z.literal("chat_request"),
  ...base,
  content: z.string(),
  schema: z.unknown().optional(),
  author: z.unknown().optional(),
});

/** An assistant output: exactly one of `message`, `reasoning`, `data`. */
export const ChatResponse = z
  .looseObject({
    type: z.literal("chat_response"),
    ...base,
    message: z.string().optional(),
    reasoning: z.string().optional(),
    data: z.unknown().optional(),
  })
  .superRefine((value, ctx) => {
    const present = (["message", "reasoning", "data"] as const).filter(
      (key) => value[key] !== undefined,
    );
    if (present.length !== 1) {
      ctx.addIssue(
        `chat_response needs exactly one of message, reasoning, data (found ${present.length === 0 ? "none" : present.join(", ")})`,
      );
    }
  });

/** A tool invocation by the assistant. */
export const ToolCallRequest = z.looseObject({
  type: z.literal("tool_call_request"),
  ...base,
  id: z.string(),
  name: z.string(),
  arguments: JsonObject.superRefine((value, ctx) => {
    // Stored, a non-finite number would become `null`: refused rather than changed.
    const path = nonFinitePath(value);
    if (path)
      ctx.addIssue({
        code: "custom",
        message: "is not a finite number: JSON cannot carry it",
        path,
      });
  }).default({}),
});

/** The result of a tool invocation, matched to its request by `id`. */
export const ToolCallResponse = z.looseObject({
  type: z.literal("tool_call_response"),
  ...base,
  id: z.string(),
  content: z.string(),
  is_error: z.boolean().default(false),
});

/** An inquiry to the user (opaque, not provider-visible). */
export const InquiryRequest = z.looseObject({ type: z.literal("inquiry_request"), ...base });

/** An answer to an inquiry (opaque, not provider-visible). */
export const InquiryResponse = z.looseObject({ type: z.literal("inquiry_response"), ...base });

/**
 * A configuration change from this point of the stream on. Very old JP files
 * put the keys beside `type` with no `delta`; JP reads those as empty and so
 * do we (the keys are kept verbatim).
 */
export const ConfigDelta = z.looseObject({
  type: z.literal("config_delta"),
  ...base,
  delta: JsonObject.optional(),
});

/** Reasoning policy of a compaction: strip every reasoning response. */
export const ReasoningPolicy = z.literal("strip");

/** Tool call policy of a compaction (RFD 064 `ToolCallPolicy`). */
export const ToolCallPolicy = z.discriminatedUnion("policy", [
  z.object({ policy: z.literal("omit") }),
  z.object({
    policy: z.literal("strip"),
    request: z.boolean().default(true),
    response: z.boolean().default(true),
  }),
]);

/** Summary policy of a compaction: the eagerly generated summary text. */
export const SummaryPolicy = z.looseObject({ summary: z.string() });

/** Who created a compaction; absent means manual (JP's stored events have none). */
export const CompactionSource = z.enum(["manual", "auto"]);

/** The audit record of why an automatic compaction fired. */
export const CompactionTrigger = z.looseObject({
  turn: z.number().int().nonnegative(),
  estimated_tokens: z.number().nonnegative(),
  threshold: z.number().nonnegative(),
  context_window: z.number().int().positive(),
  estimated_tokens_after: z.number().nonnegative(),
});

/** A non-destructive overlay over the turns `[from_turn, to_turn]` (RFD 064). */
export const Compaction = z
  .looseObject({
    type: z.literal("compaction"),
    ...base,
    from_turn: z.number().int().nonnegative(),
    to_turn: z.number().int().nonnegative(),
    source: CompactionSource.default("manual"),
    summary: SummaryPolicy.optional(),
    reasoning: ReasoningPolicy.optional(),
    tool_calls: ToolCallPolicy.optional(),
    trigger: CompactionTrigger.optional(),
  })
  .refine((value) => value.from_turn <= value.to_turn, {
    message: "compaction from_turn must not be after to_turn",
    path: ["to_turn"],
  });

const KNOWN = {
  turn_start: TurnStart,
  chat_request: ChatRequest,
  chat_response: ChatResponse,
  tool_call_request: ToolCallRequest,
  tool_call_response: ToolCallResponse,
  inquiry_request: InquiryRequest,
  inquiry_response: InquiryResponse,
  config_delta: ConfigDelta,
  compaction: Compaction,
} as const;

/** An entry whose type we do not know: kept verbatim for forward compatibility. */
export const UnknownEntry = z.custom<{ type: string; timestamp?: string; [key: string]: unknown }>(
  (value) => {
    const type = (value as { type?: unknown } | null | undefined)?.type;
    return typeof type === "string" && !Object.hasOwn(KNOWN, type);
  },
);

/** The type names this service understands. */
export type KnownEntryType = keyof typeof KNOWN;

/** Any entry of a stream. */
export const Entry = z.union([
  TurnStart,
  ChatRequest,
  ChatResponse,
  ToolCallRequest,
  ToolCallResponse,
  InquiryRequest,
  InquiryResponse,
  ConfigDelta,
  Compaction,
  UnknownEntry,
]);

/** The parsed value of the `TurnStart` schema. */
export type TurnStart = z.infer<typeof TurnStart>;
/** The parsed value of the `ChatRequest` schema. */
export type ChatRequest = z.infer<typeof ChatRequest>;
/** The parsed value of the `ChatResponse` schema. */
export type ChatResponse = z.infer<typeof ChatResponse>;
/** The parsed value of the `ToolCallRequest` schema. */
export type ToolCallRequest = z.infer<typeof ToolCallRequest>;
/** The parsed value of the `ToolCallResponse` schema. */
export type ToolCallResponse = z.infer<typeof ToolCallResponse>;
/** The parsed value of the `InquiryRequest` schema. */
export type InquiryRequest = z.infer<typeof InquiryRequest>;
/** The parsed value of the `InquiryResponse` schema. */
export type InquiryResponse = z.infer<typeof InquiryResponse>;
/** The parsed value of the `ConfigDelta` schema. */
export type ConfigDelta = z.infer<typeof ConfigDelta>;
/** The parsed value of the `ToolCallPolicy` schema. */
export type ToolCallPolicy = z.infer<typeof ToolCallPolicy>;
/** The parsed value of the `CompactionSource` schema. */
export type CompactionSource = z.infer<typeof CompactionSource>;
/** The parsed value of the `CompactionTrigger` schema. */
export type CompactionTrigger = z.infer<typeof CompactionTrigger>;
/** The parsed value of the `Compaction` schema. */
export type Compaction = z.infer<typeof Compaction>;
/** The parsed value of the `UnknownEntry` schema. */
export type UnknownEntry = z.infer<typeof UnknownEntry> & { type: string };
/** An entry of a type this service understands. */
export type KnownEntry =
  | TurnStart
  | ChatRequest
  | ChatResponse
  | ToolCallRequest
  | ToolCallResponse
  | InquiryRequest
  | InquiryResponse
  | ConfigDelta
  | Compaction;

/** Any entry of a stream; narrow with {@link isKnown} before switching on `type`. */
export type Entry = KnownEntry | UnknownEntry;

/** One problem found while parsing a stream, located by entry index and field path. */
export interface StreamIssue {
  readonly index: number;
  /**
   * The field, as dotted keys (`arguments.x`; `""` for the entry itself):
   * only inside a tool call's arguments does a path hold an array index.
   */
  readonly path: string;
  readonly message: string;
}

/** The outcome of parsing a stream: the entries, or every problem found. */
export type ParsedStream =
  | { readonly ok: true; readonly entries: Entry[] }
  | { readonly ok: false; readonly issues: StreamIssue[] };

/**
 * Parses one entry, choosing the schema by its `type` so an error names the
 * real problem rather than every member of a union.
 */
export function parseEntry(
  raw: unknown,
): { ok: true; entry: Entry } | { ok: false; issues: { path: string; message: string }[] } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: "", message: "entry must be a JSON object" }] };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== "string") {
    return { ok: false, issues: [{ path: "type", message: "entry needs a string `type`" }] };
  }
  const schema = Object.hasOwn(KNOWN, type) ? KNOWN[type as KnownEntryType] : UnknownEntry;
  const result = schema.safeParse(raw);
  if (result.success) return { ok: true, entry: result.data as Entry };
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({
      path: issuePath(issue.path, { root: "" }),
      message: issue.message,
    })),
  };
}

/** Parses a whole stream (a JSON array of entries), collecting every issue. */
export function parseStream(raw: unknown): ParsedStream {
  if (!Array.isArray(raw)) {
    return { ok: false, issues: [{ index: -1, path: "", message: "stream must be a JSON array" }] };
  }
  const entries: Entry[] = [];
  const issues: StreamIssue[] = [];
  raw.forEach((item, index) => {
    const result = parseEntry(item);
    if (result.ok) entries.push(result.entry);
    else for (const issue of result.issues) issues.push({ index, ...issue });
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, entries };
}

/** Narrows an entry to one of the known types, so `switch (entry.type)` discriminates. */
export function isKnown(entry: Entry): entry is KnownEntry {
  return Object.hasOwn(KNOWN, entry.type);
}
