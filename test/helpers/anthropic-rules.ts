/**
 * The Messages API's structural rules for a request's `messages`, as a
 * checker independent of the format module: property tests run every
 * projected view through it, so a compaction can never produce a body the
 * API would refuse.
 */

interface Block {
  readonly type: string;
  readonly [key: string]: unknown;
}

interface Message {
  readonly role: string;
  readonly content: string | readonly Block[];
}

/**
 * Every rule `messages` breaks, one line each (none means valid): roles are
 * user/assistant and alternate, the first is user, content and text blocks
 * are not empty, tool_result blocks sit only in user messages, first, each
 * answering a distinct tool_use of the assistant message right before; every
 * tool_use is answered in the next user message (except in a final assistant
 * message), its id unique in the request; thinking blocks carry a signature;
 * a server tool's result block follows its `server_tool_use` in the same
 * assistant message (which, but for the final message, holds both).
 */
export function anthropicRuleViolations(messages: readonly Message[]): string[] {
  const violations: string[] = [];
  if (messages.length === 0) violations.push("no messages");
  const seenCalls = new Set<string>();
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (message.role !== "user" && message.role !== "assistant") {
      violations.push(`${at}: role ${message.role}`);
    }
    if (i === 0 && message.role !== "user") violations.push(`${at}: the first message is not user`);
    if (i > 0 && messages[i - 1]?.role === message.role) {
      violations.push(`${at}: two ${message.role} messages in a row`);
    }
    const blocks = typeof message.content === "string" ? [] : message.content;
    if (message.content.length === 0) violations.push(`${at}: empty content`);
    let othersSeen = false;
    const previous = messages[i - 1];
    const calls = new Set<string>();
    if (previous?.role === "assistant" && typeof previous.content !== "string") {
      for (const block of previous.content)
        if (block.type === "tool_use") calls.add(String(block.id));
    }
    const answered = new Set<string>();
    // A server tool's result follows its server_tool_use in the same assistant message.
    const serverCalls = new Set<string>();
    blocks.forEach((block, j) => {
      const where = `${at}.content[${j}]`;
      if (block.type === "server_tool_use") {
        if (message.role !== "assistant")
          violations.push(`${where}: server_tool_use in a user message`);
        serverCalls.add(String(block.id));
      }
      if (block.type.endsWith("_tool_result")) {
        if (!serverCalls.delete(String(block.tool_use_id))) {
          violations.push(
            `${where}: ${block.type} answers no server_tool_use before it in its message`,
          );
        }
      }
      if (block.type === "text" && block.text === "") violations.push(`${where}: empty text`);
      if (block.type === "thinking" && typeof block.signature !== "string") {
        violations.push(`${where}: thinking without signature`);
      }
      if (block.type === "tool_use") {
        const id = String(block.id);
        if (seenCalls.has(id)) violations.push(`${where}: tool_use id ${id} used twice`);
        seenCalls.add(id);
      }
      if (block.type !== "tool_result") {
        othersSeen = true;
        return;
      }
      const id = String(block.tool_use_id);
      if (message.role !== "user") violations.push(`${where}: tool_result in an assistant message`);
      if (othersSeen) violations.push(`${where}: tool_result after other content`);
      if (!calls.has(id))
        violations.push(`${where}: tool_result ${id} answers no call right before`);
      if (answered.has(id)) violations.push(`${where}: tool_result ${id} twice`);
      answered.add(id);
    });
    if (i < messages.length - 1) {
      for (const id of serverCalls)
        violations.push(`${at}: server_tool_use ${id} without its result`);
    }
    // Calls are checked by the user message after them: a final assistant
    // message may leave its calls open (the platform is about to run them).
    if (message.role === "user") {
      for (const id of calls) {
        if (!answered.has(id)) violations.push(`${at}: tool_use ${id} unanswered`);
      }
    }
  });
  return violations;
}
