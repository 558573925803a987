/**
 * Malformed OpenAI Responses turns: the openai-responses catalogue of
 * test/helpers/malformed.ts. The details are located at the item as the
 * platform wrote it (`input[3].arguments`); the refusals are the Responses
 * rules of core/formats/openai-responses.ts and OpenAI's published `InputItem`
 * schema (a required field missing, a field of the wrong type or value).
 */
import {
  argumentsKinds,
  at,
  INVALID,
  insertAt,
  type Json,
  type Kind,
  LEADING_RESULTS,
  literal,
  MAX_DEPTH,
  nested,
  notAnArrayKind,
  notAnObjectKind,
  overBodyLimitKind,
  path,
  type Rng,
  UNSUPPORTED,
} from "./common.ts";

const MODELLED = "message, reasoning, function_call, function_call_output, item_reference";
const ROLES = '"user", "assistant", "system" or "developer"';
const SYSTEM =
  "system and developer prompts are not conversation turns: the platform sends them with each call";

/** The indexes of the turn's items of `type`. */
function itemsOfType(turn: Json[], type: string): number[] {
  return turn.flatMap((item, i) => (item.type === type ? [i] : []));
}

/** The indexes of the turn's messages of `role` (with `type: "message"` or without a type). */
function messagesOf(turn: Json[], role: string): number[] {
  return turn.flatMap((item, i) =>
    item.role === role && (item.type === undefined || item.type === "message") ? [i] : [],
  );
}

function call(callId: string, args = '{"path":"README.md"}'): Json {
  return { type: "function_call", call_id: callId, name: "read_file", arguments: args };
}

function output(callId: string, text = "a result"): Json {
  return { type: "function_call_output", call_id: callId, output: text };
}

/** A turn with an answered call: [call index, output index], adding a pair when there is none. */
function ensureAnsweredCall(turn: Json[], rng: Rng): [number, number] {
  const pairs = itemsOfType(turn, "function_call_output").map((o): [number, number] => {
    const id = turn[o]?.call_id;
    return [turn.findIndex((item) => item.type === "function_call" && item.call_id === id), o];
  });
  if (pairs.length > 0) return rng.pick(pairs);
  turn.push(call("call_added"), output("call_added"));
  return [turn.length - 2, turn.length - 1];
}

/** A turn with a function call: its index. */
const ensureCall = (turn: Json[], rng: Rng): number => ensureAnsweredCall(turn, rng)[0];

/** A turn with an output message (an id and `output_text` parts): its index. */
function ensureOutputMessage(turn: Json[], rng: Rng): number {
  const withId = messagesOf(turn, "assistant").filter((i) => typeof turn[i]?.id === "string");
  if (withId.length > 0) return rng.pick(withId);
  turn.push({
    id: "msg_added",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "Done.", annotations: [] }],
  });
  return turn.length - 1;
}

/** A turn with a reasoning item: its index. */
function ensureReasoning(turn: Json[], rng: Rng): number {
  const reasoning = itemsOfType(turn, "reasoning");
  if (reasoning.length > 0) return rng.pick(reasoning);
  turn.push({ type: "reasoning", id: "rs_added", summary: [], encrypted_content: "gAAAA==" });
  return turn.length - 1;
}

/** The detail of an output at `input[p]` whose call `id` is not earlier in the turn. */
const orphan = (p: number, id: string) =>
  at(
    path("input", p, "call_id"),
    `orphan function_call_output: no function_call with call_id "${literal(id)}" comes before it in this turn; post it in the turn that holds its call${literal(LEADING_RESULTS)}`,
  );

/** `call_id` of the item at `i`. */
const callIdAt = (turn: Json[], i: number) => (turn[i] as Json).call_id as string;

export const responsesKinds: readonly Kind[] = [
  {
    name: "orphan function_call_output",
    mutate(turn, rng, { earlierCallId }) {
      const leads = (c: number) =>
        turn.slice(0, c).every((item) => item.type === "function_call_output");
      const pair = rng.next() < 0.4 ? ensureAnsweredCall(turn, rng) : undefined;
      // Moved to the turn's leading outputs it would answer the previous turn: not an orphan.
      if (pair !== undefined && !leads(pair[0])) {
        // The output moved before its call: answered, but not yet asked.
        const [c, o] = pair;
        const [moved] = turn.splice(o, 1) as [Json];
        insertAt(turn, c, moved);
        const id = moved.call_id as string;
        return {
          variant: `output of ${id} moved before its call, to ${c}`,
          messages: turn,
          ...INVALID,
          detail: orphan(c, id),
        };
      }
      // An output for a call no item of this turn makes (maybe one of an earlier turn).
      const id = rng.pick(["call_nowhere", earlierCallId, "toolu_other_format"]);
      // After the turn's first item: outputs leading a turn answer the previous turn's calls.
      const p = 1 + rng.int(turn.length);
      insertAt(turn, p, output(id));
      return {
        variant: `output for ${id} at ${p}`,
        messages: turn,
        ...INVALID,
        detail: orphan(p, id),
      };
    },
  },
  {
    name: "duplicate call_id",
    mutate(turn, rng) {
      const c = ensureCall(turn, rng);
      const id = callIdAt(turn, c);
      const p = c + 1 + rng.int(turn.length - c);
      insertAt(turn, p, { ...call(id, "{}"), name: "grep" });
      return {
        variant: `${id} again at ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", p, "call_id"),
          `duplicate call_id "${literal(id)}" \\(also at ${path("input", c, "call_id")}\\): tool call ids must be unique within a turn`,
        ),
      };
    },
  },
  {
    name: "second output for a call",
    mutate(turn, rng) {
      const [, o] = ensureAnsweredCall(turn, rng);
      const id = callIdAt(turn, o);
      const p = o + 1 + rng.int(turn.length - o);
      insertAt(turn, p, output(id, "again"));
      return {
        variant: `${id} at ${o} and ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", p, "call_id"),
          `a second output for call_id "${literal(id)}" \\(the first is ${path("input", o)}\\); a call takes one output`,
        ),
      };
    },
  },
  {
    name: "function_call without call_id",
    mutate(turn, rng) {
      const c = ensureCall(turn, rng);
      const item = turn[c] as Json;
      // Chat's spelling, or only the item id (`fc_…`), which is not the call id.
      const variant = rng.pick(["absent", "tool_call_id", "id only"] as const);
      if (variant === "tool_call_id") item.tool_call_id = item.call_id;
      if (variant === "id only") item.id = `fc_${c}`;
      delete item.call_id;
      return {
        variant: `${variant} at input[${c}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", c, "call_id"),
          "Invalid input: expected string, received undefined",
        ),
      };
    },
  },
  {
    name: "call_id empty or too long",
    mutate(turn, rng) {
      const [c, o] = ensureAnsweredCall(turn, rng);
      const long = rng.next() < 0.6;
      // The output keeps answering its call: only the id's length is wrong.
      const id = long ? `call_${"x".repeat(60 + rng.int(40))}` : "";
      (turn[c] as Json).call_id = id;
      (turn[o] as Json).call_id = id;
      return {
        variant: `${id.length} characters at input[${c}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", c, "call_id"),
          long
            ? "a call_id is at most 64 characters \\(OpenAI's limit\\)"
            : "a call_id must not be empty",
        ),
      };
    },
  },
  ...argumentsKinds((turn, rng) => {
    const c = ensureCall(turn, rng);
    return {
      set: (text) => {
        (turn[c] as Json).arguments = text;
      },
      path: path("input", c, "arguments"),
      where: `input[${c}]`,
    };
  }),
  {
    name: "arguments as JSON, not a string",
    mutate(turn, rng) {
      const c = ensureCall(turn, rng);
      // What Anthropic and the AI SDK post: the object itself.
      const [value, kind] = rng.pick([
        [{ path: "README.md" }, "object"],
        [{}, "object"],
        [["README.md"], "array"],
        [null, "null"],
      ] as const);
      (turn[c] as Json).arguments = value;
      return {
        variant: `${JSON.stringify(value)} at input[${c}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", c, "arguments"),
          `Invalid input: expected string, received ${kind}$`,
        ),
      };
    },
  },
  {
    name: "arguments nested too deep",
    mutate(turn, rng) {
      const c = ensureCall(turn, rng);
      const depth = rng.pick([MAX_DEPTH + 1, 150, 1_000, 3_000]);
      (turn[c] as Json).arguments = JSON.stringify(nested(depth));
      return {
        variant: `${depth} levels at input[${c}]`,
        messages: turn,
        ...INVALID,
        // Inside the string the body's depth check cannot see it: the format's must, located.
        detail: at(path("input", c, "arguments"), `nests deeper than ${MAX_DEPTH} levels`),
      };
    },
  },
  {
    name: "function_call_output without a string or parts",
    mutate(turn, rng) {
      const [, o] = ensureAnsweredCall(turn, rng);
      const item = turn[o] as Json;
      // Absent, or the tool's JSON result posted as JSON (Responses wants its text).
      const value = rng.pick<unknown>([undefined, { result: "ok" }, 42, null, true]);
      if (value === undefined) delete item.output;
      else item.output = value;
      return {
        variant: `${JSON.stringify(value) ?? "absent"} at input[${o}]`,
        messages: turn,
        ...INVALID,
        detail: at(path("input", o, "output"), "expected a string or an array of content parts$"),
      };
    },
  },
  {
    name: "reasoning without a summary array",
    mutate(turn, rng) {
      const r = ensureReasoning(turn, rng);
      const item = turn[r] as Json;
      const [value, kind] = rng.pick([
        [undefined, "undefined"],
        ["I should read the file.", "string"],
        [{ type: "summary_text", text: "I should read the file." }, "object"],
        [null, "null"],
      ] as const);
      if (value === undefined) delete item.summary;
      else item.summary = value;
      return {
        variant: `summary ${kind} at input[${r}]`,
        messages: turn,
        ...INVALID,
        detail: at(path("input", r, "summary"), `Invalid input: expected array, received ${kind}$`),
      };
    },
  },
  {
    name: "reasoning without its id",
    mutate(turn, rng) {
      const r = ensureReasoning(turn, rng);
      delete (turn[r] as Json).id;
      return {
        variant: `input[${r}]`,
        messages: turn,
        ...INVALID,
        detail: at(path("input", r, "id"), "Invalid input: expected string, received undefined$"),
      };
    },
  },
  {
    name: "unknown item type",
    mutate(turn, rng) {
      // Other APIs' names for what Responses calls function_call(_output), or a typo.
      const type = rng.pick([
        "tool_call",
        "function_result",
        "tool_result",
        "text",
        "functionCall",
      ]);
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, { type, call_id: "call_x", name: "read_file", arguments: "{}" });
      return {
        variant: `${type} at ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", p),
          `unknown item type "${literal(type)}": expected one of ${MODELLED}$`,
        ),
      };
    },
  },
  {
    name: "item type not modelled",
    mutate(turn, rng) {
      // The SDK's hosted tool items are carried (core/formats/responses-hosted.ts), not refused.
      const type = rng.pick(["additional_tools", "program", "mcp_future_item"]);
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, { type, id: "ws_1", status: "completed" });
      return {
        variant: `${type} at ${p}`,
        messages: turn,
        ...UNSUPPORTED,
        detail: at(
          path("input", p, "type"),
          `items of type "${literal(type)}" are not supported: the service models ${MODELLED} items`,
        ),
      };
    },
  },
  {
    name: "unknown role",
    mutate(turn, rng) {
      const messages = [...messagesOf(turn, "user"), ...messagesOf(turn, "assistant")];
      const i = messages.length > 0 ? rng.pick(messages) : 0;
      if (messages.length === 0) insertAt(turn, 0, { role: "user", content: "Hello" });
      const role = rng.pick(["tool", "bot", "model", "function", "Assistant", undefined]);
      if (role === undefined) delete (turn[i] as Json).role;
      else (turn[i] as Json).role = role;
      return {
        variant: `input[${i}].role = ${JSON.stringify(role)}`,
        messages: turn,
        ...INVALID,
        detail: at(path("input", i, "role"), `a message's role must be ${ROLES}$`),
      };
    },
  },
  {
    name: "system prompt without drop_system",
    mutate(turn, rng) {
      const role = rng.pick(["system", "developer"]);
      const leading = rng.next() < 0.6;
      const p = leading ? 0 : 1 + rng.int(turn.length);
      const typed = rng.next() < 0.5 ? { type: "message" } : {};
      insertAt(turn, p, { ...typed, role, content: "You are a careful agent." });
      // One after the turn's first other item is refused even with drop_system.
      const dropSystem = !leading && rng.next() < 0.5;
      return {
        variant: `${role} at ${p}${dropSystem ? " with drop_system" : ""}`,
        messages: turn,
        ...UNSUPPORTED,
        detail: at(
          path("input", p),
          `${leading ? "" : `a ${role} message after the turn's first other item: `}${SYSTEM}.*drop_system: true${leading ? "" : ".*only leading ones are dropped"}`,
        ),
        ...(dropSystem ? { dropSystem } : {}),
      };
    },
  },
  {
    name: "empty message",
    mutate(turn, rng) {
      const variant = rng.pick(["user ''", "user []", "user [input_text '']", "assistant ''"]);
      const p = rng.int(turn.length + 1);
      const [role, content, expected] =
        variant === "user ''"
          ? ["user", "", "a user message needs text or a content part"]
          : variant === "user []"
            ? ["user", [], "a content array needs at least one part"]
            : variant === "assistant ''"
              ? ["assistant", "", "an assistant message needs text or a content part"]
              : [
                  "user",
                  [{ type: "input_text", text: "" }],
                  "a user message needs text or a content part",
                ];
      insertAt(turn, p, { role, content });
      return {
        variant: `${variant} at ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(path("input", p, "content"), `${expected}$`),
      };
    },
  },
  {
    name: "content part of another API",
    mutate(turn, rng) {
      const assistant = rng.next() < 0.4;
      const j = rng.int(2);
      if (assistant) {
        // An output message takes output_text parts: input_text is a user's, text Chat's.
        const type = rng.pick(["input_text", "text"]);
        const m = ensureOutputMessage(turn, rng);
        const parts = (turn[m] as Json).content as Json[];
        const k = Math.min(j, parts.length);
        parts.splice(k, 0, { type, text: "see this" });
        return {
          variant: `${type} in assistant input[${m}].content[${k}]`,
          messages: turn,
          ...INVALID,
          detail: at(
            path("input", m, "content", k, "type"),
            'Invalid input: expected "output_text"$',
          ),
        };
      }
      // Chat's part types, an output part, or an audio part Responses has no item for.
      const [type, part] = rng.pick([
        ["text", { text: "see this" }],
        ["image_url", { image_url: { url: "https://example.com/cat.png" } }],
        ["output_text", { text: "see this", annotations: [] }],
        ["input_audio", { input_audio: { data: "UklGRg==", format: "wav" } }],
      ] as const);
      const p = rng.int(turn.length + 1);
      const parts: Json[] = [{ type: "input_text", text: "Look:" }];
      parts.splice(j, 0, { type, ...part });
      insertAt(turn, p, { type: "message", role: "user", content: parts });
      return {
        variant: `${type} in user input[${p}].content[${j}]`,
        messages: turn,
        ...INVALID,
        detail: at(
          path("input", p, "content", j, "type"),
          "a content part takes type input_text, input_image or input_file$",
        ),
      };
    },
  },
  {
    name: "input_image without detail or URL",
    mutate(turn, rng) {
      const p = rng.int(turn.length + 1);
      const missing = rng.next() < 0.5;
      const image: Json = missing
        ? { type: "input_image", image_url: "https://example.com/cat.png" }
        : {
            type: "input_image",
            image_url: rng.pick(["cat.png", "//example.com/cat.png"]),
            detail: "auto",
          };
      insertAt(turn, p, { role: "user", content: [{ type: "input_text", text: "Look:" }, image] });
      return {
        variant: `${missing ? "no detail" : `image_url ${JSON.stringify(image.image_url)}`} at input[${p}].content[1]`,
        messages: turn,
        ...INVALID,
        detail: missing
          ? at(
              path("input", p, "content", 1, "detail"),
              'Invalid option: expected one of "low"\\|"high"\\|"auto"\\|"original"$',
            )
          : at(
              path("input", p, "content", 1, "image_url"),
              "image_url must be a URL \\(https: or data:\\)$",
            ),
      };
    },
  },
  {
    name: "annotation in Chat's shape",
    mutate(turn, rng) {
      const m = ensureOutputMessage(turn, rng);
      const parts = (turn[m] as Json).content as Json[];
      const j = rng.int(parts.length);
      // Chat Completions nests the citation under its type; Responses has it flat.
      const chat = {
        type: "url_citation",
        url_citation: {
          url: "https://example.com",
          title: "Example",
          start_index: 0,
          end_index: 1,
        },
      };
      const annotations = [...(((parts[j] as Json).annotations as Json[] | undefined) ?? [])];
      const k = rng.int(annotations.length + 1);
      annotations.splice(
        k,
        0,
        rng.next() < 0.7 ? chat : { type: "citation", url: "https://example.com" },
      );
      (parts[j] as Json).annotations = annotations;
      const nestedCitation = "url_citation" in (annotations[k] as Json);
      return {
        variant: `${nestedCitation ? "Chat's url_citation" : "type citation"} at input[${m}].content[${j}].annotations[${k}]`,
        messages: turn,
        ...INVALID,
        detail: nestedCitation
          ? at(
              path("input", m, "content", j, "annotations", k, "url"),
              "Invalid input: expected string, received undefined",
            )
          : at(
              path("input", m, "content", j, "annotations", k, "type"),
              "an annotation's type is file_citation, url_citation, container_file_citation or file_path$",
            ),
        bug: "an annotation OpenAI's schema refuses (Chat's nested url_citation, an unknown type) was stored (202) and re-emitted, so the projection was no valid Responses input",
      };
    },
  },
  {
    name: "phase or status not one of OpenAI's",
    mutate(turn, rng) {
      const statusOf = rng.next() < 0.5;
      if (statusOf) {
        // Any item but a user message (whose status OpenAI also types, but platforms never send).
        const items = turn.flatMap((item, i) => (item.role === "user" ? [] : [i]));
        const c = items.length > 0 ? rng.pick(items) : ensureCall(turn, rng);
        const status = rng.pick(["done", "failed", "Completed", "complete"]);
        (turn[c] as Json).status = status;
        return {
          variant: `status ${status} at input[${c}]`,
          messages: turn,
          ...INVALID,
          detail: at(
            path("input", c, "status"),
            'Invalid option: expected one of "in_progress"\\|"completed"\\|"incomplete"$',
          ),
        };
      }
      const m = ensureOutputMessage(turn, rng);
      const phase = rng.pick(["final", "analysis", "answer", 1]);
      (turn[m] as Json).phase = phase;
      return {
        variant: `phase ${JSON.stringify(phase)} at input[${m}]`,
        messages: turn,
        ...INVALID,
        detail: at(path("input", m, "phase"), 'a phase is "commentary" or "final_answer"$'),
        bug: "an assistant message's `phase` outside OpenAI's enum (commentary, final_answer) was stored (202) and re-emitted, so the projection was no valid Responses input",
      };
    },
  },
  notAnArrayKind("input not an array", "input", () => "expected an array of input items$"),
  notAnObjectKind("item not an object", "input", "expected an input item object$"),
  overBodyLimitKind("huge arguments over the body limit", "arguments", (turn, rng) => {
    const c = ensureCall(turn, rng);
    return (blob) => {
      (turn[c] as Json).arguments = JSON.stringify({ content: blob });
    };
  }),
];
