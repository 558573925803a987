/**
 * The providers' tool-pairing rules for a request's messages, as checkers
 * independent of core/formats and core/projection: property tests run every
 * projected view through them (docs/architecture.md §5 "Tool pairs", §15).
 * Each returns every rule the request breaks, one line each (none: valid).
 *
 * The rules, the same in the three OpenAI-style shapes: a call id is used
 * once in the request; a result answers a call made before it, once; no
 * other message or item comes between a call and its result, except that
 * the calls still unanswered at the very end are pending (the platform is
 * about to append their results), and not even those in a request sent to
 * the model (`{complete: true}`: the stub model servers' check). Anthropic's own rules (role alternation,
 * tool_result blocks first in the user message right after the assistant's
 * tool_use) are test/helpers/anthropic-rules.ts.
 */

type Json = Record<string, unknown>;

/** Tracks calls awaiting results across one request. */
class Calls {
  readonly violations: string[] = [];
  private readonly seen = new Set<string>();
  private readonly waiting = new Map<string, string>();
  private readonly answered = new Set<string>();

  call(id: string, where: string): void {
    if (this.seen.has(id)) this.violations.push(`${where}: call id ${id} used twice`);
    this.seen.add(id);
    this.waiting.set(id, where);
  }

  result(id: string, where: string): void {
    if (this.answered.has(id)) this.violations.push(`${where}: a second result for ${id}`);
    else if (!this.waiting.has(id))
      this.violations.push(`${where}: result ${id} has no call before it`);
    this.waiting.delete(id);
    this.answered.add(id);
  }

  /** Something other than a call or a result: every call so far must be answered. */
  other(where: string): void {
    for (const [id, at] of this.waiting) {
      this.violations.push(`${at}: call ${id} unanswered before ${where}`);
    }
    this.waiting.clear();
  }
}

/** Whether calls may be left pending at the end: a view may, a request sent to the model may not. */
export interface PairOptions {
  readonly complete?: boolean;
}

/** Chat Completions `messages`: assistant `tool_calls`, then one `tool` message per call. */
export function chatPairViolations(messages: readonly Json[], options: PairOptions = {}): string[] {
  const calls = new Calls();
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    if (message.role === "tool") {
      calls.result(String(message.tool_call_id), where);
      return;
    }
    calls.other(where);
    const toolCalls = (message.tool_calls ?? []) as Json[];
    toolCalls.forEach((call, j) => {
      calls.call(String(call.id), `${where}.tool_calls[${j}]`);
    });
  });
  if (options.complete) calls.other("the end of the request");
  return calls.violations;
}

/** Responses call items the platform answers with an output item, and that output's type. */
const RESPONSES_OUTPUTS: Readonly<Record<string, string>> = {
  function_call: "function_call_output",
  computer_call: "computer_call_output",
  local_shell_call: "local_shell_call_output",
  shell_call: "shell_call_output",
  apply_patch_call: "apply_patch_call_output",
  custom_tool_call: "custom_tool_call_output",
  mcp_approval_request: "mcp_approval_response",
};
const RESPONSES_RESULTS = new Set(Object.values(RESPONSES_OUTPUTS));

/** The id a Responses call or output item pairs by. */
function responsesCallId(item: Json): string {
  if (item.type === "mcp_approval_request") return String(item.id);
  if (item.type === "mcp_approval_response") return String(item.approval_request_id);
  return String(item.call_id ?? item.id);
}

/**
 * Responses `input`: `function_call` items and their `function_call_output`s,
 * by `call_id`, and so the client-run built-in tools (computer, shells,
 * apply_patch, custom tools) and MCP approval requests and their responses.
 * An item that holds its call and result both (`web_search_call`, …) is
 * any other item.
 */
export function responsesPairViolations(
  input: readonly Json[],
  options: PairOptions = {},
): string[] {
  const calls = new Calls();
  input.forEach((item, i) => {
    const where = `input[${i}]`;
    const type = String(item.type);
    if (Object.hasOwn(RESPONSES_OUTPUTS, type)) calls.call(responsesCallId(item), where);
    else if (RESPONSES_RESULTS.has(type)) calls.result(responsesCallId(item), where);
    else calls.other(where);
  });
  if (options.complete) calls.other("the end of the request");
  return calls.violations;
}

/** AI SDK `ModelMessage`s: assistant `tool-call` parts, `tool` messages of `tool-result` parts. */
export function aiSdkPairViolations(messages: readonly Json[]): string[] {
  const calls = new Calls();
  // Approval requests (by approvalId) whose call is in their message: what a response may answer.
  const requested = new Set<string>();
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    const parts = Array.isArray(message.content) ? (message.content as Json[]) : [];
    if (message.role === "tool") {
      parts.forEach((part, j) => {
        // The user's answer to an approval request, no result: the call's result follows it.
        if (part.type === "tool-approval-response") {
          if (!requested.has(String(part.approvalId))) {
            calls.violations.push(`${where}.content[${j}]: approval response without its request`);
          }
          return;
        }
        calls.result(String(part.toolCallId), `${where}.content[${j}]`);
      });
      return;
    }
    calls.other(where);
    // A provider-executed call is answered in its own assistant message, by a tool-result part after it.
    const provider = new Calls();
    parts.forEach((part, j) => {
      const at = `${where}.content[${j}]`;
      if (part.type === "tool-call" && part.providerExecuted === true) {
        provider.call(String(part.toolCallId), at);
      } else if (part.type === "tool-call") calls.call(String(part.toolCallId), at);
      else if (part.type === "tool-result") provider.result(String(part.toolCallId), at);
      else if (part.type === "tool-approval-request") {
        const own = parts.some((p) => p.type === "tool-call" && p.toolCallId === part.toolCallId);
        if (own) requested.add(String(part.approvalId));
        else calls.violations.push(`${at}: approval request without its call in the message`);
      }
    });
    provider.other(`the end of ${where}`);
    calls.violations.push(...provider.violations);
  });
  return calls.violations;
}
