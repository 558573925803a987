/** AI SDK message parts for the format's tests: a tool approval's request and its response. */

/** A `tool-approval-request` part: the approval `approvalId` asked for call `toolCallId`. */
export const approvalRequest = (approvalId: string, toolCallId: string) => ({
  type: "tool-approval-request",
  approvalId,
  toolCallId,
});

/** A `tool-approval-response` part: the answer to approval `approvalId`. */
export const approvalResponse = (approvalId: string, approved: boolean) => ({
  type: "tool-approval-response",
  approvalId,
  approved,
});
