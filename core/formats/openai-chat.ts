/**
 * OpenAI Chat Completions `messages` (docs/architecture.md §15).
 *
 * | Chat message                                  | JP events                                    |
 * |-----------------------------------------------|----------------------------------------------|
 * | `user` (string, or parts)                     | `chat_request`: its text parts joined by `\n` |
 * | `assistant` text (string; `text` and `refusal` parts joined by `\n`; else the `refusal` field) | `chat_response` `message` |
 * | `assistant` `tool_calls[i]`, `type:"function"` | `tool_call_request` `{id, name, arguments}`, arguments = the JSON object `function.arguments` encodes |
 * | `tool` (string, or text parts)                | `tool_call_response` `{id, content, is_error: false}` |
 * | `system`, `developer`                         | 422, or dropped while leading with `dropSystem` |
 * | `assistant` `tool_calls[i]`, `type:"custom"` | `tool_call_request` `{id, name: custom.name, arguments: {input: custom.input}}`; `custom: true` in metadata |
 * | `function` role, `function_call`, `audio`     | 422: not modelled                            |
 *
 * Written back ({@link openaiChat}.fromView): `chat_response` `data` becomes
 * the assistant text `JSON.stringify(data)`; reasoning is dropped, as Chat
 * Completions takes no reasoning input; `is_error` has no Chat field (a
 * stripped error result says `error` in its text). An assistant message is at
 * most one text followed by its tool calls: a text starts a new message, and
 * a tool call joins the assistant message right before it in the same turn.
 *
 * What JP has no field for travels in `metadata["openai-chat"]`
 * ({@link ChatMetadata}) on the first event of each message: the message's
 * other fields verbatim (`name`, parts arrays with images, audio and files,
 * `refusal`, `annotations`, keys we do not know) and a tool call's own extra
 * keys. They are re-emitted while their event is not rewritten and its text
 * still matches, so round trips are exact (tool arguments too: the string
 * as posted is kept when re-serializing would change it) but for a
 * text-less assistant message's absent `content`, which comes back `null`.
 */
import * as z from "zod";
import type {
  ChatRequest,
  ChatResponse,
  Entry,
  ToolCallRequest,
  ToolCallResponse,
  TurnStart,
} from "../events.ts";
import type { ConvertedTurn, ProviderFormat, ToEventsOptions } from "./format.ts";
import { hostedOf, hostedText } from "./hosted.ts";
import { describePath, invalidMessage, parseMessages, unsupportedMessage } from "./issues.ts";
import {
  ChatAssistantMessage,
  type ChatAssistantPart,
  ChatMessage,
  type ChatToolCall,
  ChatToolMessage,
  ChatUserMessage,
} from "./openai-chat.schema.ts";
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
  turnOf,
  without,
} from "./shared.ts";
import { ChatResponseUsage } from "./usage.ts";
import type { ProviderView, ViewEvent } from "./view.ts";

const NAME = "openai-chat";

/**
 * What `metadata["openai-chat"]` holds, on the first event of a message
 * (`chat_request`, `tool_call_response`, and an assistant message's
 * `chat_response`, or its first `tool_call_request` when it has no text).
 */
export interface ChatMetadata {
  /**
   * The message's fields besides `role`, `tool_calls`, `tool_call_id` and a
   * `content` string that is the event's own text (a text-less assistant's
   * `null` content too), verbatim. Absent when nothing is left. Re-emitted
   * while its event is not rewritten and the text it implies is still the
   * event's; on a text-less assistant message's first call it describes the
   * message, so stripped arguments leave it in force.
   */
  readonly message?: Record<string, unknown>;
  /**
   * This text-less assistant message follows another assistant message: its
   * tool calls start a message of their own instead of joining that one. It
   * is structure, not provider data, so it holds on a rewritten event too.
   */
  readonly split?: true;
  /** On a `tool_call_request`: the call's keys besides `id`, `type` and `function`, verbatim; dropped with stripped arguments. */
  readonly call?: Record<string, unknown>;
  /**
   * On a `tool_call_request`: `function.arguments` as posted, when
   * re-serializing the parsed object would change it (spacing, a number with
   * more digits than a float holds); given back in both OpenAI formats while
   * the call is not stripped.
   */
  readonly arguments?: string;
  /**
   * On a `tool_call_request`: a custom (free-form input) tool call, whose
   * `custom.input` string is `arguments.input`. Structure, so it holds on a
   * rewritten event too (stripped arguments give the input `"{}"`).
   */
  readonly custom?: true;
}

type Path = ["messages", ...(string | number)[]];

/**
 * Text of an assistant message: its content string, or its text and refusal
 * parts joined by `\n`; when that is empty, its `refusal` (a refusal answer
 * carries no content, and is the model's answer all the same).
 */
function assistantText(message: {
  content?: string | readonly ChatAssistantPart[] | null | undefined;
  refusal?: string | null | undefined;
}): string {
  let text = "";
  if (typeof message.content === "string") text = message.content;
  else if (Array.isArray(message.content)) {
    const texts: string[] = [];
    for (const part of message.content) texts.push(part.type === "text" ? part.text : part.refusal);
    text = texts.join("\n");
  }
  return text === "" && typeof message.refusal === "string" ? message.refusal : text;
}

/** What our events carry under `metadata["openai-chat"]`. */
const meta = formatMetadata<ChatMetadata>(NAME);

/** The message's fields the event has no place for, as metadata. */
function messageField(original: Json, held: readonly string[]): ChatMetadata {
  const rest = extrasOf(original, held);
  return rest ? { message: rest } : {};
}

const SYSTEM_REFUSAL = laterSystemHint(
  "system and developer prompts are not conversation turns: the platform sends them with each call, so post only the turn's messages (a large system prompt can be taken out of `context_window`), or post with `drop_system: true` to drop leading system and developer messages",
  "message",
);

const turnMessages = turnOf(ChatMessage);

/** {@link turnMessages} with its issues located inside the content: what a post is validated with. */
const postedMessages = z.unknown().transform((value, ctx) => {
  const result = turnMessages.safeParse(value);
  if (result.success) return result.data;
  reportLocated(ctx, result.error.issues, [], value);
  return z.NEVER;
});

/** Converts one posted turn; see {@link openaiChat}. */
function toEvents(messages: unknown, { timestamp, dropSystem }: ToEventsOptions): ConvertedTurn {
  const parsed = parseMessages(postedMessages, messages, "messages");
  // Templates are taken from the posted objects, not zod's copies, which drop a `__proto__` key.
  const posted = messages as Json[];
  const turnStart: TurnStart = { type: "turn_start", timestamp };
  const events: Entry[] = [turnStart];
  const system = new LeadingSystem(dropSystem, SYSTEM_REFUSAL);
  let afterAssistant = false;
  // Results before the turn's first user or assistant message answer the previous turn's pending calls.
  let leading = true;
  // Where each call id of the turn was requested, and answered: paths for the details.
  const calls = new Map<string, Path>();
  const answers = new Map<string, Path>();
  // Results for the previous turn's pending calls, apart: their ids may be called again in this turn.
  const carried = new Map<string, Path>();

  for (let i = 0; i < parsed.length; i++) {
    const message = parsed[i] as ChatMessage;
    const original = posted[i] as Json;
    const at: Path = ["messages", i];
    switch (message.role) {
      case "system":
      case "developer":
        system.system(at, message.role);
        continue;
      case "function":
        throw unsupportedMessage(
          at,
          'the deprecated "function" role is not supported: send tool results as {"role":"tool","tool_call_id":…,"content":…}',
        );
      case "user": {
        const text = joinedText(message.content);
        const hasOtherPart =
          Array.isArray(message.content) && message.content.some((part) => part.type !== "text");
        if (text === "" && !hasOtherPart) {
          throw invalidMessage([...at, "content"], "a user message needs text or a content part");
        }
        const held = typeof message.content === "string" ? ["role", "content"] : ["role"];
        const request: ChatRequest = { type: "chat_request", timestamp, content: text };
        events.push(meta.write(request, messageField(original, held)));
        break;
      }
      case "assistant":
        convertAssistant(message, original, at, timestamp, afterAssistant, calls, events);
        break;
      case "tool": {
        const id = message.tool_call_id;
        const seen = calls.has(id) ? answers : carried;
        const answered = seen.get(id);
        if (answered !== undefined) {
          throw invalidMessage(
            [...at, "tool_call_id"],
            `a second result for tool call ${JSON.stringify(id)} (the first is ${describePath(answered)}); a call takes one result`,
          );
        }
        if (!calls.has(id) && !leading) {
          throw invalidMessage(
            [...at, "tool_call_id"],
            `orphan tool result: no tool call ${JSON.stringify(id)} comes before it in this turn; post it in the turn that holds its call${PENDING_RESULT_HINT}`,
          );
        }
        seen.set(id, at);
        const held =
          typeof message.content === "string"
            ? ["role", "tool_call_id", "content"]
            : ["role", "tool_call_id"];
        const response: ToolCallResponse = {
          type: "tool_call_response",
          timestamp,
          id,
          content: joinedText(message.content),
          is_error: false,
        };
        events.push(meta.write(response, messageField(original, held)));
        break;
      }
    }
    system.other();
    afterAssistant = message.role === "assistant";
    if (message.role !== "tool") leading = false;
  }
  if (events.length === 1) {
    throw invalidMessage(
      ["messages"],
      "the turn holds only system prompts: post at least one other message",
    );
  }
  return { events, droppedSystem: system.dropped };
}

function convertAssistant(
  message: ChatAssistantMessage,
  original: Json,
  at: Path,
  timestamp: string,
  afterAssistant: boolean,
  calls: Map<string, Path>,
  events: Entry[],
): void {
  if (message.audio != null) {
    throw unsupportedMessage(
      [...at, "audio"],
      "assistant audio is not supported: post the audio response's transcript as the assistant's text content",
    );
  }
  if (message.function_call != null) {
    throw unsupportedMessage(
      [...at, "function_call"],
      "the deprecated function_call is not supported: post the call in tool_calls",
    );
  }
  const text = assistantText(message);
  const toolCalls = message.tool_calls ?? [];
  if (text === "" && toolCalls.length === 0) {
    throw invalidMessage(at, "an assistant message needs text content or tool_calls");
  }
  // The content goes back from the event when it is the event's text (a non-empty string is all
  // of it), or when it is the default `null` of a text-less message.
  const contentIsText =
    (typeof message.content === "string" && message.content !== "") ||
    (message.content === null && text === "");
  let first: ChatMetadata = messageField(
    original,
    contentIsText ? ["role", "tool_calls", "content"] : ["role", "tool_calls"],
  );
  if (text !== "") {
    const response: ChatResponse = { type: "chat_response", timestamp, message: text };
    events.push(meta.write(response, first));
    first = {};
  } else if (afterAssistant) {
    first = { ...first, split: true };
  }
  for (let j = 0; j < toolCalls.length; j++) {
    const call = toolCalls[j] as ChatToolCall;
    const callAt: Path = [...at, "tool_calls", j];
    const earlier = calls.get(call.id);
    if (earlier !== undefined) {
      throw invalidMessage(
        [...callAt, "id"],
        `duplicate tool call id ${JSON.stringify(call.id)} (also at ${describePath([...earlier, "id"])}): tool call ids must be unique within a turn`,
      );
    }
    calls.set(call.id, callAt);
    const extra = extrasOf((original.tool_calls as Json[])[j] as Json, [
      "id",
      "type",
      "function",
      "custom",
    ]);
    let request: ToolCallRequest;
    let posted: ChatMetadata | undefined;
    if (call.type === "custom") {
      // Free-form input is no JSON object: JP holds it as `{input}`, the call is marked custom.
      const { name, input, ...rest } = call.custom;
      if (Object.keys(rest).length > 0) {
        throw invalidMessage(
          [...callAt, "custom", Object.keys(rest)[0] as string],
          "a custom tool call's custom object takes name and input only",
        );
      }
      request = { type: "tool_call_request", timestamp, id: call.id, name, arguments: { input } };
      posted = { custom: true };
    } else {
      const args = parseToolArguments(call.function.arguments, [
        ...callAt,
        "function",
        "arguments",
      ]);
      request = {
        type: "tool_call_request",
        timestamp,
        id: call.id,
        name: call.function.name,
        arguments: args,
      };
      posted = postedArguments(call.function.arguments, args);
    }
    events.push(meta.write(request, { ...first, ...(extra && { call: extra }), ...posted }));
    first = {};
  }
}

/** This format's metadata of an event, when it has the documented shape. */
function chatMetadataOf(event: ViewEvent["event"]): ChatMetadata | undefined {
  return meta.read(event) as ChatMetadata | undefined;
}

/** The stored message fields of a view event, unless the projection rewrote it. */
function templateOf(viewEvent: ViewEvent, reserved: readonly string[]): Json | undefined {
  // A text-less assistant message's fields ride on its first call, but describe the message, not
  // the call: stripping the call's arguments leaves them true (the text check still guards them).
  if (viewEvent.rewritten && viewEvent.event.type !== "tool_call_request") return undefined;
  const message = chatMetadataOf(viewEvent.event)?.message;
  return isJsonObject(message) ? without(message, reserved) : undefined;
}

function userMessage(viewEvent: ViewEvent, content: string): ChatMessage {
  const plain: ChatMessage = { role: "user", content };
  const template = templateOf(viewEvent, ["role"]);
  // Stryker disable next-line ConditionalExpression: a shortcut only: without a template the candidate is the plain message itself, which fits gives back or swaps for an equal one
  if (template === undefined) return plain;
  const candidate: ChatMessage = { role: "user", content, ...template };
  return fits(ChatUserMessage, candidate, (m) => joinedText(m.content), content)
    ? candidate
    : plain;
}

function toolMessage(viewEvent: ViewEvent, id: string, content: string): ChatMessage {
  const plain: ChatMessage = { role: "tool", tool_call_id: id, content };
  const template = templateOf(viewEvent, ["role", "tool_call_id"]);
  // Stryker disable next-line ConditionalExpression: a shortcut only: without a template the candidate is the plain message itself, which fits gives back or swaps for an equal one
  if (template === undefined) return plain;
  const candidate: ChatMessage = { role: "tool", tool_call_id: id, content, ...template };
  return fits(ChatToolMessage, candidate, (m) => joinedText(m.content), content)
    ? candidate
    : plain;
}

/** An assistant message with `text` ("" for none), from its stored fields when they still fit. */
function assistantMessage(viewEvent: ViewEvent | undefined, text: string): ChatAssistantMessage {
  const plain: ChatAssistantMessage = { role: "assistant", content: text === "" ? null : text };
  const template = viewEvent && templateOf(viewEvent, ["role", "tool_calls"]);
  // Stryker disable next-line ConditionalExpression: a shortcut only: without a template the candidate is the plain message itself, which fits gives back or swaps for an equal one
  if (template === undefined) return plain;
  const message = { ...plain, ...template };
  return fits(ChatAssistantMessage, message, assistantText, text) ? message : plain;
}

function toolCallOf(viewEvent: ViewEvent): ChatToolCall {
  const request = viewEvent.event as ToolCallRequest;
  const stored = meta.stored(viewEvent)?.call;
  const extra = isJsonObject(stored) ? without(stored, ["id", "type", "function", "custom"]) : {};
  if (chatMetadataOf(request)?.custom === true) {
    const { input } = request.arguments;
    // Stripped arguments are `{}`: the input is then their text, as a function call's would be.
    const text = typeof input === "string" ? input : JSON.stringify(request.arguments);
    return {
      id: request.id,
      type: "custom",
      custom: { name: request.name, input: text },
      ...extra,
    };
  }
  return {
    id: request.id,
    type: "function",
    function: { name: request.name, arguments: argumentsText(viewEvent) },
    ...extra,
  };
}

/**
 * Where the trailing assistant message whose tool calls are not all answered
 * yet (pending) starts, with the tool messages after it; the end if none.
 */
function callRunStart(messages: readonly ChatMessage[]): number {
  let i = messages.length;
  const answered = new Set<string>();
  for (let last = messages[i - 1]; last?.role === "tool"; last = messages[--i - 1]) {
    answered.add(last.tool_call_id);
  }
  const call = messages[i - 1];
  const pending =
    call?.role === "assistant" && call.tool_calls?.some(({ id }) => !answered.has(id)) === true;
  return pending ? i - 1 : messages.length;
}

/** Writes a view as Chat messages; see {@link openaiChat}. */
function fromView(view: ProviderView): ChatMessage[] {
  const out: ChatMessage[] = [];
  // The text of hosted events not yet written (docs/architecture.md §15 "Hosted tools").
  const hosted: string[] = [];
  // Written at `index` (the end by default), where it splits no call from its results.
  const flushHosted = (index = out.length): ChatAssistantMessage => {
    const message: ChatAssistantMessage = { role: "assistant", content: hosted.join("\n") };
    hosted.length = 0;
    out.splice(index, 0, message);
    return message;
  };
  for (const turn of view) {
    // The assistant message a tool call joins: the last message, while it is an assistant's in this turn.
    let open: ChatAssistantMessage | undefined;
    // A JP `message: ""` makes no valid message alone: it is written only if a tool call joins it.
    // Stryker disable next-line BooleanLiteral: never read before it is set: it is read only once `open` is set, and every assignment of `open` sets it too
    let held = false;
    for (const viewEvent of turn.events) {
      const event = viewEvent.event;
      if (hostedOf(event) !== undefined) {
        // Chat has no hosted tools: their text waits for a place that splits no call from its results.
        hosted.push(hostedText(event as ToolCallRequest | ToolCallResponse));
        continue;
      }
      const joining =
        event.type === "tool_call_request" &&
        open !== undefined &&
        chatMetadataOf(event)?.split !== true;
      if (hosted.length > 0 && joining) {
        // Before the message the call joins (not yet written while held).
        const index = out.lastIndexOf(open as ChatMessage);
        flushHosted(index < 0 ? out.length : index);
      } else if (hosted.length > 0 && event.type !== "tool_call_response") {
        open = flushHosted();
        held = false;
      }
      switch (event.type) {
        case "chat_request":
          out.push(userMessage(viewEvent, event.content));
          open = undefined;
          break;
        case "chat_response": {
          if (event.message === undefined && event.data === undefined) break;
          open =
            event.message !== undefined
              ? assistantMessage(viewEvent, event.message)
              : assistantMessage(undefined, JSON.stringify(event.data));
          held = event.message === "";
          if (!held) out.push(open);
          break;
        }
        case "tool_call_request": {
          if (open === undefined || chatMetadataOf(event)?.split === true) {
            open = assistantMessage(viewEvent, "");
            held = true;
          }
          if (held) out.push(open);
          held = false;
          open.tool_calls ??= [];
          open.tool_calls.push(toolCallOf(viewEvent));
          break;
        }
        case "tool_call_response":
          out.push(toolMessage(viewEvent, event.id, event.content));
          open = undefined;
          break;
      }
    }
  }
  // At the end, before the last calls and their results: calls left pending stay last.
  if (hosted.length > 0) flushHosted(callRunStart(out));
  return out;
}

/**
 * The `openai-chat` format: Chat Completions request `messages`. See the
 * module comment for the mapping and {@link ChatMetadata} for what the
 * events carry besides JP's fields.
 */
export const openaiChat: ProviderFormat<ChatMessage> = {
  name: NAME,
  field: "messages",
  messageSchema: ChatMessage,
  toEvents,
  fromView,
  responseUsage: ChatResponseUsage,
};
