/**
 * Hosted tools (docs/architecture.md §15 "Hosted tools"): the tool calls a
 * provider runs itself, or items of its own tools (Anthropic
 * `server_tool_use` and its `*_tool_result` blocks, Responses
 * `web_search_call`, `computer_call`, `mcp_*`, …, AI SDK provider-executed
 * calls). Each becomes ordinary JP tool events, so estimates count it and tool
 * policies apply, and carries the posted item verbatim under
 * `metadata[<format>].hosted`. This module holds what every format shares:
 * where the verbatim item is, which of a view's hosted calls go back verbatim
 * in their own format, and the text every other case is written as.
 */
import type { ToolCallRequest, ToolCallResponse } from "../events.ts";
import { isJsonObject, type Json } from "./shared.ts";
import type { ProviderEvent, ProviderView, ViewEvent, ViewTurn } from "./view.ts";

/** What a hosted event carries under `metadata[<format>]`. */
export interface HostedMetadata {
  /**
   * The posted item or block, verbatim; `true` on the result event of an
   * item that holds its call and its result both (the item rides on the call).
   */
  readonly hosted: Json | true;
}

/** A hosted event's format and what it carries. */
export interface Hosted {
  /** The format the item was posted in (its key in `metadata`). */
  readonly format: string;
  readonly hosted: Json | true;
}

/** The hosted item an event carries, in whichever format it was posted; `undefined` for any other event. */
export function hostedOf(event: ProviderEvent): Hosted | undefined {
  if (event.type !== "tool_call_request" && event.type !== "tool_call_response") return undefined;
  for (const [format, own] of Object.entries(event.metadata ?? {})) {
    if (!isJsonObject(own)) continue;
    const { hosted } = own;
    if (hosted === true || isJsonObject(hosted)) return { format, hosted };
  }
  return undefined;
}

/**
 * The hosted events of `format` in `view` that go back verbatim: those of a
 * call and its result (a call starts a pair, its id's results join it, in
 * this turn or the next: ids may repeat in later turns) when every event of
 * the pair is `usable` (its stored item valid, its turn fit for it) and none
 * was rewritten by a compaction (a stripped call or result has lost its
 * payload, and half a pair would make an invalid body). The others are
 * written as {@link hostedText}, call and result alike.
 */
export function verbatimHosted(
  view: ProviderView,
  format: string,
  usable: (viewEvent: ViewEvent, hosted: Json | true, turn: ViewTurn) => boolean,
): Set<ViewEvent> {
  // Stryker disable next-line ArrayDeclaration: a stray element has no intact flag, so the filter below drops it
  const pairs: { events: ViewEvent[]; intact: boolean }[] = [];
  const open = new Map<string, { events: ViewEvent[]; intact: boolean }>();
  for (const turn of view) {
    for (const viewEvent of turn.events) {
      const hosted = hostedOf(viewEvent.event);
      if (hosted === undefined || hosted.format !== format) continue;
      const { id, type } = viewEvent.event as ToolCallRequest | ToolCallResponse;
      let pair = type === "tool_call_request" ? undefined : open.get(id);
      if (pair === undefined) {
        pair = { events: [], intact: true };
        pairs.push(pair);
        open.set(id, pair);
      }
      pair.events.push(viewEvent);
      if (viewEvent.rewritten || !usable(viewEvent, hosted.hosted, turn)) pair.intact = false;
    }
  }
  return new Set(pairs.filter((pair) => pair.intact).flatMap((pair) => pair.events));
}

/**
 * The assistant text a hosted event is written as in another format, or in
 * its own once it cannot go back verbatim (docs/architecture.md §15): the
 * call's name, id and arguments, the result's id and content (a stripped
 * one's placeholder).
 *
 * @example
 * hostedText({ type: "tool_call_request", id: "srvtoolu_1", name: "web_search", arguments: { query: "x" }, … })
 * // '[hosted tool call web_search srvtoolu_1] {"query":"x"}'
 */
export function hostedText(event: ToolCallRequest | ToolCallResponse): string {
  if (event.type === "tool_call_request") {
    return `[hosted tool call ${event.name} ${event.id}] ${JSON.stringify(event.arguments)}`;
  }
  const head = `[hosted tool result ${event.id}${event.is_error ? " (error)" : ""}]`;
  return event.content === "" ? head : `${head} ${event.content}`;
}

/** The text of a hosted payload: a string as it is, anything else its JSON text, nothing as `""`. */
export function payloadText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
