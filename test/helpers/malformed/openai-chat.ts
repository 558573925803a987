/** Malformed OpenAI Chat turns: the openai-chat catalogue of test/helpers/malformed.ts. */
import {
  argumentsKinds,
  at,
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
} from "./common.ts";

const CHAT_ROLES = "system, developer, user, assistant, tool, function";

/** Where the turn's function tool calls are: [message index, call index]. */
function chatCalls(turn: Json[]): [number, number][] {
  const out: [number, number][] = [];
  turn.forEach((message, i) => {
    const calls = message.tool_calls;
    if (message.role === "assistant" && Array.isArray(calls)) {
      calls.forEach((_, j) => {
        out.push([i, j]);
      });
    }
  });
  return out;
}

function chatCall(id: string, args = '{"path":"README.md"}'): Json {
  return { id, type: "function", function: { name: "read_file", arguments: args } };
}

/** A turn with at least one tool call: the first one's place, adding a call and its result when there is none. */
function ensureChatCall(turn: Json[], rng: Rng): [number, number] {
  const calls = chatCalls(turn);
  if (calls.length > 0) return rng.pick(calls);
  turn.push({ role: "assistant", content: null, tool_calls: [chatCall("call_added")] });
  turn.push({ role: "tool", tool_call_id: "call_added", content: "added result" });
  return [turn.length - 2, 0];
}

function callOf(turn: Json[], [i, j]: [number, number]): Json {
  return ((turn[i] as Json).tool_calls as Json[])[j] as Json;
}

/** The openai-chat kinds. */
export const chatKinds: readonly Kind[] = [
  {
    name: "orphan tool result",
    mutate(turn, rng, { earlierCallId }) {
      // A result for a call no message of this turn makes (maybe one of an earlier turn).
      const id = rng.pick(["call_nowhere", earlierCallId, "toolu_other_format"]);
      // After the turn's first message: results leading a turn answer the previous turn's calls.
      const p = 1 + rng.int(turn.length);
      insertAt(turn, p, { role: "tool", tool_call_id: id, content: "a result" });
      return {
        variant: `result for ${id} at ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", p, "tool_call_id"),
          `orphan tool result: no tool call "${literal(id)}" comes before it in this turn; post it in the turn that holds its call${literal(LEADING_RESULTS)}`,
        ),
      };
    },
  },
  {
    name: "duplicate tool call id",
    mutate(turn, rng) {
      const [i, j] = ensureChatCall(turn, rng);
      const id = callOf(turn, [i, j]).id as string;
      const sameMessage = rng.next() < 0.5;
      if (sameMessage) {
        // A second call with the id right after the first, in the same message.
        ((turn[i] as Json).tool_calls as Json[]).splice(j + 1, 0, chatCall(id, "{}"));
        return {
          variant: `${id} twice in messages[${i}]`,
          messages: turn,
          status: 400,
          type: PROBLEM.invalidMessages,
          detail: at(
            path("messages", i, "tool_calls", j + 1, "id"),
            `duplicate tool call id "${literal(id)}" \\(also at ${path("messages", i, "tool_calls", j, "id")}\\): tool call ids must be unique within a turn`,
          ),
        };
      }
      // A later assistant message that calls with the id again.
      const p = i + 1 + rng.int(turn.length - i);
      insertAt(turn, p, { role: "assistant", content: null, tool_calls: [chatCall(id)] });
      return {
        variant: `${id} again at messages[${p}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", p, "tool_calls", 0, "id"),
          `duplicate tool call id "${literal(id)}" \\(also at ${path("messages", i, "tool_calls", j, "id")}\\): tool call ids must be unique within a turn`,
        ),
      };
    },
  },
  {
    name: "unknown role",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      const role = rng.pick(["bot", "model", "human", "Assistant", "", "tool_result"]);
      (turn[i] as Json).role = role;
      return {
        variant: `messages[${i}].role = ${JSON.stringify(role)}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "role"),
          `unknown message role "${literal(role)}": expected one of ${CHAT_ROLES}`,
        ),
      };
    },
  },
  {
    name: "missing role",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      delete (turn[i] as Json).role;
      return {
        variant: `messages[${i}] without role`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(path("messages", i, "role"), `a message needs a role: one of ${CHAT_ROLES}`),
      };
    },
  },
  {
    name: "empty content",
    mutate(turn, rng) {
      const variant = rng.pick(["user ''", "user []", "user [text '']", "assistant ''"] as const);
      const p = rng.int(turn.length + 1);
      if (variant === "assistant ''") {
        insertAt(turn, p, { role: "assistant", content: rng.pick(["", null]) });
        return {
          variant: `${variant} at ${p}`,
          messages: turn,
          status: 400,
          type: PROBLEM.invalidMessages,
          detail: at(path("messages", p), "an assistant message needs text content or tool_calls"),
        };
      }
      const content =
        variant === "user ''" ? "" : variant === "user []" ? [] : [{ type: "text", text: "" }];
      insertAt(turn, p, { role: "user", content });
      return {
        variant: `${variant} at ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", p, "content"),
          variant === "user []"
            ? "a content array needs at least one part"
            : "a user message needs text or a content part",
        ),
      };
    },
  },
  {
    name: "empty tool_calls",
    mutate(turn, rng) {
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, { role: "assistant", content: "Let me look.", tool_calls: [] });
      return {
        variant: `at ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", p, "tool_calls"),
          "tool_calls needs at least one call \\(leave it out instead\\)",
        ),
      };
    },
  },
  {
    name: "missing tool_call_id",
    mutate(turn, rng) {
      ensureChatCall(turn, rng);
      const results = turn.flatMap((message, i) => (message.role === "tool" ? [i] : []));
      let i: number;
      if (results.length > 0) {
        i = rng.pick(results);
        delete (turn[i] as Json).tool_call_id;
      } else {
        i = turn.length;
        turn.push({ role: "tool", content: "a result" });
      }
      return {
        variant: `messages[${i}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        // The fix: tool_call_id must be there, a string.
        detail: at(path("messages", i, "tool_call_id"), ".*expected string"),
      };
    },
  },
  {
    name: "unknown content part type",
    mutate(turn, rng) {
      const type = rng.pick(["video", "input_image", "image", "tool_use"]);
      const role = rng.pick(["user", "assistant", "tool"] as const);
      const p = rng.int(turn.length + 1);
      const parts: Json[] = [{ type: "text", text: "see this" }];
      const j = rng.int(2);
      parts.splice(j, 0, { type, url: "https://example.com/x" });
      let message: Json;
      let expected: string;
      if (role === "user") {
        message = { role: "user", content: parts };
        expected = "one of text, image_url, input_audio, file";
      } else if (role === "assistant") {
        message = { role: "assistant", content: parts };
        expected = "one of text, refusal";
      } else {
        // A tool result answering a call made just before it, so only the part is wrong.
        insertAt(turn, p, { role: "assistant", content: null, tool_calls: [chatCall("call_x")] });
        message = { role: "tool", tool_call_id: "call_x", content: parts };
        expected = '"text"';
      }
      const index = role === "tool" ? p + 1 : p;
      insertAt(turn, index, message);
      return {
        variant: `${role} part ${JSON.stringify(type)} at messages[${index}].content[${j}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", index, "content", j, "type"),
          `unknown content part type "${literal(type)}": expected ${expected}`,
        ),
      };
    },
  },
  ...argumentsKinds((turn, rng) => {
    const [i, j] = ensureChatCall(turn, rng);
    return {
      set: (text) => {
        (callOf(turn, [i, j]).function as Json).arguments = text;
      },
      path: path("messages", i, "tool_calls", j, "function", "arguments"),
      where: `messages[${i}].tool_calls[${j}]`,
    };
  }),
  {
    name: "system prompt without drop_system",
    mutate(turn, rng) {
      const role = rng.pick(["system", "developer"]);
      const leading = rng.next() < 0.6;
      const p = leading ? 0 : 1 + rng.int(turn.length);
      insertAt(turn, p, { role, content: "You are a careful agent." });
      // A system prompt after the turn's first message is refused even with drop_system.
      const dropSystem = !leading && rng.next() < 0.5;
      return {
        variant: `${role} at ${p}${dropSystem ? " with drop_system" : ""}`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", p),
          `${leading ? "" : `a ${role} message after the turn's first other message: `}system and developer prompts are not conversation turns.*drop_system: true${leading ? "" : ".*only leading ones are dropped"}`,
        ),
        ...(dropSystem ? { dropSystem } : {}),
      };
    },
  },
  {
    name: "deprecated function role",
    mutate(turn, rng) {
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, { role: "function", name: "read_file", content: "# autocompact" });
      return {
        variant: `at ${p}`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", p),
          'the deprecated "function" role is not supported: send tool results as \\{"role":"tool"',
        ),
      };
    },
  },
  {
    name: "second result for a call",
    mutate(turn, rng) {
      ensureChatCall(turn, rng);
      const results = turn.flatMap((message, i) => (message.role === "tool" ? [i] : []));
      const first = results.length > 0 ? rng.pick(results) : undefined;
      let id: string;
      let firstAt: number;
      if (first === undefined) {
        // Every call of the turn is unanswered: answer the first one, twice.
        const [i, j] = chatCalls(turn)[0] as [number, number];
        id = callOf(turn, [i, j]).id as string;
        firstAt = turn.length;
        turn.push({ role: "tool", tool_call_id: id, content: "once" });
      } else {
        id = (turn[first] as Json).tool_call_id as string;
        firstAt = first;
      }
      const p = firstAt + 1 + rng.int(turn.length - firstAt);
      insertAt(turn, p, { role: "tool", tool_call_id: id, content: "twice" });
      return {
        variant: `${id} at ${firstAt} and ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", p, "tool_call_id"),
          `a second result for tool call "${literal(id)}" \\(the first is ${path("messages", firstAt)}\\); a call takes one result`,
        ),
      };
    },
  },
  MESSAGES_NOT_AN_ARRAY,
  notAnObjectKind("message not an object", "messages", "expected a message object$"),
  overBodyLimitKind("huge arguments over the body limit", "arguments", (turn, rng) => {
    const place = ensureChatCall(turn, rng);
    return (blob) => {
      (callOf(turn, place).function as Json).arguments = JSON.stringify({ content: blob });
    };
  }),
  {
    name: "arguments nested too deep",
    mutate(turn, rng) {
      const place = ensureChatCall(turn, rng);
      const depth = rng.pick([MAX_DEPTH + 1, 150, 1_000, 3_000]);
      (callOf(turn, place).function as Json).arguments = JSON.stringify(nested(depth));
      return {
        variant: `${depth} levels at messages[${place[0]}].tool_calls[${place[1]}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        // The same JSON posted as a JP event's arguments is refused (the body nests deeper than
        // 100 levels); inside the Chat `arguments` string it must be too, located.
        detail: at(
          path("messages", place[0], "tool_calls", place[1], "function", "arguments"),
          `.*deeper than ${MAX_DEPTH} levels`,
        ),
        // Found at commit 8f900d2: the depth cap was never applied to a Chat `arguments` string,
        // so 101 to ~1,900 levels were stored (202) and deeper ones answered a 500 (stack overflow
        // in the memory store's structuredClone, or in the estimate's JSON.stringify).
        bug:
          "the depth cap (100) must apply inside a Chat `arguments` string too: at 8f900d2 a few hundred " +
          "levels were stored (202) and a few thousand answered a 500",
      };
    },
  },
];
