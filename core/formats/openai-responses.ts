/**
 * OpenAI Responses API `input` items (docs/architecture.md §15): a turn posted as the
 * `input` items the platform sends to `POST /v1/responses`, and views read
 * back as the same.
 *
 * | Responses item | JP event | `metadata["openai-responses"].item` |
 * |---|---|---|
 * | `message` role `user` (`content` string, or `input_text`/`input_image`/`input_file` parts; `type` optional, the EasyInputMessage form) | `chat_request {content}`: the string, or its text parts joined `\n` | the item's keys besides `role` (and `content` when a string): `type`, `id`, `status`, the parts verbatim |
 * | `message` role `assistant` (`content` string, or `output_text` parts with `annotations`) | `chat_response {message}`: likewise | the same: `id` (`msg_…`), `status`, `phase`, the parts with their `annotations` |
 * | `reasoning` (`summary` `summary_text` parts, `content` `reasoning_text` parts) | `chat_response {reasoning}`: the summary texts, then the content texts, joined `\n` | every key but `type`: `id` (`rs_…`), `encrypted_content`, `summary`, `content`, `status` |
 * | `function_call` (`call_id`, `name`, `arguments` a JSON string) | `tool_call_request {id: call_id, name, arguments}`, arguments the JSON object the string encodes (≤ 100 levels; no duplicate key, no number beyond a float's range) | keys besides `type`, `call_id`, `name`, `arguments`: `id` (`fc_…`), `status`, …; and `metadata["openai-responses"].arguments`, the string as posted when re-serializing would change it (given back in both OpenAI formats while the call is not stripped) |
 * | `function_call_output` (`call_id`, `output` string or parts) | `tool_call_response {id: call_id, content, is_error: false}` (Responses has no error flag) | keys besides `type`, `call_id` (and `output` when a string) |
 * | `message` role `system`, `developer` | 422, or dropped while leading with `dropSystem` | – |
 * | hosted and built-in tool items (`web_search_call`, `file_search_call`, `computer_call`/`_output`, `image_generation_call`, `code_interpreter_call`, shells, `apply_patch_*`, `mcp_*`, `custom_tool_call`/`_output`, `tool_search_*`, `compaction`) | tool events, ./responses-hosted.ts (docs/architecture.md §15 "Hosted tools") | `hosted`: the item verbatim |
 * | `item_reference` (`id`: an item the API stored) | `chat_response {message: "[item reference <id>]"}`: the text it reads as in every other format, and in a turn whose reasoning is stripped (the item it names may be gone) | `reference`: the item verbatim |
 * | OpenAI's other item types (types newer than the SDK) | 422 naming the type (an unknown `type` is a 400) | – |
 *
 * Refused when posted (400): an empty array, a message without text or
 * parts, a `function_call` whose `arguments` is not a JSON object, a
 * duplicate `call_id` among the turn's calls, a `function_call_output` that
 * answers no call before it in the turn (or a call already answered), a
 * `call_id` longer than 64 characters (OpenAI's limit on outputs), and
 * kept data OpenAI's schema refuses (an annotation, a logprob or a `phase`
 * not as it defines them), which would be re-emitted verbatim.
 *
 * Written back ({@link openaiResponses}.fromView), the stored item is
 * re-emitted while its event is not rewritten by a compaction and its text is
 * still the event's; otherwise the plain item is written. Ids go with the
 * rule of §15: in a turn whose reasoning is stripped, no item keeps its `id`
 * (the API refuses a `function_call` with its `fc_` id but without the
 * reasoning item that produced it). An assistant message with an `id` goes
 * out as an output message (`type`, `status` and each part's `annotations`
 * and `logprobs` filled with their defaults when absent); without one, as
 * `{role: "assistant", content: text}`, its `type` and `phase` kept and its
 * `status` dropped (the API takes output parts only on output messages). Reasoning without our metadata (posted as JP events) is
 * left out: the API takes a reasoning item only with its `id`. Empty texts
 * and requests are left out; `chat_response.data` becomes its JSON text.
 * Round trips are exact up to §15's normalizations: defaults filled in, and an id-less assistant message's parts written as
 * their joined text.
 */
import * as z from "zod";
import type {
  ChatRequest,
  ChatResponse,
  Entry,
  ToolCallRequest,
  ToolCallResponse,
} from "../events.ts";
import type { ConvertedTurn, ProviderFormat, ToEventsOptions } from "./format.ts";
import {
  describePath,
  invalidMessage,
  type MessagePath,
  parseMessages,
  unsupportedMessage,
} from "./issues.ts";
import {
  ResponsesAssistantMessage,
  ResponsesFunctionCall,
  ResponsesFunctionCallOutput,
  type ResponsesItem,
  ResponsesItemReference,
  ResponsesMessage,
  ResponsesReasoning,
  ResponsesUserMessage,
} from "./openai-responses.schema.ts";
import {
  hostedItemEvents,
  hostedItemSchema,
  hostedItems,
  isHostedItemType,
} from "./responses-hosted.ts";
import {
  argumentsText,
  extrasOf,
  fits,
  formatMetadata,
  isJsonObject,
  type Json,
  joinedText,
  LeadingSystem,
  laterSystemHint,
  PENDING_RESULT_HINT,
  parseToolArguments,
  postedArguments,
  reportLocated,
  valid,
  without,
} from "./shared.ts";
import { ResponsesResponseUsage } from "./usage.ts";
import type { ProviderView, ViewEvent } from "./view.ts";

const NAME = "openai-responses";
const FIELD = "input";

/** The item types the service models. */
const MODELLED = [
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "item_reference",
] as const;

/**
 * The item types of OpenAI's published `InputItem` that are neither modelled
 * nor hosted tools (./responses-hosted.ts): refused with a 422 that names
 * them, as is an `mcp_` type newer than the SDK. Any other `type` is a
 * malformed item (400).
 */
const UNMODELLED: ReadonlySet<string> = new Set([
  "additional_tools",
  "compaction_trigger",
  "program",
  "program_output",
]);

function unmodelled(type: string): boolean {
  return !isHostedItemType(type) && (UNMODELLED.has(type) || type.startsWith("mcp_"));
}

/** One Responses `input` item (a message without `type` is a message): documents the API body. */
export const ResponsesItemSchema: z.ZodType<ResponsesItem> = z.union([
  ResponsesMessage,
  z.discriminatedUnion(
    "type",
    [
      ResponsesReasoning,
      ResponsesFunctionCall,
      ResponsesFunctionCallOutput,
      ResponsesItemReference,
    ],
    { error: `an item's type must be one of ${MODELLED.join(", ")}` },
  ),
]) as z.ZodType<ResponsesItem>;

/** What `metadata["openai-responses"]` holds (see the module table). */
export interface ResponsesMetadata {
  /** The item's keys the event has no field for, verbatim. */
  readonly item?: Record<string, unknown>;
  /** On a `tool_call_request`: the call's `arguments` string as posted, when re-serializing would change it. */
  readonly arguments?: string;
  /** On a `chat_response`: the `item_reference` item it stands for, verbatim. */
  readonly reference?: Record<string, unknown>;
}

// ---------------------------------------------------------------- toEvents

const SYSTEM_REFUSAL = laterSystemHint(
  "system and developer prompts are not conversation turns: the platform sends them with each call (the Responses API's `instructions`, or leading input messages), so post only the turn's items (a large system prompt can be taken out of `context_window`), or post with `drop_system: true` to drop leading system and developer messages",
  "item",
);

/** Which schema an item is parsed with: by `type`, and a message by `role`. */
function itemSchema(item: unknown): z.ZodType {
  if (!isJsonObject(item)) return z.looseObject({}, { error: "expected an input item object" });
  switch (item.type) {
    case undefined:
    case "message":
      return ResponsesMessage;
    case "reasoning":
      return ResponsesReasoning;
    case "function_call":
      return ResponsesFunctionCall;
    case "function_call_output":
      return ResponsesFunctionCallOutput;
    case "item_reference":
      return ResponsesItemReference;
    default:
      if (isHostedItemType(item.type)) return hostedItemSchema(item.type as string);
      return z.never({
        error:
          typeof item.type === "string"
            ? `unknown item type ${JSON.stringify(item.type)}: expected one of ${MODELLED.join(", ")}`
            : `an item's type must be a string: one of ${MODELLED.join(", ")}`,
      });
  }
}

/** Each item parsed by its own schema, so issues are located inside it (`input[3].content[1].type`). */
const Turn = z
  .array(z.unknown(), { error: "expected an array of input items" })
  .min(1, "a turn needs at least one item")
  .transform((items, ctx) => {
    const out: unknown[] = [];
    items.forEach((item, i) => {
      const result = itemSchema(item).safeParse(item);
      if (result.success) out.push(result.data);
      else reportLocated(ctx, result.error.issues, [i], item);
    });
    return out as ResponsesItem[];
  });

/** Refuses (422) the item types the service does not model, before the schema sees them. */
function refuseUnmodelled(value: unknown): void {
  if (!Array.isArray(value)) return;
  value.forEach((item: unknown, i) => {
    if (!isJsonObject(item) || typeof item.type !== "string" || !unmodelled(item.type)) return;
    throw unsupportedMessage(
      [FIELD, i, "type"],
      `items of type ${JSON.stringify(item.type)} are not supported: the service models ${MODELLED.join(", ")} items and the hosted tool items of OpenAI's SDK (items newer than the SDK are not turned into JP events)`,
    );
  });
}

const TEXT_PARTS = ["input_text", "output_text"];

/** A string, or the texts of its `input_text`/`output_text` parts joined by `\n`. */
function textOf(value: string | readonly { type: string; text?: unknown }[]): string {
  return joinedText(value, TEXT_PARTS);
}

/** The text of a reasoning item: its summary texts, then its content texts, joined by `\n`. */
function reasoningText(item: {
  summary: readonly { text: string }[];
  content?: readonly { text: string }[] | undefined;
}): string {
  return [...item.summary, ...(item.content ?? [])].map((part) => part.text).join("\n");
}

/** The text an item reference reads as, in every format but its own. */
function referenceText(id: string): string {
  return `[item reference ${id}]`;
}

/** What our events carry under `metadata["openai-responses"]`. */
const meta = formatMetadata<ResponsesMetadata>(NAME);

/** `event` with the item's keys it has no field for (`held` aside) under our name, if any. */
function withItem<E extends Entry>(event: E, original: Json, held: readonly string[]): E {
  const item = extrasOf(original, held);
  return meta.write(event, item && { item });
}

/** The events of one turn so far, and what pairing needs. */
class TurnEvents {
  readonly events: Entry[];
  readonly system: LeadingSystem;
  /** Where each call id of the turn was requested, and answered: paths for the details. */
  private readonly calls = new Map<string, MessagePath>();
  private readonly answers = new Map<string, MessagePath>();
  /** Outputs for the previous turn's pending calls, apart: their ids may be called again in this turn. */
  private readonly carried = new Map<string, MessagePath>();
  /** No item but outputs yet: an output here answers the previous turn's pending calls. */
  private leading = true;

  constructor(
    private readonly timestamp: string,
    dropSystem: boolean,
  ) {
    this.events = [{ type: "turn_start", timestamp }];
    this.system = new LeadingSystem(dropSystem, SYSTEM_REFUSAL);
  }

  /** An item that is not an output: the leading system prompts and outputs are behind us. */
  #item(): void {
    this.system.other();
    this.leading = false;
  }

  message(item: ResponsesMessage, original: Json, at: MessagePath): void {
    const { timestamp } = this;
    if (item.role === "system" || item.role === "developer") {
      this.system.system(at, item.role);
      return;
    }
    this.#item();
    const parts: readonly { type: string; text?: unknown }[] =
      typeof item.content === "string" ? [] : item.content;
    const text = textOf(item.content);
    const hasOtherPart = parts.some(
      (part) => part.type !== "input_text" && part.type !== "output_text",
    );
    if (text === "" && !hasOtherPart) {
      throw invalidMessage(
        [...at, "content"],
        `${item.role === "user" ? "a user" : "an assistant"} message needs text or a content part`,
      );
    }
    const held = typeof item.content === "string" ? ["role", "content"] : ["role"];
    if (item.role === "user") {
      const request: ChatRequest = { type: "chat_request", timestamp, content: text };
      this.events.push(withItem(request, original, held));
    } else {
      const response: ChatResponse = { type: "chat_response", timestamp, message: text };
      this.events.push(withItem(response, original, held));
    }
  }

  reasoning(item: ResponsesReasoning, original: Json): void {
    this.#item();
    const response: ChatResponse = {
      type: "chat_response",
      timestamp: this.timestamp,
      reasoning: reasoningText(item),
    };
    this.events.push(withItem(response, original, ["type"]));
  }

  call(item: ResponsesFunctionCall, original: Json, at: MessagePath): void {
    this.#item();
    const earlier = this.calls.get(item.call_id);
    if (earlier !== undefined) {
      throw invalidMessage(
        [...at, "call_id"],
        `duplicate call_id ${JSON.stringify(item.call_id)} (also at ${describePath([...earlier, "call_id"])}): tool call ids must be unique within a turn`,
      );
    }
    this.calls.set(item.call_id, at);
    const args = parseToolArguments(item.arguments, [...at, "arguments"]);
    const request: ToolCallRequest = {
      type: "tool_call_request",
      timestamp: this.timestamp,
      id: item.call_id,
      name: item.name,
      arguments: args,
    };
    const extras = extrasOf(original, ["type", "call_id", "name", "arguments"]);
    const posted = postedArguments(item.arguments, args);
    this.events.push(meta.write(request, { ...(extras && { item: extras }), ...posted }));
  }

  /** An item reference: the assistant's text that names it, the item verbatim. */
  reference(item: ResponsesItemReference, original: Json): void {
    this.#item();
    const response: ChatResponse = {
      type: "chat_response",
      timestamp: this.timestamp,
      message: referenceText(item.id),
    };
    this.events.push(meta.write(response, { reference: original }));
  }

  /** A hosted or built-in tool item, carried verbatim (./responses-hosted.ts). */
  hosted(original: Json & { type: string }, at: MessagePath): void {
    this.system.other();
    const events = hostedItemEvents(original, this.timestamp, at);
    // An output may answer the previous turn's pending call, as a function_call_output does.
    // Stryker disable next-line OptionalChaining: hostedItemEvents gives one or two events, never none, so `?.` and `.` agree; the `?.` is for noUncheckedIndexedAccess.
    if (events[0]?.type === "tool_call_request") this.leading = false;
    for (const event of events) this.events.push(event);
  }

  output(item: ResponsesFunctionCallOutput, original: Json, at: MessagePath): void {
    this.system.other();
    const id = item.call_id;
    const seen = this.calls.has(id) ? this.answers : this.carried;
    const answered = seen.get(id);
    if (answered !== undefined) {
      throw invalidMessage(
        [...at, "call_id"],
        `a second output for call_id ${JSON.stringify(id)} (the first is ${describePath(answered)}); a call takes one output`,
      );
    }
    if (!this.calls.has(id) && !this.leading) {
      throw invalidMessage(
        [...at, "call_id"],
        `orphan function_call_output: no function_call with call_id ${JSON.stringify(id)} comes before it in this turn; post it in the turn that holds its call${PENDING_RESULT_HINT}`,
      );
    }
    seen.set(id, at);
    const response: ToolCallResponse = {
      type: "tool_call_response",
      timestamp: this.timestamp,
      id,
      content: textOf(item.output),
      is_error: false,
    };
    const held =
      typeof item.output === "string" ? ["type", "call_id", "output"] : ["type", "call_id"];
    this.events.push(withItem(response, original, held));
  }
}

/** Converts one posted turn; see {@link openaiResponses}. */
function toEvents(value: unknown, { timestamp, dropSystem }: ToEventsOptions): ConvertedTurn {
  refuseUnmodelled(value);
  const items = parseMessages(Turn, value, FIELD);
  // Templates are taken from the posted objects, not zod's copies, which drop a `__proto__` key.
  const posted = value as Json[];
  const turn = new TurnEvents(timestamp, dropSystem);
  items.forEach((item, i) => {
    const original = posted[i] as Json;
    const at: MessagePath = [FIELD, i];
    switch (item.type) {
      case undefined:
      case "message":
        turn.message(item as ResponsesMessage, original, at);
        break;
      case "reasoning":
        turn.reasoning(item as ResponsesReasoning, original);
        break;
      case "function_call":
        turn.call(item as ResponsesFunctionCall, original, at);
        break;
      case "function_call_output":
        turn.output(item as ResponsesFunctionCallOutput, original, at);
        break;
      case "item_reference":
        turn.reference(item as ResponsesItemReference, original);
        break;
      default:
        turn.hosted(original as Json & { type: string }, at);
    }
  });
  if (turn.events.length === 1) {
    throw invalidMessage(
      [FIELD],
      "the turn holds only system prompts: post at least one other item",
    );
  }
  return { events: turn.events, droppedSystem: turn.system.dropped };
}

// ---------------------------------------------------------------- fromView

/** The stored item keys of a view event, unless the projection rewrote it; `id` dropped in a turn whose reasoning is stripped. */
function templateOf(viewEvent: ViewEvent, idless: boolean): Json | undefined {
  const item = meta.stored(viewEvent)?.item;
  if (!isJsonObject(item)) return undefined;
  return idless ? without(item, ["id"]) : item;
}

function userItem(viewEvent: ViewEvent, text: string, idless: boolean): ResponsesMessage {
  const plain: ResponsesMessage = { role: "user", content: text };
  const template = templateOf(viewEvent, idless);
  if (template === undefined) return plain;
  const candidate = { role: "user", content: text, ...without(template, ["role"]) };
  return fits(ResponsesUserMessage, candidate, (m) => textOf(m.content), text)
    ? (candidate as ResponsesMessage)
    : plain;
}

/** An output message's parts with OpenAI's required `annotations` and `logprobs`. */
function outputParts(value: unknown): Json[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((part: Json) => ({ annotations: [], logprobs: [], ...part }));
}

function assistantItem(viewEvent: ViewEvent, text: string, idless: boolean): ResponsesItem {
  const plain: ResponsesItem = { role: "assistant", content: text };
  const template = templateOf(viewEvent, idless);
  if (template === undefined) return plain;
  const { content, id, ...rest } = without(template, ["role"]);
  if (typeof id === "string") {
    // An output message: OpenAI's schema requires its type, status and each part's defaults.
    const candidate: Json = {
      type: "message",
      role: "assistant",
      id,
      status: "completed",
      ...rest,
      content: outputParts(content) ?? [
        { type: "output_text", text, annotations: [], logprobs: [] },
      ],
    };
    if (fits(ResponsesAssistantMessage, candidate, (m) => textOf(m.content), text)) {
      return candidate as ResponsesItem;
    }
    return plain;
  }
  // Without an id, output parts make no valid item: the text goes as a string.
  const candidate = { role: "assistant", content: text, ...without(rest, ["status"]) };
  return ResponsesAssistantMessage.safeParse(candidate).success
    ? (candidate as ResponsesItem)
    : plain;
}

function reasoningItem(viewEvent: ViewEvent, text: string): ResponsesItem | undefined {
  // A reasoning item needs its id: without our metadata (or in a stripped turn, where none is seen) it is left out.
  const template = templateOf(viewEvent, false);
  if (template === undefined) return undefined;
  const candidate = { type: "reasoning", ...without(template, ["type"]) };
  return fits(ResponsesReasoning, candidate, reasoningText, text)
    ? (candidate as ResponsesItem)
    : undefined;
}

function callItem(request: ToolCallRequest, viewEvent: ViewEvent, idless: boolean): ResponsesItem {
  const plain = {
    type: "function_call" as const,
    call_id: request.id,
    name: request.name,
    arguments: argumentsText(viewEvent),
  };
  // Without a template the candidate is the plain item itself.
  const candidate = { ...templateOf(viewEvent, idless), ...plain };
  return ResponsesFunctionCall.safeParse(candidate).success ? (candidate as ResponsesItem) : plain;
}

function outputItem(
  response: ToolCallResponse,
  viewEvent: ViewEvent,
  idless: boolean,
): ResponsesItem {
  const plain = {
    type: "function_call_output" as const,
    call_id: response.id,
    output: response.content,
  };
  const template = templateOf(viewEvent, idless);
  if (template === undefined) return plain;
  const candidate = { ...plain, ...without(template, ["type", "call_id"]) };
  return fits(ResponsesFunctionCallOutput, candidate, (o) => textOf(o.output), response.content)
    ? (candidate as ResponsesItem)
    : plain;
}

/** The stored item reference of a view event, while it still reads as its text and its turn keeps ids. */
function referenceItem(viewEvent: ViewEvent, idless: boolean): ResponsesItem | undefined {
  const item = valid(ResponsesItemReference, meta.stored(viewEvent)?.reference);
  const event = viewEvent.event as ChatResponse;
  if (item === undefined || idless || event.message !== referenceText(item.id)) return undefined;
  return meta.stored(viewEvent)?.reference as ResponsesItem;
}

/** Writes a view as Responses input items; see {@link openaiResponses}. */
function fromView(view: ProviderView): ResponsesItem[] {
  const out: ResponsesItem[] = [];
  const hosted = hostedItems(view);
  for (const turn of view) {
    const idless = turn.reasoningStripped;
    for (const viewEvent of turn.events) {
      const event = viewEvent.event;
      const items = hosted.itemsOf(viewEvent);
      if (items !== undefined) {
        // Hosted items go back as posted (checked again by hostedItemSchema), or as assistant text.
        for (const item of items) out.push(item as ResponsesItem);
        continue;
      }
      switch (event.type) {
        case "chat_request": {
          // An empty request makes no message, unless its stored parts (an image, a file) do.
          const item = userItem(viewEvent, event.content, idless);
          if (item.content !== "") out.push(item);
          break;
        }
        case "chat_response": {
          const reference = referenceItem(viewEvent, idless);
          if (reference !== undefined) {
            out.push(reference);
            break;
          }
          if (event.reasoning !== undefined) {
            const item = reasoningItem(viewEvent, event.reasoning);
            if (item) out.push(item);
          }
          // JSON.stringify gives undefined for an event without data, though typed string.
          const text = event.message ?? (JSON.stringify(event.data) as string | undefined);
          // An event that also holds reasoning has its metadata from the reasoning item, if any.
          const own = event.reasoning === undefined ? viewEvent : { ...viewEvent, rewritten: true };
          if (text !== undefined && text !== "") out.push(assistantItem(own, text, idless));
          break;
        }
        case "tool_call_request":
          out.push(callItem(event, viewEvent, idless));
          break;
        case "tool_call_response":
          out.push(outputItem(event, viewEvent, idless));
          break;
      }
    }
  }
  return out;
}

/**
 * The `openai-responses` format: Responses API `input` items. See the module
 * comment for the mapping and {@link ResponsesMetadata} for what the events
 * carry besides JP's fields.
 */
export const openaiResponses: ProviderFormat<ResponsesItem> = {
  name: NAME,
  field: FIELD,
  messageSchema: ResponsesItemSchema,
  toEvents,
  fromView,
  responseUsage: ResponsesResponseUsage,
};
