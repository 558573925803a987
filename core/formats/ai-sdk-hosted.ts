/**
 * What the `ai-sdk` format (./ai-sdk.ts) shares between reading and writing
 * tool results, and its provider-executed tools (docs/architecture.md §15
 * "Hosted tools"): a `tool-call` with `providerExecuted: true` and an
 * assistant message's `tool-result`, carried verbatim under
 * `metadata["ai-sdk"].hosted`.
 */
import type { ToolCallRequest, ToolCallResponse } from "../events.ts";
import {
  type AiSdkAssistantPart,
  AiSdkToolCallPart,
  type AiSdkToolResultOutput,
  AiSdkToolResultPart,
} from "./ai-sdk.schema.ts";
import { hostedText } from "./hosted.ts";
import type { MessagePath } from "./issues.ts";
import {
  formatMetadata,
  isJsonObject,
  type Json,
  joinedText,
  refuseNonFinite,
  valid,
} from "./shared.ts";
import type { ViewEvent } from "./view.ts";

const meta = formatMetadata<Json>("ai-sdk");

/** A result's output as JP's `content` and `is_error`. */
export function outputText(output: AiSdkToolResultOutput): { content: string; isError: boolean } {
  switch (output.type) {
    case "text":
      return { content: output.value, isError: false };
    case "error-text":
      return { content: output.value, isError: true };
    case "json":
      return { content: JSON.stringify(output.value), isError: false };
    case "error-json":
      return { content: JSON.stringify(output.value), isError: true };
    case "execution-denied":
      return { content: output.reason ?? "execution denied", isError: true };
    case "content":
      return { content: joinedText(output.value), isError: false };
  }
}

/** The output a result event is written with when nothing else is kept. */
export function plainOutput(content: string, isError: boolean): AiSdkToolResultOutput {
  return { type: isError ? "error-text" : "text", value: content };
}

/**
 * The event of a provider-executed tool's call or result part (`posted`, kept
 * verbatim under `hosted`; `first` is the message's first-event metadata).
 */
export function hostedPartEvent(
  part: AiSdkToolCallPart | AiSdkToolResultPart,
  posted: Json,
  timestamp: string,
  path: MessagePath,
  first: object,
): ToolCallRequest | ToolCallResponse {
  if (part.type === "tool-call") {
    refuseNonFinite(part.input, [...path, "input"]);
    const request: ToolCallRequest = {
      type: "tool_call_request",
      timestamp,
      id: part.toolCallId,
      name: part.toolName,
      arguments: part.input,
    };
    return meta.write(request, { ...first, hosted: posted });
  }
  const { content, isError } = outputText(part.output);
  const response: ToolCallResponse = {
    type: "tool_call_response",
    timestamp,
    id: part.toolCallId,
    content,
    is_error: isError,
  };
  return meta.write(response, { ...first, hosted: posted });
}

/** The part a hosted view event is written as: its own while intact (`verbatim`), else its text. */
export function hostedPart(
  viewEvent: ViewEvent,
  verbatim: ReadonlySet<ViewEvent>,
): AiSdkAssistantPart {
  const event = viewEvent.event as ToolCallRequest | ToolCallResponse;
  const stored = meta.stored(viewEvent)?.hosted;
  if (verbatim.has(viewEvent) && isJsonObject(stored)) return stored as AiSdkAssistantPart;
  return { type: "text", text: hostedText(event) };
}

/** A stored hosted part is still this event's: the part it was posted as, same id. */
export function hostedUsable(viewEvent: ViewEvent, hosted: Json | true): boolean {
  const event = viewEvent.event as ToolCallRequest | ToolCallResponse;
  const part =
    event.type === "tool_call_request"
      ? valid(AiSdkToolCallPart, hosted)
      : valid(AiSdkToolResultPart, hosted);
  return part !== undefined && part.toolCallId === event.id;
}
