/**
 * The Anthropic Messages API format (docs/architecture.md §15): a turn posted as the
 * `messages` (`MessageParam[]`) the platform sends to `POST /v1/messages`,
 * and views read back as the same. Types and schemas are our own (core
 * imports no SDK); `test/formats/anthropic-types.test.ts` proves with `tsc`
 * that what {@link anthropicMessages}`.fromView` returns is assignable to the
 * SDK's `MessageParam[]` without a cast.
 *
 * | Messages API | JP event | `metadata["anthropic-messages"]` |
 * |---|---|---|
 * | user `content` string | `chat_request {content}` | – |
 * | user text/image/document/search_result/container_upload blocks (one message) | one `chat_request`, texts joined `\n` (a search result's text blocks count as text) | `content`: the blocks verbatim, unless they are a single plain text block |
 * | user `tool_result` | `tool_call_response {id: tool_use_id, content, is_error}` (content: the string, or its text and search result texts joined `\n`) | `block`: `type`, `cache_control`, `toolset_name`, `content` when it was an array |
 * | assistant `content` string, `text` | `chat_response {message}` | `block`: `type`, `cache_control`, `citations` (when present) |
 * | assistant `thinking` | `chat_response {reasoning: thinking}` | `block`: `{type: "thinking", signature}` |
 * | assistant `redacted_thinking` | `chat_response {reasoning: ""}` (counts 0 in the estimate) | `block`: `{type: "redacted_thinking", data}` |
 * | assistant `tool_use` | `tool_call_request {id, name, arguments: input}` | `block`: `type`, `cache_control`, `caller`, `toolset_name` (when present) |
 * | assistant `server_tool_use`, `*_tool_result` | `tool_call_request`, `tool_call_response` (./anthropic-hosted.ts) | `hosted`: the block verbatim |
 *
 * `block` holds every field of the block the event has no place for (and its
 * `type`), so an event that is not rewritten by a compaction re-emits its
 * block exactly. Metadata is re-validated with the block schemas on the way
 * out: metadata posted by hand as JP events can never make an invalid body.
 *
 * Refused when posted (400 unless said): an empty array or content, an empty
 * text block, a role other than user/assistant, a `system` message (422; with
 * `dropSystem` the leading ones are dropped), a block type the service does
 * not model (422: types newer than the SDK; server tools are
 * carried verbatim, ./anthropic-hosted.ts), a
 * thinking block without its `signature` (the API wants it back), a
 * `tool_use` whose `input` is not an object, a duplicate `tool_use` id in the
 * turn, a `tool_result` that is not first in its user message (the API's
 * rule, so a body that breaks it could not come back valid), a `tool_result`
 * that does not answer a call of the assistant message right before it (but
 * in the turn's first user message, whose leading results answer the calls
 * the previous turn left pending), and a `tool_use` left without a result in
 * the user message after it, unless nothing but results follows it in the
 * turn (it is pending: the next turn begins with its result,
 * docs/architecture.md §5 "Tool pairs"). Unknown keys
 * on a message or block are refused too: the API refuses them as well, and
 * the service would not keep them.
 *
 * Written out, a view is always a valid request body: each event appends to
 * the last message when it has the same role (so roles alternate, a message
 * left empty by a compaction never exists, and its neighbours merge), tool
 * results go first in their user message, and a single plain text block is
 * written as a string. `chat_response.data` becomes its JSON text. Left out:
 * reasoning without our thinking metadata (posted as JP events: the API
 * refuses an unsigned thinking block), and empty texts and requests (the API
 * refuses empty text blocks). Streams posted as JP events need not pair their
 * calls like the API: there a tool result without its call right before
 * becomes a text block, a call without a result (other than in the last
 * message) gets an error result `[no result recorded]`, and a view that
 * would start with the assistant opens with a user message
 * `[conversation continues]`. Round trips are exact up to §15's
 * normalizations: a string vs a single text block, adjacent same-role
 * messages merged, `is_error: false` and an empty tool result `content` as
 * absent.
 */
import * as z from "zod";
import type {
  ChatRequest,
  ChatResponse,
  Entry,
  ToolCallRequest,
  ToolCallResponse,
} from "../events.ts";
import { hostedBlockEvent, hostedWriter } from "./anthropic-hosted.ts";
import {
  type AnthropicMessage,
  AnthropicMessageSchema,
  type AssistantBlock,
  LocatedMessage,
  RedactedThinkingBlock,
  refuseUnmodelled,
  type SearchResultBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolResultPart,
  ToolUseBlock,
  type UserBlock,
  UserContentBlock,
} from "./anthropic-messages.schema.ts";
import type { ConvertedTurn, ProviderFormat, ToEventsOptions } from "./format.ts";
import { describePath, invalidMessage, type MessagePath } from "./issues.ts";
import {
  dropSystemHint,
  extrasOf,
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
import { AnthropicResponseUsage } from "./usage.ts";
import type { ProviderView, ViewEvent } from "./view.ts";

const NAME = "anthropic-messages";
const FIELD = "messages";

/** What an event carries under `metadata["anthropic-messages"]` (see the module table). */
export interface AnthropicMetadata {
  /** On a `chat_request`: the user message's blocks other than tool results, verbatim. */
  readonly content?: unknown;
  /** On other events: the block's `type` and every field the event has no place for. */
  readonly block?: Record<string, unknown>;
}

// ---------------------------------------------------------------- toEvents

/** A message as posted turns are parsed: assistant content may hold hosted blocks. */
type PostedMessage = z.infer<typeof LocatedMessage>;

const POSTED_TURN: PostedTurn<PostedMessage> = {
  field: FIELD,
  schema: turnOf(LocatedMessage),
  refusal: dropSystemHint(
    "system prompts are not conversation turns: send yours with each call (the Messages API's `system` parameter), " +
      "and give model.context_window net of it if it is large",
  ),
  refuseUnmodelled,
};

/** The block's fields the event has no place for, with its `type`; `undefined` when only `type` remains. */
function blockExtras(block: Json, held: readonly string[]): Json | undefined {
  return extrasOf(block, held, 2);
}

/**
 * The text of content blocks: text blocks, and the text blocks of search
 * results (a search result read in another format is its text).
 */
function blocksText(content: string | readonly { type: string; text?: unknown }[]): string {
  if (typeof content === "string") return content;
  const flat = content.flatMap((block) =>
    block.type === "search_result" ? (block as SearchResultBlock).content : [block],
  );
  return joinedText(flat);
}

/** What our events carry under `metadata["anthropic-messages"]`. */
const meta = formatMetadata<AnthropicMetadata>(NAME);

/**
 * The pairing state of one turn. The API merges adjacent same-role messages,
 * so its rules hold per run of them: a user run answers the tool calls of
 * the assistant run right before it, tool results first.
 */
class Pairing {
  /** Every tool_use id of the turn → where it is (ids are unique within a turn). */
  private readonly calls = new Map<string, MessagePath>();
  /** Every answered id → where its result is. */
  private readonly answered = new Map<string, MessagePath>();
  /** The unanswered calls of the assistant run before the current user run. */
  private open = new Map<string, MessagePath>();
  /** The calls of the current assistant run. */
  private current = new Map<string, MessagePath>();
  private role: "user" | "assistant" | undefined;
  /** The current (or, in an assistant run, the last) user run holds a block other than a tool result. */
  // Stryker disable next-line BooleanLiteral: entering a user run sets it before result() reads it; read unset only by finish() after a turn without a user run, when no call is open
  private contentSeen = false;
  /** Results for the previous turn's pending calls, apart: their ids may be called again in this turn. */
  private readonly carried = new Map<string, MessagePath>();
  /** No assistant run yet: results answer the previous turn's pending calls. */
  private leading = true;

  enter(role: "user" | "assistant"): void {
    if (role === this.role) return;
    if (role === "user") {
      this.open = this.current;
      this.contentSeen = false;
    } else {
      this.checkAnswered();
      this.leading = false;
    }
    this.current = new Map();
    this.role = role;
  }

  call(id: string, path: MessagePath): void {
    const first = this.calls.get(id);
    if (first !== undefined) {
      throw invalidMessage(
        path,
        `tool_use id "${id}" is already used by ${describePath(first)}: tool call ids must be unique within a turn`,
      );
    }
    this.calls.set(id, path);
    this.current.set(id, path);
  }

  result(id: string, path: MessagePath): void {
    if (this.contentSeen) {
      throw invalidMessage(
        path,
        "tool_result blocks must come first in their user message, before any other content " +
          "(the API's rule; adjacent user messages count as one)",
      );
    }
    if (this.open.delete(id)) {
      this.answered.set(id, path);
      return;
    }
    const answer = this.answered.get(id);
    if (answer !== undefined) {
      throw invalidMessage(path, `tool_use "${id}" is already answered by ${describePath(answer)}`);
    }
    if (this.leading) {
      const first = this.carried.get(id);
      if (first !== undefined) {
        throw invalidMessage(
          path,
          `tool_use "${id}" is already answered by ${describePath(first)}`,
        );
      }
      this.carried.set(id, path);
      return;
    }
    // Every other call of the turn was answered or refused when its user
    // run ended, so this one answers no call of the turn.
    throw invalidMessage(
      path,
      `tool_result for "${id}" has no tool_use earlier in this turn: post it in the turn that holds its call${PENDING_RESULT_HINT}`,
    );
  }

  content(): void {
    this.contentSeen = true;
  }

  /**
   * At the end of the turn: the last assistant run's calls may stay
   * unanswered, pending, when nothing but results follows them (the next
   * turn begins with their results). A turn that ends with an assistant
   * run has nothing left to check: the run before it was checked on entering it.
   */
  finish(): void {
    if (this.contentSeen) this.checkAnswered();
  }

  private checkAnswered(): void {
    for (const [id, path] of this.open) {
      throw invalidMessage(
        path,
        `tool_use "${id}" has no tool_result in the user message right after it: ` +
          "post its result there, or end the turn with the call (the next turn then begins with its result)",
      );
    }
  }
}

/** The turn being converted: its timestamp, its pairing state and its events so far. */
interface TurnState {
  readonly timestamp: string;
  readonly pairing: Pairing;
  readonly events: Entry[];
}

function userEvents(
  message: Extract<PostedMessage, { role: "user" }>,
  original: Json,
  path: MessagePath,
  { timestamp, pairing, events: out }: TurnState,
): void {
  // Kept blocks are the posted objects, not zod's copies (which reorder keys): they go back byte for byte.
  const posted = original.content as Json[];
  if (typeof message.content === "string") {
    pairing.content();
    out.push({ type: "chat_request", timestamp, content: message.content });
    return;
  }
  const others: UserContentBlock[] = [];
  message.content.forEach((block, j) => {
    if (block.type !== "tool_result") {
      pairing.content();
      others.push(posted[j] as UserContentBlock);
      return;
    }
    pairing.result(block.tool_use_id, [...path, "content", j]);
    const content = ((posted[j] as Json).content as typeof block.content) ?? "";
    const extras = blockExtras(block, ["tool_use_id", "is_error", "content"]);
    const keep = Array.isArray(content) ? { ...(extras ?? { type: block.type }), content } : extras;
    const response: ToolCallResponse = {
      type: "tool_call_response",
      timestamp,
      id: block.tool_use_id,
      content: blocksText(content),
      is_error: block.is_error ?? false,
    };
    out.push(meta.write(response, keep && { block: keep }));
  });
  if (others.length === 0) return;
  const request: ChatRequest = { type: "chat_request", timestamp, content: blocksText(others) };
  const single = singleText(others) !== undefined;
  out.push(meta.write(request, single ? undefined : { content: others }));
}

function assistantEvents(
  message: Extract<PostedMessage, { role: "assistant" }>,
  original: Json,
  path: MessagePath,
  { timestamp, pairing, events: out }: TurnState,
): void {
  if (typeof message.content === "string") {
    out.push({ type: "chat_response", timestamp, message: message.content });
    return;
  }
  message.content.forEach((block, j) => {
    switch (block.type) {
      case "text": {
        const response: ChatResponse = { type: "chat_response", timestamp, message: block.text };
        const extras = blockExtras(block, ["text"]);
        out.push(meta.write(response, extras && { block: extras }));
        return;
      }
      case "thinking":
      case "redacted_thinking": {
        const reasoning = block.type === "thinking" ? block.thinking : "";
        const response: ChatResponse = { type: "chat_response", timestamp, reasoning };
        out.push(meta.write(response, { block: blockExtras(block, ["thinking"]) ?? {} }));
        return;
      }
      case "tool_use": {
        pairing.call(block.id, [...path, "content", j]);
        refuseNonFinite(block.input, [...path, "content", j, "input"]);
        const request: ToolCallRequest = {
          type: "tool_call_request",
          timestamp,
          id: block.id,
          name: block.name,
          arguments: block.input,
        };
        const extras = blockExtras(block, ["id", "name", "input"]);
        out.push(meta.write(request, extras && { block: extras }));
        return;
      }
      default: {
        // A server tool's call or result: carried verbatim (the posted object, not zod's copy).
        const posted = (original.content as Json[])[j] as Json;
        out.push(hostedBlockEvent(block, posted, timestamp, [...path, "content", j]));
        return;
      }
    }
  });
}

function toEvents(value: unknown, { timestamp, dropSystem }: ToEventsOptions): ConvertedTurn {
  const { messages, dropped } = parsePostedTurn(value, dropSystem, POSTED_TURN);
  const turn: TurnState = {
    timestamp,
    pairing: new Pairing(),
    events: [{ type: "turn_start", timestamp }],
  };
  messages.forEach((message, i) => {
    if (i < dropped) return;
    turn.pairing.enter(message.role);
    if (message.role === "user")
      userEvents(message, (value as Json[])[i] as Json, [FIELD, i], turn);
    else assistantEvents(message, (value as Json[])[i] as Json, [FIELD, i], turn);
  });
  turn.pairing.finish();
  return { events: turn.events, droppedSystem: dropped };
}

// ---------------------------------------------------------------- fromView

/** A tool result on its way out, with the text an orphan is turned into. */
interface Answer {
  readonly block: ToolResultBlock;
  readonly text: string;
}

type Draft =
  | { readonly role: "user"; results: Answer[]; blocks: UserContentBlock[] }
  | { readonly role: "assistant"; blocks: AssistantBlock[] };

/** The result given to a call that has none (streams posted as JP events only). */
const NO_RESULT = "[no result recorded]";
/** The user message put before a view that would start with the assistant. */
const OPENING = "[conversation continues]";

/** The event's own metadata under our name, unless the projection rewrote the event. */
function metadataOf(viewEvent: ViewEvent): AnthropicMetadata | undefined {
  const stored = meta.stored(viewEvent);
  if (stored === undefined) return undefined;
  return {
    content: stored.content,
    block: isJsonObject(stored.block) ? stored.block : undefined,
  };
}

const Parts = z.array(UserContentBlock);
const ResultParts = z.array(ToolResultPart);

function requestBlocks(event: ChatRequest, metadata: AnthropicMetadata | undefined) {
  const stored = valid(Parts, metadata?.content);
  // Re-emitted only while the blocks still spell the event's content.
  // The stored objects themselves, not zod's copies (which reorder keys): byte for byte.
  if (stored && blocksText(stored) === event.content) {
    return metadata?.content as UserContentBlock[];
  }
  // An empty request (posted as JP events) would be an empty text block, which the API refuses.
  return event.content === "" ? [] : [{ type: "text" as const, text: event.content }];
}

function responseBlock(
  event: ChatResponse,
  metadata: AnthropicMetadata | undefined,
): AssistantBlock | undefined {
  const block = metadata?.block;
  if (event.reasoning !== undefined) {
    // Reasoning without our signature (posted as JP events, say) cannot be a
    // thinking block: the API refuses unsigned ones. It is left out.
    if (block?.type === "thinking") {
      return valid(ThinkingBlock, { ...block, type: "thinking", thinking: event.reasoning });
    }
    if (block?.type === "redacted_thinking" && event.reasoning === "") {
      return valid(RedactedThinkingBlock, { ...block, type: "redacted_thinking" });
    }
    return undefined;
  }
  const text: unknown = event.message ?? JSON.stringify(event.data);
  if (typeof text !== "string" || text === "") return undefined; // the API refuses empty text blocks
  const plain = { type: "text" as const, text };
  return (block?.type === "text" && valid(TextBlock, { ...block, ...plain })) || plain;
}

function callBlock(event: ToolCallRequest, metadata: AnthropicMetadata | undefined): ToolUseBlock {
  const plain = {
    type: "tool_use" as const,
    id: event.id,
    name: event.name,
    input: event.arguments,
  };
  const block = metadata?.block;
  return (block?.type === "tool_use" && valid(ToolUseBlock, { ...block, ...plain })) || plain;
}

function resultBlock(
  event: ToolCallResponse,
  metadata: AnthropicMetadata | undefined,
): ToolResultBlock {
  const plain: ToolResultBlock = { type: "tool_result", tool_use_id: event.id };
  if (event.content !== "") plain.content = event.content;
  if (event.is_error) plain.is_error = true;
  const block = metadata?.block;
  if (block?.type !== "tool_result") return plain;
  const parts = valid(ResultParts, block.content);
  // Parts are re-emitted only while they still spell the event's content.
  // Plain first: its keys lead, as the API documents and platforms post them.
  const candidate = { ...plain, ...block, ...plain };
  if (parts && blocksText(parts) === event.content)
    candidate.content = block.content as typeof parts;
  else if (plain.content === undefined) delete candidate.content;
  // The event is the truth for what it holds, whatever metadata says.
  if (plain.is_error === undefined) delete candidate.is_error;
  return ToolResultBlock.safeParse(candidate).success ? (candidate as ToolResultBlock) : plain;
}

// Each push appends to the last message when it has the same role (the API
// merges adjacent same-role messages anyway): roles alternate by construction,
// and a message only exists once it holds a block.
function userDraft(drafts: Draft[]): Extract<Draft, { role: "user" }> {
  const last = drafts.at(-1);
  if (last?.role === "user") return last;
  const draft: Draft = { role: "user", results: [], blocks: [] };
  drafts.push(draft);
  return draft;
}

function assistantDraft(drafts: Draft[]): Extract<Draft, { role: "assistant" }> {
  const last = drafts.at(-1);
  if (last?.role === "assistant") return last;
  const draft: Draft = { role: "assistant", blocks: [] };
  drafts.push(draft);
  return draft;
}

/**
 * Pairs each user message's tool results with the calls of the assistant
 * message right before it. Posted turns always pair; streams posted as JP
 * events may not: a result without its call becomes a text block, and a call
 * without a result (not in the last message) gets an error result, so the
 * body stays valid.
 */
function pair(drafts: Draft[]): void {
  drafts.forEach((draft, i) => {
    if (draft.role !== "user") return;
    const previous = drafts[i - 1];
    const open = new Map<string, boolean>();
    if (previous?.role === "assistant") {
      for (const block of previous.blocks) if (block.type === "tool_use") open.set(block.id, false);
    }
    const kept: Answer[] = [];
    const orphans: TextBlock[] = [];
    for (const answer of draft.results) {
      const id = answer.block.tool_use_id;
      if (open.get(id) === false) {
        open.set(id, true);
        kept.push(answer);
      } else {
        const status = answer.block.is_error ? " (error)" : "";
        orphans.push({ type: "text", text: `[tool result ${id}${status}] ${answer.text}` });
      }
    }
    for (const [id, answered] of open) {
      if (!answered) {
        const block: ToolResultBlock = {
          type: "tool_result",
          tool_use_id: id,
          content: NO_RESULT,
          is_error: true,
        };
        kept.push({ block, text: NO_RESULT });
      }
    }
    draft.results = kept;
    draft.blocks = [...orphans, ...draft.blocks];
  });
}

/** The text of a single plain text block, which goes out as a string (the common form). */
function singleText(blocks: readonly (UserBlock | AssistantBlock)[]): string | undefined {
  const only = blocks.length === 1 ? blocks[0] : undefined;
  return only?.type === "text" && isPlainText(only) ? only.text : undefined;
}

function fromView(view: ProviderView): AnthropicMessage[] {
  const drafts: Draft[] = [];
  const hosted = hostedWriter(view);
  for (const turn of view) {
    for (const viewEvent of turn.events) {
      const { event } = viewEvent;
      const hostedBlock = hosted.blockOf(viewEvent);
      if (hostedBlock !== undefined) {
        // Verbatim (valid as posted, re-checked by HostedBlock), or a text block: either is the assistant's.
        assistantDraft(drafts).blocks.push(hostedBlock as AssistantBlock);
        continue;
      }
      const metadata = metadataOf(viewEvent);
      switch (event.type) {
        case "chat_request": {
          const blocks = requestBlocks(event, metadata);
          if (blocks.length > 0) {
            const draft = userDraft(drafts);
            // A loop, not push(...blocks): a spread of a huge array overflows the stack.
            for (const block of blocks) draft.blocks.push(block);
          }
          break;
        }
        case "chat_response": {
          const block = responseBlock(event, metadata);
          if (block) assistantDraft(drafts).blocks.push(block);
          break;
        }
        case "tool_call_request":
          assistantDraft(drafts).blocks.push(callBlock(event, metadata));
          break;
        case "tool_call_response":
          userDraft(drafts).results.push({
            block: resultBlock(event, metadata),
            text: event.content,
          });
          break;
      }
    }
  }
  pair(drafts);
  // The API wants a user message first; only streams posted as JP events, or
  // a first turn posted from an assistant message, start otherwise.
  if (drafts[0]?.role === "assistant") {
    drafts.unshift({ role: "user", results: [], blocks: [{ type: "text", text: OPENING }] });
  }
  return drafts.map((draft): AnthropicMessage => {
    if (draft.role === "user") {
      const blocks: UserBlock[] = [...draft.results.map((answer) => answer.block), ...draft.blocks];
      return { role: "user", content: singleText(blocks) ?? blocks };
    }
    return { role: "assistant", content: singleText(draft.blocks) ?? draft.blocks };
  });
}

/** The Anthropic Messages API format (`messages`: `MessageParam[]`); see the module comment. */
export const anthropicMessages: ProviderFormat<AnthropicMessage> = {
  name: NAME,
  field: FIELD,
  messageSchema: AnthropicMessageSchema,
  toEvents,
  fromView,
  responseUsage: AnthropicResponseUsage,
};
