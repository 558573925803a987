/** Malformed Anthropic Messages turns: the anthropic-messages catalogue of test/helpers/malformed.ts. */
import {
  at,
  contentOf,
  contentOfType,
  indexesOf,
  insertAt,
  type Json,
  type Kind,
  LEADING_RESULTS,
  literal,
  MAX_DEPTH,
  MESSAGES_NOT_AN_ARRAY,
  nested,
  notAnObjectKind,
  overBodyLimitKind,
  PROBLEM,
  path,
  type Rng,
  TOO_DEEP,
} from "./common.ts";

/** A turn with a tool call and its result: their places, adding a cycle when there is none. */
function ensureAnthropicCycle(turn: Json[]): void {
  if (contentOfType(turn, "tool_use").length > 0) return;
  turn.push({
    role: "assistant",
    content: [{ type: "tool_use", id: "toolu_added", name: "read", input: { path: "a" } }],
  });
  turn.push({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_added", content: "added" }],
  });
}

/** A turn with at least one assistant message: its index, appending one when there is none. */
function ensureAssistant(turn: Json[], rng: Rng): number {
  const assistants = indexesOf(turn, "assistant");
  if (assistants.length > 0) return rng.pick(assistants);
  turn.push({ role: "assistant", content: "Done." });
  return turn.length - 1;
}

const UNMODELLED = "leave it out of the posted messages";

/** The anthropic-messages kinds. */
export const anthropicKinds: readonly Kind[] = [
  {
    name: "orphan tool result",
    mutate(turn, rng, { earlierCallId }) {
      const id = rng.pick(["toolu_nowhere", earlierCallId, "call_other_format"]);
      // A user message after an assistant one: results leading a turn answer the previous turn's calls.
      const firstAssistant = turn.findIndex((message) => message.role === "assistant");
      let users = indexesOf(turn, "user").filter((u) => firstAssistant >= 0 && u > firstAssistant);
      if (users.length === 0) {
        if (firstAssistant < 0) turn.push({ role: "assistant", content: "ok" });
        turn.push({ role: "user", content: [{ type: "text", text: "next" }] });
        users = [turn.length - 1];
      }
      const i = rng.pick(users);
      // First in its message: the one rule it breaks is answering no call of the turn.
      contentOf(turn, i).unshift({ type: "tool_result", tool_use_id: id, content: "a result" });
      return {
        variant: `result for ${id} in messages[${i}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", 0),
          `tool_result for "${literal(id)}" has no tool_use earlier in this turn: post it in the turn that holds its call${literal(LEADING_RESULTS)}`,
        ),
      };
    },
  },
  {
    name: "duplicate tool_use id",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(contentOfType(turn, "tool_use"));
      const blocks = contentOf(turn, i);
      const id = (blocks[j] as Json).id as string;
      blocks.splice(j + 1, 0, { type: "tool_use", id, name: "write", input: {} });
      return {
        variant: `${id} twice in messages[${i}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", j + 1),
          `tool_use id "${literal(id)}" is already used by ${path("messages", i, "content", j)}: tool call ids must be unique within a turn`,
        ),
      };
    },
  },
  {
    name: "wrong role",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      const role = rng.pick(["tool", "human", "model", "developer", "function", undefined]);
      if (role === undefined) delete (turn[i] as Json).role;
      else (turn[i] as Json).role = role;
      return {
        variant: `messages[${i}].role = ${JSON.stringify(role)}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(path("messages", i, "role"), 'role must be "user" or "assistant"$'),
      };
    },
  },
  {
    name: "empty content",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      const variant = rng.pick(["''", "[]", "text ''"] as const);
      if (variant === "text ''") {
        const blocks = contentOf(turn, i);
        const j = blocks.length;
        blocks.push({ type: "text", text: "" });
        return {
          variant: `empty text block at messages[${i}].content[${j}]`,
          messages: turn,
          status: 400,
          type: PROBLEM.invalidMessages,
          detail: at(
            path("messages", i, "content", j, "text"),
            "a text block must not be empty \\(the API refuses it\\)$",
          ),
        };
      }
      (turn[i] as Json).content = variant === "''" ? "" : [];
      return {
        variant: `messages[${i}].content = ${variant}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content"),
          "content must not be empty \\(the API refuses it\\)$",
        ),
      };
    },
  },
  {
    name: "thinking without signature",
    mutate(turn, rng) {
      const thinking = contentOfType(turn, "thinking");
      let i: number;
      let j: number;
      if (thinking.length > 0 && rng.next() < 0.7) {
        [i, j] = rng.pick(thinking);
        delete (contentOf(turn, i)[j] as Json).signature;
      } else {
        i = ensureAssistant(turn, rng);
        j = 0;
        contentOf(turn, i).unshift({ type: "thinking", thinking: "Let me think." });
      }
      return {
        variant: `messages[${i}].content[${j}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", j, "signature"),
          "a thinking block needs its signature: the API requires thinking blocks back unchanged$",
        ),
      };
    },
  },
  {
    name: "unknown block type",
    mutate(turn, rng) {
      // Server tool blocks are carried (core/formats/anthropic-hosted.ts), not refused.
      const type = rng.pick(["tool_reference", "browser_state", "video", "mcp_tool_use"]);
      const i = rng.int(turn.length);
      const blocks = contentOf(turn, i);
      const j = blocks.length;
      blocks.push({ type, id: "srvtoolu_1" });
      return {
        variant: `${type} at messages[${i}].content[${j}]`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", i, "content", j),
          `block type "${type}" is not supported: .*${UNMODELLED}`,
        ),
      };
    },
  },
  {
    name: "unknown tool result part",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(contentOfType(turn, "tool_result"));
      const type = rng.pick(["browser_state", "tool_reference", "audio"]);
      const block = contentOf(turn, i)[j] as Json;
      block.content = [{ type: "text", text: "found" }, { type }];
      return {
        variant: `${type} in messages[${i}].content[${j}]`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", i, "content", j, "content", 1),
          `block type "${type}" is not supported: a tool result's content may hold text, image, document and search_result parts; ${UNMODELLED}`,
        ),
      };
    },
  },
  {
    name: "tool input not an object",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(contentOfType(turn, "tool_use"));
      const block = contentOf(turn, i)[j] as Json;
      const input = rng.pick<unknown>(['{"path":"a"}', [1, 2], null, 42, undefined]);
      if (input === undefined) delete block.input;
      else block.input = input;
      return {
        variant: `${JSON.stringify(input) ?? "absent"} at messages[${i}].content[${j}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(path("messages", i, "content", j, "input"), "expected a JSON object$"),
      };
    },
  },
  {
    name: "system message",
    mutate(turn, rng) {
      const leading = rng.next() < 0.6;
      const p = leading ? 0 : 1 + rng.int(turn.length);
      insertAt(turn, p, { role: "system", content: "You are a careful agent." });
      const dropSystem = !leading && rng.next() < 0.5;
      return {
        variant: `at ${p}${dropSystem ? " with drop_system" : ""}`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", p),
          `system prompts are not conversation turns: .*${dropSystem ? "drop_system drops leading system messages only" : '"drop_system": true'}`,
        ),
        ...(dropSystem ? { dropSystem } : {}),
      };
    },
  },
  MESSAGES_NOT_AN_ARRAY,
  notAnObjectKind(
    "message not an object",
    "messages",
    // The fix is to send an object; saying what its role must be is beside the point.
    ".*\\bobject\\b",
    'BUG (detail): a message that is not an object (a string, a number, null, an array) is answered `messages[i]: role must be "user" or "assistant"`, not that it must be an object (openai-chat says "expected a message object")',
  ),
  {
    name: "unanswered tool_use",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [r, k] = rng.pick(contentOfType(turn, "tool_result"));
      const results = contentOf(turn, r);
      const id = (results[k] as Json).tool_use_id as string;
      const [i, j] = contentOfType(turn, "tool_use").find(
        ([a, b]) => (contentOf(turn, a)[b] as Json).id === id,
      ) as [number, number];
      results.splice(k, 1);
      // A message left empty goes (adjacent messages of one role count as one).
      if (results.length === 0) turn.splice(r, 1);
      // The turn goes on after it: a call only results follow would be pending, which is valid.
      turn.push({ role: "user", content: [{ type: "text", text: "and then?" }] });
      return {
        variant: `no result for ${id}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", j),
          `tool_use "${literal(id)}" has no tool_result in the user message right after it: post its result there, or end the turn with the call`,
        ),
      };
    },
  },
  {
    name: "tool result after other content",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(contentOfType(turn, "tool_result"));
      const blocks = contentOf(turn, i);
      blocks.splice(j, 0, { type: "text", text: "Here are the results:" });
      return {
        variant: `text before messages[${i}].content[${j + 1}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", j + 1),
          "tool_result blocks must come first in their user message, before any other content",
        ),
      };
    },
  },
  {
    name: "tool result twice",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(contentOfType(turn, "tool_result"));
      const blocks = contentOf(turn, i);
      const block = blocks[j] as Json;
      blocks.splice(j + 1, 0, { ...block });
      return {
        variant: `messages[${i}].content[${j}] twice`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", j + 1),
          `tool_use "${literal(block.tool_use_id as string)}" is already answered by ${path("messages", i, "content", j)}$`,
        ),
      };
    },
  },
  {
    name: "unknown key",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      const keys = ["name", "id", "tool_calls", "metadata"];
      const onBlock = rng.next() < 0.5;
      if (onBlock) {
        const blocks = contentOf(turn, i);
        const j = rng.int(blocks.length);
        const block = blocks[j] as Json;
        // A key the block does not have (a tool_use's own `id` or `name` is no unknown key).
        const key = rng.pick(keys.filter((candidate) => !Object.hasOwn(block, candidate)));
        block[key] = "x";
        return {
          variant: `${key} on messages[${i}].content[${j}]`,
          messages: turn,
          status: 400,
          type: PROBLEM.invalidMessages,
          detail: at(path("messages", i, "content", j), `Unrecognized key: "${key}"`),
        };
      }
      const key = rng.pick(keys);
      (turn[i] as Json)[key] = "x";
      return {
        variant: `${key} on messages[${i}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(path("messages", i), `Unrecognized key: "${key}"`),
      };
    },
  },
  overBodyLimitKind("huge tool input over the body limit", "input", (turn, rng) => {
    ensureAnthropicCycle(turn);
    const [i, j] = rng.pick(contentOfType(turn, "tool_use"));
    return (blob) => {
      (contentOf(turn, i)[j] as Json).input = { content: blob };
    };
  }),
  {
    name: "tool input nested too deep",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(contentOfType(turn, "tool_use"));
      const depth = rng.pick([MAX_DEPTH, 150, 1_000]);
      (contentOf(turn, i)[j] as Json).input = nested(depth);
      return {
        variant: `${depth} levels at messages[${i}].content[${j}]`,
        messages: turn,
        ...TOO_DEEP,
      };
    },
  },
];
