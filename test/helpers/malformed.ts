/**
 * A seeded, deterministic generator of malformed turn posts in a provider
 * format (ARCHITECTURE §15): it samples valid turns from the format's
 * arbitraries and applies exactly one mutation to each, from a catalogue of
 * kinds. Every payload carries what the API must answer: the status, the
 * problem type, and a regex for the `detail`, which must start with the path
 * of the offending message as the platform wrote it (`messages[3].content[1]`)
 * and say what to change. The expectations are written here from §15 and
 * the provider formats' rules, computed from where the mutation was made;
 * nothing is asked of the code under test.
 */
import fc from "fast-check";
import { anthropicTurnArb } from "./anthropic-arbitraries.ts";
import { chatTurnArb } from "./openai-chat-arbitraries.ts";

/** The provider formats the generator covers. */
export type MalformedFormat = "openai-chat" | "anthropic-messages";

/** One malformed post and the answer it must get. */
export interface MalformedPayload {
  /** `<index> <kind>: <variant>`, for the test's name. */
  readonly name: string;
  readonly kind: string;
  /** The post's body without `turn` (the test posts it as any turn). */
  readonly body: Record<string, unknown>;
  readonly status: 400 | 413 | 422;
  /** The RFC 9457 problem type. */
  readonly type: string;
  /** What the problem's `detail` must match: the path first, then the fix. */
  readonly detail: RegExp;
  /** A bug this kind found (or guards against once fixed): shown when the case fails. */
  readonly bug?: string;
}

/** The problem types of §8/§15's refusals. */
export const PROBLEM = {
  invalidMessages: "/problems/invalid-messages",
  unsupportedMessage: "/problems/unsupported-message",
  invalidRequest: "/problems/invalid-request",
  payloadTooLarge: "/problems/payload-too-large",
} as const;

/** Deeper JSON than this is refused in a request body (MAX_JSON_DEPTH of the API). */
export const MAX_DEPTH = 100;

type Json = Record<string, unknown>;

/** mulberry32: a tiny seeded PRNG, so every choice below is reproducible. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (max: number): number => Math.floor(next() * max); // 0..max-1
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}
type Rng = ReturnType<typeof prng>;

/** `[`, `]`, `.` escaped: a message path as a literal regex fragment. */
function path(...parts: (string | number)[]): string {
  return parts
    .map((part, i) => (typeof part === "number" ? `\\[${part}\\]` : i === 0 ? part : `\\.${part}`))
    .join("");
}

/** A regex anchored at the path, then `rest` (a regex source). */
function at(where: string, rest: string): RegExp {
  return new RegExp(`^${where}: ${rest}`, "s");
}

/** `text` as a literal regex fragment. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A JSON value nested `depth` objects deep: `{"a":{"a":…1…}}`. */
export function nested(depth: number): Json {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value as Json;
}

/** What a mutation makes: the messages (or anything posted in their place) and the expectation. */
interface Mutated {
  readonly variant: string;
  readonly messages: unknown;
  readonly status: 400 | 413 | 422;
  readonly type: string;
  readonly detail: RegExp;
  readonly dropSystem?: boolean;
  readonly bug?: string;
}

/** One kind of the catalogue: how to break a valid turn (a deep copy, free to change). */
interface Kind {
  readonly name: string;
  readonly mutate: (turn: Json[], rng: Rng, context: Context) => Mutated;
}

interface Context {
  /** The body limit of the harness the payloads are posted to. */
  readonly bodyLimitBytes: number;
  /** A call id of the conversation's earlier turns: a result for it in a later turn is an orphan too. */
  readonly earlierCallId: string;
}

/** Values that are not a JSON array, and how zod names their type. */
const NOT_ARRAYS: readonly [unknown, string][] = [
  [{ role: "user", content: "hi" }, "object"],
  ["What is in README.md?", "string"],
  [42, "number"],
  [true, "boolean"],
  [null, "null"],
];

/** Values that are not a JSON object (as messages). */
const NOT_OBJECTS: readonly [unknown, string][] = [
  ["hello", "a string"],
  [7, "a number"],
  [null, "null"],
  [[{ role: "user", content: "hi" }], "an array"],
  [false, "a boolean"],
];

const insertAt = <T>(items: T[], index: number, item: T): T[] => {
  items.splice(index, 0, item);
  return items;
};

// ---------------------------------------------------------------- OpenAI Chat

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

const chatKinds: readonly Kind[] = [
  {
    name: "orphan tool result",
    mutate(turn, rng, { earlierCallId }) {
      // A result for a call no message of this turn makes (maybe one of an earlier turn).
      const id = rng.pick(["call_nowhere", earlierCallId, "toolu_other_format"]);
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, { role: "tool", tool_call_id: id, content: "a result" });
      return {
        variant: `result for ${id} at ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", p, "tool_call_id"),
          `orphan tool result: no tool call "${literal(id)}" comes before it in this turn; post it in the turn that holds its call`,
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
  {
    name: "arguments not JSON",
    mutate(turn, rng) {
      const place = ensureChatCall(turn, rng);
      const text = rng.pick(["{path: README.md}", "", '{"path":"README.md"', "{'a':1}", "NaN"]);
      (callOf(turn, place).function as Json).arguments = text;
      return {
        variant: `${JSON.stringify(text)} at messages[${place[0]}].tool_calls[${place[1]}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", place[0], "tool_calls", place[1], "function", "arguments"),
          "is not valid JSON \\(.+\\): arguments must be a JSON object encoded as a string$",
        ),
      };
    },
  },
  {
    name: "arguments not an object",
    mutate(turn, rng) {
      const place = ensureChatCall(turn, rng);
      const [text, kind] = rng.pick([
        ["[1,2]", "an array"],
        ["42", "a number"],
        ["null", "null"],
        ['"README.md"', "a string"],
        ["true", "a boolean"],
      ] as const);
      (callOf(turn, place).function as Json).arguments = text;
      return {
        variant: `${text} at messages[${place[0]}].tool_calls[${place[1]}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", place[0], "tool_calls", place[1], "function", "arguments"),
          `must be a JSON object encoded as a string \\(got ${kind}\\)$`,
        ),
      };
    },
  },
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
    name: "custom tool call",
    mutate(turn, rng) {
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_custom", type: "custom", custom: { name: "sh", input: "ls" } }],
      });
      return {
        variant: `at ${p}`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", p, "tool_calls", 0),
          'custom tool calls are not supported: only "function" tool calls',
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
  {
    name: "messages not an array",
    mutate(_turn, rng) {
      const [value, kind] = rng.pick(NOT_ARRAYS);
      return {
        variant: kind,
        messages: value,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at("messages", `Invalid input: expected array, received ${kind}$`),
      };
    },
  },
  {
    name: "message not an object",
    mutate(turn, rng) {
      const [value, kind] = rng.pick(NOT_OBJECTS);
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, value as Json);
      return {
        variant: `${kind} at ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(path("messages", p), "expected a message object$"),
      };
    },
  },
  {
    name: "huge arguments over the body limit",
    mutate(turn, rng, { bodyLimitBytes }) {
      const place = ensureChatCall(turn, rng);
      const blob = "x".repeat(bodyLimitBytes + rng.int(bodyLimitBytes));
      (callOf(turn, place).function as Json).arguments = JSON.stringify({ content: blob });
      return {
        variant: `${blob.length} bytes of arguments`,
        messages: turn,
        status: 413,
        type: PROBLEM.payloadTooLarge,
        detail: new RegExp(
          `^the body is larger than ${bodyLimitBytes} bytes: split large tool outputs or raise the limit$`,
        ),
      };
    },
  },
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

// ---------------------------------------------------------------- Anthropic Messages

/** The blocks of message `i`, as an array (a string content becomes one text block). */
function blocksOf(turn: Json[], i: number): Json[] {
  const message = turn[i] as Json;
  if (typeof message.content === "string")
    message.content = [{ type: "text", text: message.content }];
  return message.content as Json[];
}

/** Where the turn's blocks of `type` are: [message index, block index]. */
function blocksOfType(turn: Json[], type: string): [number, number][] {
  const out: [number, number][] = [];
  turn.forEach((message, i) => {
    if (Array.isArray(message.content)) {
      message.content.forEach((block: Json, j: number) => {
        if (block.type === type) out.push([i, j]);
      });
    }
  });
  return out;
}

const indexesOf = (turn: Json[], role: string) =>
  turn.flatMap((message, i) => (message.role === role ? [i] : []));

/** A turn with a tool call and its result: their places, adding a cycle when there is none. */
function ensureAnthropicCycle(turn: Json[]): void {
  if (blocksOfType(turn, "tool_use").length > 0) return;
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

const anthropicKinds: readonly Kind[] = [
  {
    name: "orphan tool result",
    mutate(turn, rng, { earlierCallId }) {
      const id = rng.pick(["toolu_nowhere", earlierCallId, "call_other_format"]);
      const i = rng.pick(indexesOf(turn, "user"));
      // First in its message: the one rule it breaks is answering no call of the turn.
      blocksOf(turn, i).unshift({ type: "tool_result", tool_use_id: id, content: "a result" });
      return {
        variant: `result for ${id} in messages[${i}]`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", 0),
          `tool_result for "${literal(id)}" has no tool_use earlier in this turn: post it in the turn that holds its call`,
        ),
      };
    },
  },
  {
    name: "duplicate tool_use id",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(blocksOfType(turn, "tool_use"));
      const blocks = blocksOf(turn, i);
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
        const blocks = blocksOf(turn, i);
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
      const thinking = blocksOfType(turn, "thinking");
      let i: number;
      let j: number;
      if (thinking.length > 0 && rng.next() < 0.7) {
        [i, j] = rng.pick(thinking);
        delete (blocksOf(turn, i)[j] as Json).signature;
      } else {
        i = ensureAssistant(turn, rng);
        j = 0;
        blocksOf(turn, i).unshift({ type: "thinking", thinking: "Let me think." });
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
      const type = rng.pick([
        "server_tool_use",
        "web_search_tool_result",
        "container_upload",
        "video",
        "mcp_tool_use",
      ]);
      const i = rng.int(turn.length);
      const blocks = blocksOf(turn, i);
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
      const [i, j] = rng.pick(blocksOfType(turn, "tool_result"));
      const type = rng.pick(["search_result", "tool_reference", "audio"]);
      const block = blocksOf(turn, i)[j] as Json;
      block.content = [{ type: "text", text: "found" }, { type }];
      return {
        variant: `${type} in messages[${i}].content[${j}]`,
        messages: turn,
        status: 422,
        type: PROBLEM.unsupportedMessage,
        detail: at(
          path("messages", i, "content", j, "content", 1),
          `block type "${type}" is not supported: a tool result's content may hold text, image and document parts; ${UNMODELLED}`,
        ),
      };
    },
  },
  {
    name: "tool input not an object",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(blocksOfType(turn, "tool_use"));
      const block = blocksOf(turn, i)[j] as Json;
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
  {
    name: "messages not an array",
    mutate(_turn, rng) {
      const [value, kind] = rng.pick(NOT_ARRAYS);
      return {
        variant: kind,
        messages: value,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at("messages", `Invalid input: expected array, received ${kind}$`),
      };
    },
  },
  {
    name: "message not an object",
    mutate(turn, rng) {
      const [value, kind] = rng.pick(NOT_OBJECTS);
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, value as Json);
      return {
        variant: `${kind} at ${p}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        // The fix is to send an object; saying what its role must be is beside the point.
        detail: at(path("messages", p), ".*\\bobject\\b"),
        bug: 'BUG (detail): a message that is not an object (a string, a number, null, an array) is answered `messages[i]: role must be "user" or "assistant"`, not that it must be an object (openai-chat says "expected a message object")',
      };
    },
  },
  {
    name: "unanswered tool_use",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [r, k] = rng.pick(blocksOfType(turn, "tool_result"));
      const results = blocksOf(turn, r);
      const id = (results[k] as Json).tool_use_id as string;
      const [i, j] = blocksOfType(turn, "tool_use").find(
        ([a, b]) => (blocksOf(turn, a)[b] as Json).id === id,
      ) as [number, number];
      results.splice(k, 1);
      // A message left empty goes (adjacent messages of one role count as one).
      if (results.length === 0) turn.splice(r, 1);
      return {
        variant: `no result for ${id}`,
        messages: turn,
        status: 400,
        type: PROBLEM.invalidMessages,
        detail: at(
          path("messages", i, "content", j),
          `tool_use "${literal(id)}" has no tool_result in the user message right after it: post the turn once its results are in`,
        ),
      };
    },
  },
  {
    name: "tool result after other content",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(blocksOfType(turn, "tool_result"));
      const blocks = blocksOf(turn, i);
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
      const [i, j] = rng.pick(blocksOfType(turn, "tool_result"));
      const blocks = blocksOf(turn, i);
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
        const blocks = blocksOf(turn, i);
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
  {
    name: "huge tool input over the body limit",
    mutate(turn, rng, { bodyLimitBytes }) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(blocksOfType(turn, "tool_use"));
      const blob = "x".repeat(bodyLimitBytes + rng.int(bodyLimitBytes));
      (blocksOf(turn, i)[j] as Json).input = { content: blob };
      return {
        variant: `${blob.length} bytes of input`,
        messages: turn,
        status: 413,
        type: PROBLEM.payloadTooLarge,
        detail: new RegExp(
          `^the body is larger than ${bodyLimitBytes} bytes: split large tool outputs or raise the limit$`,
        ),
      };
    },
  },
  {
    name: "tool input nested too deep",
    mutate(turn, rng) {
      ensureAnthropicCycle(turn);
      const [i, j] = rng.pick(blocksOfType(turn, "tool_use"));
      const depth = rng.pick([MAX_DEPTH, 150, 1_000]);
      (blocksOf(turn, i)[j] as Json).input = nested(depth);
      return {
        variant: `${depth} levels at messages[${i}].content[${j}]`,
        messages: turn,
        // The whole body's depth is checked before the format reads it: the detail names the
        // limit, not the message (the JSON input is part of the body, unlike Chat's string).
        status: 400,
        type: PROBLEM.invalidRequest,
        detail: new RegExp(`^the request body nests deeper than ${MAX_DEPTH} levels$`),
      };
    },
  },
];

const CATALOGUE: Record<MalformedFormat, readonly Kind[]> = {
  "openai-chat": chatKinds,
  "anthropic-messages": anthropicKinds,
};

/** The kinds of a format's catalogue, in order. */
export function malformedKinds(format: MalformedFormat): string[] {
  return CATALOGUE[format].map((kind) => kind.name);
}

/**
 * `count` malformed posts in `format`, the same for the same `seed`: payload
 * `n` applies kind `n mod K` of the catalogue (so every kind is covered
 * evenly) to the `n`-th valid turn sampled with the seed.
 */
export function malformedPayloads(
  format: MalformedFormat,
  options: { seed: number; count: number; bodyLimitBytes: number; earlierCallId: string },
): MalformedPayload[] {
  const kinds = CATALOGUE[format];
  const valid: unknown[][] =
    format === "openai-chat"
      ? fc.sample(chatTurnArb, { seed: options.seed, numRuns: options.count })
      : fc.sample(anthropicTurnArb(2), { seed: options.seed, numRuns: options.count });
  const rng = prng(options.seed);
  const context: Context = {
    bodyLimitBytes: options.bodyLimitBytes,
    earlierCallId: options.earlierCallId,
  };
  return valid.map((messages, n) => {
    const kind = kinds[n % kinds.length] as Kind;
    // A deep copy through JSON: exactly what a platform would post.
    const turn = JSON.parse(JSON.stringify(messages)) as Json[];
    const mutated = kind.mutate(turn, rng, context);
    return {
      name: `${String(n).padStart(2, "0")} ${kind.name}: ${mutated.variant}`,
      kind: kind.name,
      body: {
        format,
        messages: mutated.messages,
        ...(mutated.dropSystem ? { drop_system: true } : {}),
      },
      status: mutated.status,
      type: mutated.type,
      detail: mutated.detail,
      ...(mutated.bug ? { bug: mutated.bug } : {}),
    };
  });
}
