/**
 * Anthropic's server tools in the Messages format (docs/architecture.md §15
 * "Hosted tools"): an assistant's `server_tool_use` block and the result
 * blocks the API put after it (`web_search_tool_result`,
 * `web_fetch_tool_result`, `code_execution_tool_result`,
 * `bash_code_execution_tool_result`, `text_editor_code_execution_tool_result`,
 * `tool_search_tool_result`), as the SDK pinned types them.
 *
 * | block | JP event | `metadata["anthropic-messages"]` |
 * |---|---|---|
 * | `server_tool_use` | `tool_call_request {id, name, arguments: input}` (`{input}` when it is no object) | `hosted`: the block verbatim |
 * | `*_tool_result` | `tool_call_response {id: tool_use_id, content: its JSON text, is_error: content is a `*_error`}` | `hosted`: the block verbatim |
 *
 * Only what pairing needs is checked (`id`, `name`, `tool_use_id`, a
 * `content`); the rest is the API's and goes back as posted.
 */
import * as z from "zod";
import type { ToolCallRequest, ToolCallResponse } from "../events.ts";
import { hostedOf, hostedText, payloadText, verbatimHosted } from "./hosted.ts";
import type { MessagePath } from "./issues.ts";
import { formatMetadata, isJsonObject, type Json, refuseNonFinite, valid } from "./shared.ts";
import type { ProviderView, ViewEvent } from "./view.ts";

const NAME = "anthropic-messages";

/** The result block types of Anthropic's server tools. */
export const SERVER_RESULT_TYPES = [
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
] as const;

/** Every hosted block type: the server tool call and its results. */
export const HOSTED_BLOCK_TYPES: readonly string[] = ["server_tool_use", ...SERVER_RESULT_TYPES];

/** A server tool call, as far as the service reads it. */
export const ServerToolUseBlock = z.looseObject({
  type: z.literal("server_tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});

/** A server tool's result, as far as the service reads it. */
export const ServerToolResultBlock = z.looseObject({
  type: z.enum(SERVER_RESULT_TYPES),
  tool_use_id: z.string().min(1),
  content: z.unknown().refine((content) => content !== undefined, "a result needs its content"),
});

/** Either hosted block. */
export const HostedBlock = z.discriminatedUnion("type", [
  ServerToolUseBlock,
  ServerToolResultBlock,
]);

/** A hosted block. */
export type HostedBlock = z.infer<typeof HostedBlock>;

const meta = formatMetadata<{ hosted: Json }>(NAME);

/** The JP event of a hosted block; `original` is the block as posted, kept verbatim. */
export function hostedBlockEvent(
  block: HostedBlock,
  original: Json,
  timestamp: string,
  at: MessagePath,
): ToolCallRequest | ToolCallResponse {
  if (block.type === "server_tool_use") {
    const input = isJsonObject(block.input) ? block.input : { input: block.input };
    refuseNonFinite(input, [...at, "input"]);
    const request: ToolCallRequest = {
      type: "tool_call_request",
      timestamp,
      id: block.id,
      name: block.name,
      arguments: input,
    };
    return meta.write(request, { hosted: original });
  }
  const content = block.content;
  const failed =
    isJsonObject(content) && typeof content.type === "string" && content.type.endsWith("_error");
  const response: ToolCallResponse = {
    type: "tool_call_response",
    timestamp,
    id: block.tool_use_id,
    content: payloadText(content),
    is_error: failed,
  };
  return meta.write(response, { hosted: original });
}

/** A hosted event's stored block is still one the API takes for that event (never `true`: no block). */
function usableBlock(viewEvent: ViewEvent, hosted: Json | true): boolean {
  const block = valid(HostedBlock, hosted);
  if (block === undefined) return false;
  const event = viewEvent.event as ToolCallRequest | ToolCallResponse;
  const id = block.type === "server_tool_use" ? block.id : block.tool_use_id;
  const kind = block.type === "server_tool_use" ? "tool_call_request" : "tool_call_response";
  return id === event.id && kind === event.type;
}

/** How a view's hosted events are written in the Messages format. */
export interface HostedWriter {
  /** The block a view event is written as when it is hosted (its own block, or its text), else `undefined`. */
  blockOf(viewEvent: ViewEvent): Json | undefined;
}

/** The writer of `view`'s hosted events: verbatim while a call and its result are intact, else text. */
export function hostedWriter(view: ProviderView): HostedWriter {
  const verbatim = verbatimHosted(view, NAME, usableBlock);
  return {
    blockOf(viewEvent) {
      const hosted = hostedOf(viewEvent.event);
      if (hosted === undefined) return undefined;
      // Only this format's events with a usable block are verbatim: a block, never `true`.
      if (verbatim.has(viewEvent)) return hosted.hosted as Json;
      return {
        type: "text",
        text: hostedText(viewEvent.event as ToolCallRequest | ToolCallResponse),
      };
    },
  };
}
