/**
 * Malformed AI SDK turns: the ai-sdk catalogue of test/helpers/malformed.ts.
 * The refusals are the `ai` package's `ModelMessage` rules (ai@6: a
 * `tool-call` has `toolCallId`, `toolName` and `input`; a `tool-result` has
 * an `output` of one of six types; `providerOptions` is an object of JSON
 * objects; no unknown keys) and §15's pairing rules, located at the part as
 * the platform wrote it (`messages[3].content[1].toolCallId`). Several kinds
 * are what a platform posting the SDK's other shapes sends: v4's `args` and
 * `result`, a `UIMessage` with `parts`.
 */
import { describePath } from "../../../core/formats/issues.ts";
import {
  at,
  contentOf,
  contentOfType,
  INVALID,
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
  path,
  type Rng,
  TOO_DEEP,
  UNSUPPORTED,
} from "./common.ts";

const ROLE =
  'role must be "user", "assistant" or "tool" \\("system" only leading, with drop_system\\)';
const SYSTEM = "system messages are not conversation turns: pass yours with each call";
const OUTPUT_TYPES =
  "'text' \\| 'json' \\| 'execution-denied' \\| 'error-text' \\| 'error-json' \\| 'content'";

function toolCall(id: string): Json {
  return { type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: "README.md" } };
}

function toolResult(id: string, value = "a result"): Json {
  return {
    type: "tool-result",
    toolCallId: id,
    toolName: "read_file",
    output: { type: "text", value },
  };
}

/** A turn with a tool call and its result, appending a cycle when there is none. */
function ensureCycle(turn: Json[]): void {
  if (contentOfType(turn, "tool-call").length > 0) return;
  turn.push({ role: "assistant", content: [toolCall("call_added")] });
  turn.push({ role: "tool", content: [toolResult("call_added")] });
}

/** A tool call's place [message, part], after {@link ensureCycle}. */
function someCall(turn: Json[], rng: Rng): [number, number] {
  ensureCycle(turn);
  return rng.pick(contentOfType(turn, "tool-call"));
}

/** A tool result's place [message, part], after {@link ensureCycle} (every call of a valid turn is answered). */
function someResult(turn: Json[], rng: Rng): [number, number] {
  ensureCycle(turn);
  return rng.pick(contentOfType(turn, "tool-result"));
}

const partAt = (turn: Json[], [i, j]: [number, number]) => contentOf(turn, i)[j] as Json;

export const aiSdkKinds: readonly Kind[] = [
  {
    name: "orphan tool result",
    mutate(turn, rng, { earlierCallId }) {
      if (rng.next() < 0.4) {
        // A result posted before the message that makes its call.
        const [i, j] = someCall(turn, rng);
        const id = partAt(turn, [i, j]).toolCallId as string;
        const p = 1 + rng.int(i);
        insertAt(turn, p, { role: "tool", content: [toolResult(id)] });
        return {
          variant: `result for ${id} at ${p}, before its call`,
          messages: turn,
          ...INVALID,
          detail: at(
            path("messages", p, "content", 0, "toolCallId"),
            `orphan tool result: no tool call "${literal(id)}" comes before it in this turn; post it in the turn that holds its call${literal(LEADING_RESULTS)}`,
          ),
        };
      }
      const id = rng.pick(["call_nowhere", earlierCallId, "toolu_other_format"]);
      const p = 1 + rng.int(turn.length);
      insertAt(turn, p, { role: "tool", content: [toolResult(id)] });
      return {
        variant: `result for ${id} at ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", p, "content", 0, "toolCallId"),
          `orphan tool result: no tool call "${literal(id)}" comes before it in this turn; post it in the turn that holds its call${literal(LEADING_RESULTS)}`,
        ),
      };
    },
  },
  {
    name: "duplicate toolCallId",
    mutate(turn, rng) {
      const [i, j] = someCall(turn, rng);
      const id = partAt(turn, [i, j]).toolCallId as string;
      contentOf(turn, i).splice(j + 1, 0, { ...toolCall(id), toolName: "grep", input: {} });
      return {
        variant: `${id} twice in messages[${i}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", i, "content", j + 1, "toolCallId"),
          `duplicate toolCallId "${literal(id)}" \\(also at ${path("messages", i, "content", j)}\\): tool call ids must be unique within a turn`,
        ),
      };
    },
  },
  {
    name: "second result for a call",
    mutate(turn, rng) {
      const [r, k] = someResult(turn, rng);
      const result = partAt(turn, [r, k]);
      contentOf(turn, r).splice(k + 1, 0, { ...result, output: { type: "text", value: "again" } });
      return {
        variant: `messages[${r}].content[${k}] twice`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", r, "content", k + 1, "toolCallId"),
          `a second result for tool call "${literal(result.toolCallId as string)}" \\(the first is ${path("messages", r, "content", k, "toolCallId")}\\); a call takes one result`,
        ),
      };
    },
  },
  {
    name: "tool-call without toolCallId or toolName",
    mutate(turn, rng) {
      const [i, j] = someCall(turn, rng);
      const key = rng.pick(["toolCallId", "toolName"]);
      delete partAt(turn, [i, j])[key];
      return {
        variant: `no ${key} at messages[${i}].content[${j}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", i, "content", j, key),
          "Invalid input: expected string, received undefined",
        ),
      };
    },
  },
  {
    name: "tool-call input not a JSON object",
    mutate(turn, rng) {
      const [i, j] = someCall(turn, rng);
      const part = partAt(turn, [i, j]);
      // v4's `args`, the JSON text (as Chat sends it), an array, null, or nothing.
      const variant = rng.pick(["args", '"{\\"path\\":\\"a\\"}"', "[1,2]", "null", "absent"]);
      if (variant === "args") part.args = part.input;
      else if (variant !== "absent") part.input = JSON.parse(variant);
      if (variant === "args" || variant === "absent") delete part.input;
      return {
        variant: `${variant} at messages[${i}].content[${j}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", i, "content", j, "input"),
          `expected a JSON object${variant === "args" ? '; .*Unrecognized key: "args"' : "$"}`,
        ),
      };
    },
  },
  {
    name: "tool-result without output",
    mutate(turn, rng) {
      const [r, k] = someResult(turn, rng);
      const part = partAt(turn, [r, k]);
      // v4's `result`, or no output at all.
      const v4 = rng.next() < 0.5;
      if (v4) part.result = "a result";
      delete part.output;
      return {
        variant: `${v4 ? "result" : "absent"} at messages[${r}].content[${k}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", r, "content", k, "output"),
          `Invalid input: expected object, received undefined${v4 ? '; .*Unrecognized key: "result"' : "$"}`,
        ),
      };
    },
  },
  {
    name: "output not a typed object",
    mutate(turn, rng) {
      const [r, k] = someResult(turn, rng);
      const part = partAt(turn, [r, k]);
      const bare = rng.next() < 0.5;
      if (bare) {
        // The tool's value itself, not wrapped in {type, value}.
        const [value, kind] = rng.pick([
          ["a.txt b.txt", "string"],
          [["a.txt", "b.txt"], "array"],
          [42, "number"],
        ] as const);
        part.output = value;
        return {
          variant: `bare ${kind} at messages[${r}].content[${k}]`,
          messages: turn,
          ...INVALID,
          detail: at(
            path("messages", r, "content", k, "output"),
            `Invalid input: expected object, received ${kind}$`,
          ),
        };
      }
      const type = rng.pick(["string", "error", "result", "image", "json-text", undefined]);
      part.output = type === undefined ? { value: "ok" } : { type, value: "ok" };
      return {
        variant: `output type ${JSON.stringify(type)} at messages[${r}].content[${k}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", r, "content", k, "output", "type"),
          `Invalid discriminator value\\. Expected ${OUTPUT_TYPES}$`,
        ),
      };
    },
  },
  {
    name: "output value of the wrong type",
    mutate(turn, rng) {
      const [r, k] = someResult(turn, rng);
      const [output, where, expected] = rng.pick([
        [{ type: "text", value: { lines: 2 } }, "value", "expected string, received object"],
        [{ type: "error-text", value: 404 }, "value", "expected string, received number"],
        [{ type: "content", value: "a.txt" }, "value", "expected array, received string"],
        [
          { type: "execution-denied", reason: false },
          "reason",
          "expected string, received boolean",
        ],
      ] as const);
      partAt(turn, [r, k]).output = output;
      return {
        variant: `${output.type} at messages[${r}].content[${k}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", r, "content", k, "output", where),
          `Invalid input: ${expected}$`,
        ),
      };
    },
  },
  {
    name: "bad providerOptions shape",
    mutate(turn, rng) {
      const onPart = rng.next() < 0.5;
      const i = rng.int(turn.length);
      const [value, inner, kind] = rng.pick([
        ["ephemeral", false, "string"],
        [["anthropic"], false, "array"],
        [{ anthropic: "ephemeral" }, true, "string"],
        [{ anthropic: true }, true, "boolean"],
        [{ openai: [{ itemId: "msg_1" }] }, true, "array"],
      ] as const);
      let where: (string | number)[] = ["messages", i];
      if (onPart) {
        const parts = contentOf(turn, i);
        const j = rng.int(parts.length);
        (parts[j] as Json).providerOptions = value;
        where = [...where, "content", j];
      } else {
        (turn[i] as Json).providerOptions = value;
      }
      where.push("providerOptions");
      if (inner) where.push(Object.keys(value)[0] as string);
      return {
        variant: `${JSON.stringify(value)} at ${describePath(where)}`,
        messages: turn,
        ...INVALID,
        detail: at(path(...where), `Invalid input: expected record, received ${kind}$`),
      };
    },
  },
  {
    name: "unknown role",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      const role = rng.pick(["bot", "model", "function", "developer", "Assistant", undefined]);
      if (role === undefined) delete (turn[i] as Json).role;
      else (turn[i] as Json).role = role;
      return {
        variant: `messages[${i}].role = ${JSON.stringify(role)}`,
        messages: turn,
        ...INVALID,
        detail: at(path("messages", i, "role"), `${ROLE}$`),
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
        ...UNSUPPORTED,
        detail: at(
          path("messages", p),
          `${SYSTEM}.*${dropSystem ? "drop_system drops leading system messages only" : '"drop_system": true'}`,
        ),
        ...(dropSystem ? { dropSystem } : {}),
      };
    },
  },
  {
    name: "part the service does not model",
    mutate(turn, rng) {
      const [role, part, why] = rng.pick<[string, Json, string]>([
        [
          "assistant",
          { type: "file", data: "aGk=", mediaType: "text/plain" },
          "assistant file parts",
        ],
      ]);
      const p = 1 + rng.int(turn.length);
      insertAt(turn, p, { role, content: [part] });
      const type = String(part.type);
      return {
        variant: `${type}${part.providerExecuted ? " (provider-executed)" : ""} in ${role} messages[${p}]`,
        messages: turn,
        ...UNSUPPORTED,
        detail: at(
          path("messages", p, "content", 0),
          `part type "${type}".* is not supported: ${why} .*post the turn as JP events$`,
        ),
      };
    },
  },
  {
    name: "part of another role or API",
    mutate(turn, rng) {
      const user = rng.next() < 0.5;
      const i = user ? rng.pick(indexesOf(turn, "user")) : (indexesOf(turn, "assistant")[0] ?? -1);
      const [type, part] = user
        ? rng.pick([
            ["tool-call", toolCall("call_u")],
            ["reasoning", { type: "reasoning", text: "hm" }],
            ["image_url", { type: "image_url", image_url: { url: "https://example.com/a.png" } }],
          ] as const)
        : rng.pick([
            ["image", { type: "image", image: "https://example.com/a.png" }],
            ["tool_use", { type: "tool_use", id: "toolu_1", name: "ls", input: {} }],
            ["thinking", { type: "thinking", thinking: "hm", signature: "sig" }],
          ] as const);
      let m = i;
      if (m < 0) {
        m = turn.length;
        turn.push({ role: "assistant", content: "Done." });
      }
      const parts = contentOf(turn, m);
      const j = rng.int(parts.length + 1);
      parts.splice(j, 0, part);
      return {
        variant: `${type} in ${user ? "user" : "assistant"} messages[${m}].content[${j}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", m, "content", j, "type"),
          user
            ? "a user message takes text, image and file parts$"
            : "an assistant message takes text, reasoning, tool-call, tool-result and tool-approval-request parts$",
        ),
      };
    },
  },
  {
    name: "empty content",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      const message = turn[i] as Json;
      const variant =
        message.role === "user"
          ? rng.pick(["''", "[]", "text ''"] as const)
          : message.role === "tool"
            ? "[]"
            : rng.pick(["''", "[]"] as const);
      message.content =
        variant === "''" ? "" : variant === "[]" ? [] : [{ type: "text", text: "" }];
      return {
        variant: `${message.role} messages[${i}].content = ${variant}`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", i, "content"),
          variant === "text ''"
            ? "a user message needs text or an image or file part$"
            : "content must not be empty$",
        ),
      };
    },
  },
  {
    name: "tool message content not parts",
    mutate(turn, rng) {
      const [r] = someResult(turn, rng);
      const [value, kind] = rng.pick([
        ["a.txt b.txt", "string"],
        [toolResult("call_x"), "object"],
      ] as const);
      (turn[r] as Json).content = value;
      return {
        variant: `${kind} at messages[${r}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", r, "content"),
          `Invalid input: expected array, received ${kind}$`,
        ),
      };
    },
  },
  {
    name: "unknown key",
    mutate(turn, rng) {
      const i = rng.int(turn.length);
      if (rng.next() < 0.5) {
        const parts = contentOf(turn, i);
        const j = rng.int(parts.length);
        // Anthropic's and Chat's keys on a part.
        const key = rng.pick(["cache_control", "id", "name", "signature"]);
        (parts[j] as Json)[key] = "x";
        return {
          variant: `${key} on messages[${i}].content[${j}]`,
          messages: turn,
          ...INVALID,
          detail: at(path("messages", i, "content", j), `Unrecognized key: "${key}"$`),
        };
      }
      // A UIMessage's keys, or Chat's.
      const key = rng.pick(["id", "createdAt", "toolInvocations", "name", "tool_call_id"]);
      (turn[i] as Json)[key] = "x";
      return {
        variant: `${key} on messages[${i}]`,
        messages: turn,
        ...INVALID,
        detail: at(path("messages", i), `Unrecognized key: "${key}"$`),
      };
    },
  },
  {
    name: "UIMessage instead of ModelMessage",
    mutate(turn, rng) {
      // `useChat`'s message: `parts` where a ModelMessage has `content`.
      const p = rng.int(turn.length + 1);
      const role = rng.pick(["user", "assistant"]);
      insertAt(turn, p, { id: "msg_ui", role, parts: [{ type: "text", text: "Hello" }] });
      return {
        variant: `${role} at ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("messages", p, "content"),
          'content must be a string or an array of parts; .*Unrecognized keys: "id", "parts"',
        ),
      };
    },
  },
  MESSAGES_NOT_AN_ARRAY,
  notAnObjectKind("message not an object", "messages", "expected a message object: .*$"),
  overBodyLimitKind("huge tool input over the body limit", "input", (turn, rng) => {
    const place = someCall(turn, rng);
    return (blob) => {
      partAt(turn, place).input = { content: blob };
    };
  }),
  {
    name: "JSON nested too deep",
    mutate(turn, rng) {
      const depth = rng.pick([MAX_DEPTH, 150, 1_000]);
      if (rng.next() < 0.5) {
        const [i, j] = someCall(turn, rng);
        partAt(turn, [i, j]).input = nested(depth);
        return {
          variant: `${depth} levels of input at messages[${i}].content[${j}]`,
          messages: turn,
          ...TOO_DEEP,
        };
      }
      const [r, k] = someResult(turn, rng);
      partAt(turn, [r, k]).output = { type: "json", value: nested(depth) };
      return {
        variant: `${depth} levels of output at messages[${r}].content[${k}]`,
        messages: turn,
        ...TOO_DEEP,
      };
    },
  },
];
