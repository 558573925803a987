/**
 * The AI SDK format (docs/architecture.md §15): a turn posted as the `ai` package's
 * `ModelMessage[]` (the version the project pins, `ai@6`), and views read
 * back as the same. Types and schemas are our own (core imports no SDK);
 * `test/formats/ai-sdk-types.test.ts` checks that what {@link aiSdk}`.fromView`
 * returns passes the package's `modelMessageSchema` and is assignable to its
 * `ModelMessage[]` without a cast. Posted JSON has no binary data: image and
 * file `data` are strings (base64 or URLs).
 *
 * | ModelMessage | JP event | `metadata["ai-sdk"]` |
 * |---|---|---|
 * | `user` string, or `text`/`image`/`file` parts (one message) | one `chat_request`, texts joined `\n` | `content`: the parts verbatim, unless they are one plain text part |
 * | `assistant` string, `text` part | `chat_response {message}` | `part`: the part's `providerOptions` |
 * | `assistant` `reasoning` part | `chat_response {reasoning: text}` | `part`: its `providerOptions` (signatures, redacted data) |
 * | `assistant` `tool-call` part | `tool_call_request {id: toolCallId, name: toolName, arguments: input}` | `part`: `providerOptions`, `providerExecuted: false` |
 * | `tool` `tool-result` part | `tool_call_response {id: toolCallId, content, is_error}` | `part`: `output` unless it is the plain `text`/`error-text` form, `toolName` if not its call's, `providerOptions` |
 * | any message's `providerOptions` | – | `message`, on the message's first event |
 * | `system` | 422, or dropped while leading with `dropSystem` | – |
 * | assistant `tool-call` with `providerExecuted: true`, and an assistant message's `tool-result` (a provider-executed tool's) | `tool_call_request` / `tool_call_response` as above (docs/architecture.md §15 "Hosted tools") | `hosted`: the part verbatim |
 * | assistant `tool-approval-request` (after its call, in the turn) | – | `approval`: the part verbatim, on its call's `tool_call_request` |
 * | `tool` `tool-approval-response` | – | `approvals`: the parts verbatim, on the turn's next `tool_call_response` (`messages`: whole tool messages of them; `parts`: those in the result's own message) |
 * | assistant `file` parts | 422: not modelled | – |
 *
 * A result's `content` is its output as text: `text` and `error-text` their
 * value, `json` and `error-json` `JSON.stringify(value)`, `content` its text
 * parts joined `\n`, `execution-denied` its reason (or `execution denied`);
 * `is_error` is true for `error-text`, `error-json` and `execution-denied`.
 * An assistant or tool message that directly follows one of the same role is
 * marked `split: true` on its first event (structure, kept even when the
 * event is rewritten), so adjacent messages come back apart.
 *
 * Refused when posted (400): an empty array or content, a user message
 * without text or a part, an unknown role, part or output type, unknown keys
 * (the service would not keep them), a `tool-call` `input` that is not a
 * JSON object, a duplicate `toolCallId` among the turn's calls, a second
 * result for a call, a result whose call is not earlier in the turn, an
 * approval request whose call is not earlier in the turn (or a second one for
 * a call), and an approval response no tool result follows in its turn.
 *
 * Tool approvals (a call ends turn k, the user's answer and the result begin
 * turn k + 1, docs/architecture.md §5 "Tool pairs") ride on tool events, so
 * compaction moves them with their call and result: a request on its call (at
 * the end of its assistant message, where `generateText` puts it), responses on
 * the result (right before it). Other formats have none: they see the pair.
 *
 * Written out ({@link aiSdk}`.fromView`): a user message per `chat_request`
 * (an empty one without parts is left out); the turn's consecutive
 * assistant events make one assistant message, its consecutive results one
 * tool message; a message exists only once it holds a part, so a call
 * omitted with its result leaves no empty message. A single plain text part
 * goes out as a string. Opaque data is re-emitted only while its event is not
 * rewritten (and still spells the event's text), re-validated with our
 * schemas. A result's `toolName` is the one it was posted with while it is
 * not rewritten, else its call's (the latest call with its id in the view;
 * for a stream posted as JP events whose result has no call, the stored name
 * or `unknown`). In provider terms, compaction gives: a stripped result
 * `{type: "text", value: "[compacted] <name>: success"}` (`error-text` for
 * an error result), stripped input `{}`, stripped reasoning parts removed,
 * and a summary a user message `[Summary of previous conversation]` with an
 * assistant message holding the summary. `chat_response.data` becomes its
 * JSON text. Round trips are exact up to §15's normalizations: a string vs a
 * single text part, `input` as a JSON value.
 */
import * as z from "zod";
import type {
  ChatRequest,
  ChatResponse,
  Entry,
  ToolCallRequest,
  ToolCallResponse,
} from "../events.ts";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../json.ts";
import {
  type AiSdkAssistantPart,
  type AiSdkMessage,
  AiSdkMessageSchema,
  AiSdkReasoningPart,
  AiSdkTextPart,
  type AiSdkToolApprovalRequest,
  AiSdkToolCallPart,
  type AiSdkToolPart,
  AiSdkToolResultPart,
  AiSdkUserPart,
  LocatedMessage,
  options,
} from "./ai-sdk.schema.ts";
import {
  type Approvals,
  addApproval,
  approvalMessages,
  approvalParts,
  attachApproval,
  takeApprovals,
  type WaitingApprovals,
} from "./ai-sdk-approvals.ts";
import {
  hostedPart,
  hostedPartEvent,
  hostedUsable,
  outputText,
  plainOutput,
} from "./ai-sdk-hosted.ts";
import type { ConvertedTurn, ProviderFormat, ToEventsOptions } from "./format.ts";
import { hostedOf, verbatimHosted } from "./hosted.ts";
import { describePath, invalidMessage, type MessagePath, unsupportedMessage } from "./issues.ts";
import {
  dropSystemHint,
  extrasOf,
  forEachPostedPart,
  formatMetadata,
  isJsonObject,
  isPlainText,
  type Json,
  joinedText,
  PENDING_RESULT_HINT,
  type PostedTurn,
  parsePostedTurn,
  refuseNonFinite,
  turnOf,
  valid,
} from "./shared.ts";
import { AiSdkResponseUsage } from "./usage.ts";
import type { ProviderEvent, ProviderView } from "./view.ts";

const NAME = "ai-sdk";
const FIELD = "messages";

/** What an event carries under `metadata["ai-sdk"]` (see the module table). */
export interface AiSdkMetadata {
  /** On a message's first event: the message's fields besides `role` and `content`. */
  readonly message?: Record<string, unknown>;
  /** On an assistant or tool message's first event: it follows a message of the same role. */
  readonly split?: true;
  /** On a `chat_request`: the user parts verbatim. */
  readonly content?: unknown;
  /** On other events: the part's fields the event has no place for. */
  readonly part?: Record<string, unknown>;
  /** On a provider-executed call or result: the part verbatim (docs/architecture.md §15 "Hosted tools"). */
  readonly hosted?: Record<string, unknown>;
  /** On a `tool_call_request`: its `tool-approval-request` part, verbatim. */
  readonly approval?: Record<string, unknown>;
  /** On a `tool_call_response`: the `tool-approval-response` parts posted right before it, verbatim. */
  readonly approvals?: Approvals;
}

// ---------------------------------------------------------------- toEvents

const SYSTEM_REFUSAL = dropSystemHint(
  "system messages are not conversation turns: pass yours with each call (`system`), " +
    "and give model.context_window net of it if it is large",
);

/** Part types of the package the service does not model, by role, with why. */
const UNMODELLED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  assistant: {
    file: "assistant file parts (generated files) are not modelled",
  },
};

/** Refuses (422) parts the service does not model, before the schema would call them invalid (400). */
function refuseUnmodelled(value: unknown, from: number): void {
  forEachPostedPart(value, FIELD, from, (part, at, message) => {
    if (typeof message.role !== "string") return;
    const refused = Object.hasOwn(UNMODELLED, message.role) ? UNMODELLED[message.role] : undefined;
    const why = refused && Object.hasOwn(refused, part.type) ? refused[part.type] : undefined;
    if (why === undefined) return;
    throw unsupportedMessage(
      at,
      `part type "${part.type}" is not supported: ${why}; leave it out of the posted ` +
        "messages, or post the turn as JP events",
    );
  });
}

/** What our events carry under `metadata["ai-sdk"]`. */
const meta = formatMetadata<AiSdkMetadata>(NAME);

const isPlainOutput = (output: Json) =>
  (output.type === "text" || output.type === "error-text") && Object.keys(output).length === 2;

type Located = z.infer<typeof LocatedMessage>;
const POSTED_TURN: PostedTurn<Located> = {
  field: FIELD,
  schema: turnOf(LocatedMessage),
  refusal: SYSTEM_REFUSAL,
  refuseUnmodelled,
};

/** One posted message being converted: the object as posted, where it is, what its first event carries. */
interface Posted {
  readonly original: Json;
  readonly at: MessagePath;
  readonly first: AiSdkMetadata;
}

/** The turn being converted: its events so far, and its tool calls and results (pairing, duplicates). */
interface TurnState {
  readonly timestamp: string;
  readonly events: Entry[];
  readonly calls: Map<string, { path: MessagePath; name: string }>;
  readonly answered: Map<string, MessagePath>;
  /** Results for the previous turn's pending calls, apart: their ids may be called again in this turn. */
  readonly carried: Map<string, MessagePath>;
  /** No user or assistant message yet: a result here answers the previous turn's pending calls. */
  leading: boolean;
  /** Each call's event, for the approval request that follows it. */
  readonly callEvents: Map<string, ToolCallRequest>;
  /** Approval responses no result has carried yet, and where the first is. */
  approvals: WaitingApprovals;
}

function userEvents(
  message: Located & { role: "user" },
  { original, at, first }: Posted,
  turn: TurnState,
): void {
  const request: ChatRequest = {
    type: "chat_request",
    timestamp: turn.timestamp,
    content: joinedText(message.content),
  };
  let content: unknown;
  if (Array.isArray(message.content)) {
    const parts = original.content as Json[];
    if (request.content === "" && parts.every((part) => part.type === "text")) {
      throw invalidMessage(
        [...at, "content"],
        "a user message needs text or an image or file part",
      );
    }
    if (!(parts.length === 1 && isPlainText(parts[0] as Json))) content = parts;
  }
  turn.events.push(meta.write(request, { ...first, ...(content !== undefined && { content }) }));
}

function assistantEvents(
  message: Located & { role: "assistant" },
  { original, at, first }: Posted,
  turn: TurnState,
): void {
  const { timestamp } = turn;
  if (typeof message.content === "string") {
    turn.events.push(
      meta.write({ type: "chat_response", timestamp, message: message.content }, first),
    );
    return;
  }
  const parts = original.content as Json[];
  // The message's own metadata goes on its first event (an approval request makes none).
  let opening: AiSdkMetadata | undefined = first;
  const take = (): AiSdkMetadata => {
    const own = opening ?? {};
    opening = undefined;
    return own;
  };
  message.content.forEach((part, j) => {
    const posted = parts[j] as Json;
    const path: MessagePath = [...at, "content", j];
    let event: ChatResponse | ToolCallRequest;
    let extras: Json | undefined;
    switch (part.type) {
      case "tool-approval-request":
        attachApproval(posted as Json & { toolCallId: string }, path, turn);
        return;
      case "tool-result": {
        // A provider-executed tool's result, verbatim (§15 "Hosted tools"), with its waiting approvals.
        const own = { ...take(), ...takeApprovals(turn) };
        turn.events.push(hostedPartEvent(part, posted, timestamp, path, own));
        return;
      }
      case "text":
        event = { type: "chat_response", timestamp, message: part.text };
        extras = extrasOf(posted, ["type", "text"]);
        break;
      case "reasoning":
        event = { type: "chat_response", timestamp, reasoning: part.text };
        extras = extrasOf(posted, ["type", "text"]);
        break;
      case "tool-call": {
        if (part.providerExecuted) {
          // A provider-executed call: carried verbatim too; its approval request may follow.
          const hosted = hostedPartEvent(part, posted, timestamp, path, take()) as ToolCallRequest;
          turn.callEvents.set(part.toolCallId, hosted);
          turn.events.push(hosted);
          return;
        }
        const earlier = turn.calls.get(part.toolCallId);
        if (earlier !== undefined) {
          throw invalidMessage(
            [...path, "toolCallId"],
            `duplicate toolCallId ${JSON.stringify(part.toolCallId)} (also at ${describePath(earlier.path)}): tool call ids must be unique within a turn`,
          );
        }
        if (jsonDepthExceeds(part.input)) {
          throw invalidMessage(
            [...path, "input"],
            `nests deeper than ${MAX_JSON_DEPTH} levels: flatten the tool's input`,
          );
        }
        refuseNonFinite(part.input, [...path, "input"]);
        turn.calls.set(part.toolCallId, { path, name: part.toolName });
        event = {
          type: "tool_call_request",
          timestamp,
          id: part.toolCallId,
          name: part.toolName,
          arguments: part.input,
        };
        turn.callEvents.set(part.toolCallId, event);
        extras = extrasOf(posted, ["type", "toolCallId", "toolName", "input"]);
        break;
      }
    }
    turn.events.push(meta.write(event, { ...take(), ...(extras && { part: extras }) }));
  });
}

function toolEvents(
  message: Located & { role: "tool" },
  { original, at, first }: Posted,
  turn: TurnState,
): void {
  const parts = original.content as Json[];
  let opening: AiSdkMetadata | undefined = first;
  message.content.forEach((part, j) => {
    const posted = parts[j] as Json;
    if (part.type === "tool-approval-response") {
      // It waits for the result after it, which carries it (docs/architecture.md §5 "Tool pairs").
      turn.approvals.at ??= [...at, "content", j];
      turn.approvals.parts.push(posted);
      return;
    }
    const path: MessagePath = [...at, "content", j, "toolCallId"];
    const id = part.toolCallId;
    const seen = turn.calls.has(id) ? turn.answered : turn.carried;
    const answer = seen.get(id);
    if (answer !== undefined) {
      throw invalidMessage(
        path,
        `a second result for tool call ${JSON.stringify(id)} (the first is ${describePath(answer)}); a call takes one result`,
      );
    }
    const call = turn.calls.get(id);
    if (call === undefined && !turn.leading) {
      throw invalidMessage(
        path,
        `orphan tool result: no tool call ${JSON.stringify(id)} comes before it in this turn; post it in the turn that holds its call${PENDING_RESULT_HINT}`,
      );
    }
    seen.set(id, path);
    const { content, isError } = outputText(part.output);
    const held = ["type", "toolCallId"];
    if (part.toolName === call?.name) held.push("toolName");
    if (isPlainOutput(posted.output as Json)) held.push("output");
    const extras = extrasOf(posted, held);
    const response: ToolCallResponse = {
      type: "tool_call_response",
      timestamp: turn.timestamp,
      id,
      content,
      is_error: isError,
    };
    const own = opening ?? {};
    opening = undefined;
    turn.events.push(
      meta.write(response, { ...own, ...takeApprovals(turn), ...(extras && { part: extras }) }),
    );
  });
  // Responses no result of this message carries go back as a tool message of their own.
  const { parts: waiting } = turn.approvals;
  if (waiting.length > 0) {
    turn.approvals.messages.push({ ...original, content: waiting });
    turn.approvals.parts = [];
  }
}

function toEvents(value: unknown, { timestamp, dropSystem }: ToEventsOptions): ConvertedTurn {
  const { messages, dropped } = parsePostedTurn(value, dropSystem, POSTED_TURN);
  // Templates are taken from the posted objects, not zod's copies, which drop a `__proto__` key.
  const originals = value as Json[];
  const turn: TurnState = {
    timestamp,
    events: [{ type: "turn_start", timestamp }],
    calls: new Map(),
    answered: new Map(),
    carried: new Map(),
    leading: true,
    callEvents: new Map(),
    approvals: { messages: [], parts: [] },
  };
  let previous: string | undefined;
  messages.forEach((message, i) => {
    if (i < dropped) return;
    const original = originals[i] as Json;
    const at: MessagePath = [FIELD, i];
    const extras = extrasOf(original, ["role", "content"]);
    const first: AiSdkMetadata = extras ? { message: extras } : {};
    if (message.role === "user") {
      userEvents(message, { original, at, first }, turn);
    } else {
      // It follows a message of its role: it must come back apart.
      const opening = previous === message.role ? { ...first, split: true as const } : first;
      const posted: Posted = { original, at, first: opening };
      if (message.role === "assistant") assistantEvents(message, posted, turn);
      else toolEvents(message, posted, turn);
    }
    previous = message.role;
    if (message.role !== "tool") turn.leading = false;
  });
  // Responses no result took (the parts left at the end of a tool message became a message).
  if (turn.approvals.at !== undefined) {
    throw invalidMessage(
      turn.approvals.at,
      "no tool result follows this tool approval response in the turn: post it with the result of the call it approves or denies (the SDK's next step)",
    );
  }
  return { events: turn.events, droppedSystem: dropped };
}

// ---------------------------------------------------------------- fromView

const UserParts = z.array(AiSdkUserPart).min(1);
const MessageOptions = z.strictObject(options);

type MessageOptions = z.infer<typeof MessageOptions>;

type Draft =
  | { readonly role: "user"; readonly options: MessageOptions; parts: AiSdkUserPart[] }
  | {
      readonly role: "assistant";
      readonly options: MessageOptions;
      parts: AiSdkAssistantPart[];
      /** Its calls' approval requests, written after its parts. */
      approvals?: AiSdkToolApprovalRequest[];
    }
  | { readonly role: "tool"; readonly options: MessageOptions; parts: AiSdkToolPart[] };

/** The message fields stored on a first event, while it is not rewritten and they are valid. */
function messageOptions(stored: Json | undefined): MessageOptions {
  return valid(MessageOptions, stored?.message) ?? {};
}

function partWith<T>(schema: z.ZodType<T>, plain: T & Json, stored: Json | undefined): T {
  const extras = stored?.part;
  if (!isJsonObject(extras)) return plain;
  return valid(schema, { ...extras, ...plain }) ?? plain;
}

function responsePart(
  event: ChatResponse,
  stored: Json | undefined,
): AiSdkAssistantPart | undefined {
  if (event.reasoning !== undefined) {
    return partWith(AiSdkReasoningPart, { type: "reasoning", text: event.reasoning }, stored);
  }
  const text: unknown = event.message ?? JSON.stringify(event.data);
  if (typeof text !== "string") return undefined;
  return partWith(AiSdkTextPart, { type: "text", text }, stored);
}

function resultPart(
  event: ToolCallResponse,
  toolName: string,
  stored: Json | undefined,
): AiSdkToolResultPart {
  const plain: AiSdkToolResultPart = {
    type: "tool-result",
    toolCallId: event.id,
    toolName,
    output: plainOutput(event.content, event.is_error),
  };
  const extras = stored?.part;
  if (!isJsonObject(extras)) return plain;
  const candidate = valid(AiSdkToolResultPart, {
    ...plain,
    ...extras,
    type: "tool-result",
    toolCallId: event.id,
  });
  if (candidate === undefined) return plain;
  // The stored output goes back only while it still says what the event says.
  const said = outputText(candidate.output);
  if (said.content !== event.content || said.isError !== event.is_error) {
    candidate.output = plain.output;
  }
  return candidate;
}

function userPart(event: ChatRequest, stored: Json | undefined): AiSdkUserPart[] {
  const parts = valid(UserParts, stored?.content);
  if (parts && joinedText(parts) === event.content) return parts;
  return event.content === "" ? [] : [{ type: "text", text: event.content }];
}

/** A single plain text part goes out as a string (the common form); an empty one stays a part. */
function contentOf<P extends { type: string }>(parts: P[]): string | P[] {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only === undefined || !isPlainText(only)) return parts;
  // A plain text part's text is a string: every part written here is one our schemas take.
  return (only as unknown as AiSdkTextPart).text || parts;
}

function fromView(view: ProviderView): AiSdkMessage[] {
  const drafts: Draft[] = [];
  const verbatim = verbatimHosted(view, NAME, hostedUsable);
  // Each call id's latest tool name: a result's `toolName`.
  const names = new Map<string, string>();
  for (const turn of view) {
    // The message the turn's last event went into (none at a turn's start).
    let open: Draft | undefined;
    const draftFor = <R extends Draft["role"]>(
      role: R,
      event: ProviderEvent,
      stored: Json | undefined,
    ) => {
      if (open?.role !== role || meta.read(event)?.split === true) {
        open = { role, options: messageOptions(stored), parts: [] } as Draft;
        drafts.push(open);
      }
      return open as Extract<Draft, { role: R }>;
    };
    for (const viewEvent of turn.events) {
      const { event } = viewEvent;
      const stored = meta.stored(viewEvent);
      // Approval responses go right before the result that carries them, their messages first.
      for (const message of approvalMessages(event)) {
        open = { role: "tool", options: message.options, parts: message.parts };
        drafts.push(open);
      }
      if (hostedOf(event) !== undefined) {
        const draft = draftFor("assistant", event, stored);
        const part = hostedPart(viewEvent, verbatim);
        draft.parts.push(part);
        addApproval(draft, event, part);
        continue;
      }
      switch (event.type) {
        case "chat_request": {
          const parts = userPart(event, stored);
          open = undefined;
          if (parts.length > 0)
            drafts.push({ role: "user", options: messageOptions(stored), parts });
          break;
        }
        case "chat_response": {
          const part = responsePart(event, stored);
          if (part) draftFor("assistant", event, stored).parts.push(part);
          break;
        }
        case "tool_call_request": {
          names.set(event.id, event.name);
          const draft = draftFor("assistant", event, stored);
          const part = partWith(
            AiSdkToolCallPart,
            {
              type: "tool-call",
              toolCallId: event.id,
              toolName: event.name,
              input: event.arguments,
            },
            stored,
          );
          draft.parts.push(part);
          addApproval(draft, event, part);
          break;
        }
        case "tool_call_response": {
          const storedName = meta.read(event)?.part;
          const fallback =
            isJsonObject(storedName) && typeof storedName.toolName === "string"
              ? storedName.toolName
              : "unknown";
          const name = names.get(event.id) ?? fallback;
          const draft = draftFor("tool", event, stored);
          for (const part of approvalParts(event)) draft.parts.push(part);
          draft.parts.push(resultPart(event, name, stored));
          break;
        }
      }
    }
  }
  return drafts.map((draft): AiSdkMessage => {
    if (draft.role === "tool") return { role: "tool", content: draft.parts, ...draft.options };
    if (draft.role === "user") {
      return { role: "user", content: contentOf(draft.parts), ...draft.options };
    }
    const parts = [...draft.parts, ...(draft.approvals ?? [])];
    return { role: "assistant", content: contentOf(parts), ...draft.options };
  });
}

/** The AI SDK format (`messages`: the `ai` package's `ModelMessage[]`); see the module comment. */
export const aiSdk: ProviderFormat<AiSdkMessage> = {
  name: NAME,
  field: FIELD,
  messageSchema: AiSdkMessageSchema,
  toEvents,
  fromView,
  responseUsage: AiSdkResponseUsage,
};
