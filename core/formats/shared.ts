/**
 * What the provider formats share (docs/architecture.md §15), so each format
 * module keeps only its own mapping: the leading-system rule, a posted turn
 * parsed with every issue located, tool arguments sent as a JSON string,
 * content that is a string or an array of parts, and the plumbing of the
 * metadata an event carries under the format's name (written only when it
 * holds something, read back only while the event is not rewritten and the
 * format's schema still takes it).
 */
import * as z from "zod";
import type { Entry, ToolCallRequest } from "../events.ts";
import { joinIssues, jsonPointer } from "../issues.ts";
import { jsonDepthExceeds, MAX_JSON_DEPTH, nonFinitePath, sameJson } from "../json.ts";
import { describeJsonTextIssue, type JsonTextIssue, jsonTextIssues } from "../json-text.ts";
import type { MessagesField } from "./format.ts";
import { invalidMessage, type MessagePath, parseMessages, unsupportedMessage } from "./issues.ts";
import type { ProviderEvent, ViewEvent } from "./view.ts";

/** A JSON object's fields, verbatim. */
export type Json = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------- posted turns

/** The 422 a format words for a system message it does not drop. */
export type SystemRefusal = (message: {
  /** `system`, or `developer` (OpenAI). */
  readonly role: string;
  /** Every message before it is a system message too. */
  readonly leading: boolean;
  readonly dropSystem: boolean;
}) => string;

/**
 * The leading-system rule: while every message of the turn so far is a
 * system (or developer) message, `dropSystem` drops it; any other system
 * message is refused (422). Fed the turn's messages in order.
 */
/**
 * What an orphan result's refusal adds: a turn's leading results answer the
 * previous turn's pending calls (docs/architecture.md §5 "Tool pairs").
 */
export const PENDING_RESULT_HINT =
  " (a result for a call left pending at the end of the previous turn comes first in the next turn, before any other message)";

/** Leading system messages: dropped with `dropSystem`, refused otherwise. */
export class LeadingSystem {
  /** How many leading system messages were dropped. */
  dropped = 0;
  private leading = true;

  constructor(
    private readonly dropSystem: boolean,
    private readonly refusal: SystemRefusal,
  ) {}

  /** A system message at `at`: dropped, or throws the 422. */
  system(at: MessagePath, role: string): void {
    const { leading, dropSystem } = this;
    if (leading && dropSystem) {
      this.dropped++;
      return;
    }
    throw unsupportedMessage(at, this.refusal({ role, leading, dropSystem }));
  }

  /** Any other message: the leading run is over. */
  other(): void {
    this.leading = false;
  }
}

/** The refusal of a format whose `detail` leaves `drop_system` out: it adds how `drop_system` applies. */
export function dropSystemHint(detail: string): SystemRefusal {
  return ({ dropSystem }) =>
    dropSystem
      ? `${detail}; drop_system drops leading system messages only`
      : `${detail}; or post with "drop_system": true to drop leading system messages`;
}

/** The refusal of a format whose `detail` names `drop_system`: a later one hears that only leading ones drop. */
export function laterSystemHint(detail: string, noun: string): SystemRefusal {
  return ({ role, leading }) =>
    leading
      ? detail
      : `a ${role} message after the turn's first other ${noun}: ${detail} (only leading ones are dropped)`;
}

/** A turn's messages: a non-empty array of `message`. */
export function turnOf<M>(message: z.ZodType<M>) {
  return z.array(message).min(1, "a turn needs at least one message");
}

/** How a format whose message schema has no system role takes a posted turn. */
export interface PostedTurn<M> {
  readonly field: MessagesField;
  /** The turn's messages (see {@link turnOf}), content issues located inside the content. */
  readonly schema: z.ZodType<M[]>;
  readonly refusal: SystemRefusal;
  /** Refuses (422) what the format does not model, from message `from` on, before the schema would call it invalid (400). */
  readonly refuseUnmodelled: (value: unknown, from: number) => void;
}

// A placeholder for a dropped system message: the schema then runs over the
// array as posted, so every issue keeps the index the platform wrote.
const PLACEHOLDER = { role: "user", content: "-" };

/**
 * A posted turn's messages (the dropped ones are placeholders) and how many
 * leading system messages were dropped. System messages are taken first,
 * the schema's role check would answer a 400 for them; then what the format
 * does not model; then the schema. Throws the located 400s and 422s.
 */
export function parsePostedTurn<M>(
  value: unknown,
  dropSystem: boolean,
  turn: PostedTurn<M>,
): { messages: M[]; dropped: number } {
  const system = new LeadingSystem(dropSystem, turn.refusal);
  if (Array.isArray(value)) {
    value.forEach((message: unknown, i) => {
      if (isJsonObject(message) && message.role === "system")
        system.system([turn.field, i], "system");
      else system.other();
    });
  }
  const { dropped } = system;
  turn.refuseUnmodelled(value, dropped);
  const posted = Array.isArray(value)
    ? value.map((message: unknown, i) => (i < dropped ? PLACEHOLDER : message))
    : value;
  const messages = parseMessages(turn.schema, posted, turn.field);
  if (dropped === messages.length) {
    throw invalidMessage(
      [turn.field],
      "nothing is left once the leading system messages are dropped",
    );
  }
  return { messages, dropped };
}

/**
 * Calls `refuse` on every part (an object with a string `type`) in the
 * content arrays of the posted messages from `from` on: where a format finds
 * what it does not model before its schema runs.
 */
export function forEachPostedPart(
  value: unknown,
  field: MessagesField,
  from: number,
  refuse: (part: Json & { type: string }, at: MessagePath, message: Json) => void,
): void {
  if (!Array.isArray(value)) return;
  value.forEach((message: unknown, i) => {
    const content = i >= from && isJsonObject(message) ? message.content : undefined;
    if (!Array.isArray(content)) return;
    content.forEach((part: unknown, j) => {
      if (isJsonObject(part) && typeof part.type === "string") {
        refuse(part as Json & { type: string }, [field, i, "content", j], message as Json);
      }
    });
  });
}

type Issue = z.core.$ZodIssue;

/**
 * A union of a string and a parts array reports a bad part only as one issue
 * at `content`, with each branch's issues inside it. When exactly one branch
 * took the value's type (the other failed at its root), its issues are the
 * real ones: they replace the union's, located at the part
 * (`messages[3].content[1].type`). Issues nest only as deep as the schema.
 */
export function located(issues: readonly Issue[], prefix: readonly PropertyKey[]): Issue[] {
  const out: Issue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union") {
      // A branch that failed at the value's type reports only a root issue; one that took it, deeper ones.
      const taken = issue.errors.filter((branch) => branch.some((inner) => inner.path.length > 0));
      if (taken.length === 1) {
        // One push per issue: a spread of a branch with 100,000 bad parts overflows the stack.
        for (const inner of located(taken[0] as Issue[], path)) out.push(inner);
        continue;
      }
    }
    out.push({ ...issue, path });
  }
  return out;
}

/** Reports on `ctx` the `issues` of parsing `input`, each {@link located} under `prefix`. */
export function reportLocated(
  ctx: z.core.$RefinementCtx,
  issues: readonly Issue[],
  prefix: readonly PropertyKey[],
  input: unknown,
): void {
  for (const issue of located(issues, prefix)) {
    ctx.issues.push({ code: "custom", message: issue.message, path: issue.path, input });
  }
}

/**
 * Tool arguments the provider sends as a JSON string: they must encode a
 * JSON object no deeper than {@link MAX_JSON_DEPTH}, with no duplicate key
 * and no number beyond a 64-bit float's range, else a located 400 (both
 * would change silently). A number with more digits than a float holds is
 * taken: the string itself is kept ({@link postedArguments}), so the OpenAI
 * formats give it back as posted.
 */
export function parseToolArguments(text: string, at: MessagePath): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidMessage(
      at,
      `is not valid JSON (${(error as Error).message}): arguments must be a JSON object encoded as a string`,
    );
  }
  if (!isJsonObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw invalidMessage(at, `must be a JSON object encoded as a string (got ${kind})`);
  }
  if (jsonDepthExceeds(value)) {
    throw invalidMessage(
      at,
      `nests deeper than ${MAX_JSON_DEPTH} levels: flatten the tool's arguments`,
    );
  }
  const lossy = unkeptArguments(text);
  if (lossy.length > 0) {
    throw invalidMessage(
      at,
      joinIssues(
        lossy.map(
          // Inside an object, every issue has a path: a key, or a number under one.
          (issue) => `at ${jsonPointer(issue.path)}: ${describeJsonTextIssue(issue)}`,
        ),
      ),
    );
  }
  return value;
}

/** What an arguments string holds that its parsed object would not keep (a long number is kept as text instead). */
function unkeptArguments(text: string): JsonTextIssue[] {
  return jsonTextIssues(text).filter((issue) => issue.problem !== "inexact");
}

/** The formats whose tool arguments are a JSON string: each keeps the string as posted in its metadata's `arguments`. */
const ARGUMENT_STRING_FORMATS = ["openai-chat", "openai-responses"] as const;

/**
 * The metadata field that keeps a call's arguments string as posted, when
 * re-serializing the parsed object would not give it back (spacing, key
 * escapes, `1.0`, a number with more digits than a float holds).
 */
export function postedArguments(text: string, parsed: Json): { arguments: string } | undefined {
  return JSON.stringify(parsed) === text ? undefined : { arguments: text };
}

/**
 * The arguments string of a call in a view: the string posted in either
 * OpenAI format (one family: both send a string), while the event is not
 * rewritten and that string still encodes the event's arguments; else the
 * arguments re-serialized.
 */
export function argumentsText(viewEvent: ViewEvent): string {
  const request = viewEvent.event as ToolCallRequest;
  if (!viewEvent.rewritten) {
    for (const name of ARGUMENT_STRING_FORMATS) {
      const own = request.metadata?.[name];
      const text = isJsonObject(own) ? own.arguments : undefined;
      if (typeof text === "string" && encodes(text, request.arguments)) return text;
    }
  }
  return JSON.stringify(request.arguments);
}

/** `text` is JSON that reads as `value` and that {@link parseToolArguments} would take. */
function encodes(text: string, value: Json): boolean {
  try {
    return sameJson(JSON.parse(text), value) && unkeptArguments(text).length === 0;
  } catch {
    return false;
  }
}

/**
 * Tool input a format takes as a JSON object (Anthropic, the AI SDK, JP):
 * a located 400 for a number JSON cannot carry (non-finite: stored, it
 * would become `null`). The HTTP layer refuses those in the body text
 * already; this holds for every other caller.
 */
export function refuseNonFinite(value: Json, at: MessagePath): void {
  const path = nonFinitePath(value);
  if (path !== undefined) {
    throw invalidMessage(
      [...at, ...path],
      "is not a finite number: JSON cannot carry it (stored, it would become null)",
    );
  }
}

// ---------------------------------------------------------------- content

/** How a format words its content rules. */
export interface ContentWording {
  /** The message for empty content. */
  readonly empty: string;
  /** What the array holds, for the message of content of another type ("parts", "content blocks"). */
  readonly items: string;
}

/** Message content as the provider documents it: a string or a non-empty array of `items`. */
export function documentedContent<P>(items: z.ZodType<P>, wording: ContentWording) {
  return z
    .union([z.string(), z.array(items)])
    .refine((content) => content.length > 0, wording.empty);
}

/**
 * The same content, parsed branch by branch: a union reports only "Invalid
 * input" at `content`, and posted turns need every issue located inside it
 * (`messages[3].content[1].type`).
 */
export function locatedContent<P>(items: z.ZodType<P>, wording: ContentWording) {
  const array = z.array(items);
  return z.unknown().transform((value, ctx): string | P[] => {
    if (typeof value !== "string" && !Array.isArray(value)) {
      ctx.addIssue(`content must be a string or an array of ${wording.items}`);
      return z.NEVER;
    }
    if (value.length === 0) {
      ctx.addIssue(wording.empty);
      return z.NEVER;
    }
    if (typeof value === "string") return value;
    const result = array.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  });
}

/** The error of a message schema's `role`: a message that is not an object has no role to complain about. */
export function roleError(wrongRole: string, notAnObject: string) {
  return (issue: { input: unknown }): string =>
    isJsonObject(issue.input) ? wrongRole : notAnObject;
}

const TEXT_TYPES: readonly string[] = ["text"];

/** The text of content: a string as it is, else its text parts (of `textTypes`) joined `\n`, other parts skipped. */
export function joinedText(
  content: string | readonly { type: string; text?: unknown }[],
  textTypes: readonly string[] = TEXT_TYPES,
): string {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  for (const part of content) if (textTypes.includes(part.type)) texts.push(part.text as string);
  return texts.join("\n");
}

/** A `text` part with nothing but its text: what a content string stands for. */
export function isPlainText(part: { type?: unknown }): boolean {
  return part.type === "text" && Object.keys(part).length === 2;
}

// ---------------------------------------------------------------- metadata

/** The fields of `object` but `omit`, as own properties (`Object.fromEntries` keeps a `__proto__` key as data). */
export function without(object: Json, omit: readonly string[]): Json {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !omit.includes(key)));
}

/** The fields of `object` but `held`, worth storing: `undefined` when fewer than `least` are left. */
export function extrasOf(object: Json, held: readonly string[], least = 1): Json | undefined {
  const extras = without(object, held);
  return Object.keys(extras).length >= least ? extras : undefined;
}

/** What a format's events carry under `metadata[name]`: written typed, read back as untrusted JSON. */
export interface FormatMetadata<M extends object> {
  /** `event`, carrying `metadata` unless it holds nothing (no empty metadata is written). */
  write<E extends Entry>(event: E, metadata: M | undefined): E;
  /** What `event` carries, when it is an object. */
  read(event: ProviderEvent): Json | undefined;
  /** The same, unless the projection rewrote the event: its provider data no longer applies. */
  stored(viewEvent: ViewEvent): Json | undefined;
}

/** The metadata plumbing of the format named `name` (its key in event `metadata`). */
export function formatMetadata<M extends object>(name: string): FormatMetadata<M> {
  const read = (event: ProviderEvent): Json | undefined => {
    const own = event.metadata?.[name];
    return isJsonObject(own) ? own : undefined;
  };
  return {
    write(event, metadata) {
      if (metadata !== undefined && Object.keys(metadata).length > 0) {
        event.metadata = { [name]: metadata };
      }
      return event;
    },
    read,
    stored: ({ event, rewritten }) => (rewritten ? undefined : read(event)),
  };
}

/** `candidate` as `schema` parses it, `undefined` when it does not (stored metadata is never trusted blindly). */
export function valid<T>(schema: z.ZodType<T>, candidate: unknown): T | undefined {
  const result = schema.safeParse(candidate);
  return result.success ? result.data : undefined;
}

/** `schema` takes `candidate`, and `text` of it is still `expected` (the event's own text). */
export function fits<T>(
  schema: z.ZodType<T>,
  candidate: unknown,
  text: (value: T) => string,
  expected: string,
): boolean {
  const result = schema.safeParse(candidate);
  return result.success && text(result.data) === expected;
}
