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
 * about to append their results). Anthropic's own rules (role alternation,
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

/** Chat Completions `messages`: assistant `tool_calls`, then one `tool` message per call. */
export function chatPairViolations(messages: readonly Json[]): string[] {
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
  return calls.violations;
}

/** Responses `input`: `function_call` items and their `function_call_output`s, by `call_id`. */
export function responsesPairViolations(input: readonly Json[]): string[] {
  const calls = new Calls();
  input.forEach((item, i) => {
    const where = `input[${i}]`;
    if (item.type === "function_call") calls.call(String(item.call_id), where);
    else if (item.type === "function_call_output") calls.result(String(item.call_id), where);
    else calls.other(where);
  });
  return calls.violations;
}

/** AI SDK `ModelMessage`s: assistant `tool-call` parts, `tool` messages of `tool-result` parts. */
export function aiSdkPairViolations(messages: readonly Json[]): string[] {
  const calls = new Calls();
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    const parts = Array.isArray(message.content) ? (message.content as Json[]) : [];
    if (message.role === "tool") {
      parts.forEach((part, j) => {
        calls.result(String(part.toolCallId), `${where}.content[${j}]`);
      });
      return;
    }
    calls.other(where);
    parts.forEach((part, j) => {
      if (part.type === "tool-call") calls.call(String(part.toolCallId), `${where}.content[${j}]`);
    });
  });
  return calls.violations;
}
