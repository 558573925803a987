/**
 * AI SDK tool approvals (the `ai-sdk` format, ./ai-sdk.ts; docs/architecture.md
 * §5 "Tool pairs"): a `tool-approval-request` rides on its call's
 * `tool_call_request`, the `tool-approval-response` parts on the turn's next
 * `tool_call_response`, under `metadata["ai-sdk"]`. So they go where their
 * call and result go under compaction, and other formats, which have no
 * approvals, see the call and its result only.
 */
import * as z from "zod";
import type { ToolCallRequest } from "../events.ts";
import {
  type AiSdkAssistantPart,
  AiSdkToolApprovalRequest,
  AiSdkToolApprovalResponse,
  options,
} from "./ai-sdk.schema.ts";
import { invalidMessage, type MessagePath } from "./issues.ts";
import { formatMetadata, isJsonObject, type Json, valid } from "./shared.ts";
import type { ProviderEvent } from "./view.ts";

const NAME = "ai-sdk";
const meta = formatMetadata<Json>(NAME);

/** Approval responses carried by the result after them (`metadata["ai-sdk"].approvals`). */
export interface Approvals {
  /** Whole tool messages of approval responses, before the result's message. */
  readonly messages?: readonly Record<string, unknown>[];
  /** Approval response parts in the result's own message, before it. */
  readonly parts?: readonly Record<string, unknown>[];
}

/** The responses of a turn being converted that no result has carried yet, and where the first is. */
export interface WaitingApprovals {
  messages: Json[];
  parts: Json[];
  at?: MessagePath;
}

/** What converting a turn keeps for approvals. */
interface ApprovalState {
  readonly callEvents: ReadonlyMap<string, ToolCallRequest>;
  approvals: WaitingApprovals;
}

/** Puts `part` on the event of the call it asks approval for: a 400 when no call of the turn is its. */
export function attachApproval(
  part: Json & { toolCallId: string },
  path: MessagePath,
  turn: ApprovalState,
): void {
  const call = turn.callEvents.get(part.toolCallId);
  if (call === undefined) {
    throw invalidMessage(
      [...path, "toolCallId"],
      `no tool call ${JSON.stringify(part.toolCallId)} comes before this approval request in the turn: post it after its call`,
    );
  }
  const own = meta.read(call) ?? {};
  if (own.approval !== undefined) {
    throw invalidMessage(
      [...path, "toolCallId"],
      `tool call ${JSON.stringify(part.toolCallId)} already has an approval request`,
    );
  }
  call.metadata = { ...call.metadata, [NAME]: { ...own, approval: part } };
}

/** The approval responses waiting for a result, as its metadata (none: `{}`), and no longer waiting. */
export function takeApprovals(turn: ApprovalState): { approvals?: Approvals } {
  const { messages, parts } = turn.approvals;
  if (messages.length === 0 && parts.length === 0) return {};
  turn.approvals = { messages: [], parts: [] };
  return {
    approvals: { ...(messages.length > 0 && { messages }), ...(parts.length > 0 && { parts }) },
  };
}

/** A tool message of approval responses only, as stored on the result after it. */
const ApprovalMessage = z.strictObject({
  role: z.literal("tool"),
  content: z.array(AiSdkToolApprovalResponse).min(1),
  ...options,
});
const ApprovalParts = z.array(AiSdkToolApprovalResponse);

function carried(event: ProviderEvent): Json | undefined {
  if (event.type !== "tool_call_response") return undefined;
  const approvals = meta.read(event)?.approvals;
  return isJsonObject(approvals) ? approvals : undefined;
}

/** The whole tool messages of approval responses a result carries (valid ones), to write before its message. */
export function approvalMessages(
  event: ProviderEvent,
): { options: z.infer<z.ZodObject<typeof options>>; parts: AiSdkToolApprovalResponse[] }[] {
  const messages = carried(event)?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((message) => {
    const parsed = valid(ApprovalMessage, message);
    if (parsed === undefined) return [];
    const { role: _role, content, ...rest } = parsed;
    return [{ options: rest, parts: content }];
  });
}

/** The approval response parts a result carries from its own message, to write right before it. */
export function approvalParts(event: ProviderEvent): AiSdkToolApprovalResponse[] {
  return valid(ApprovalParts, carried(event)?.parts) ?? [];
}

/**
 * Adds the approval request stored on `event` to `draft` when the call went
 * out as a `tool-call` part (not as hosted text) and the request is still its.
 */
export function addApproval(
  draft: { approvals?: AiSdkToolApprovalRequest[] },
  event: ProviderEvent,
  part: AiSdkAssistantPart,
): void {
  const request = valid(AiSdkToolApprovalRequest, meta.read(event)?.approval);
  if (part.type !== "tool-call" || request?.toolCallId !== part.toolCallId) return;
  draft.approvals ??= [];
  draft.approvals.push(request);
}
