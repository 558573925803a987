/**
 * What every format's catalogue of malformed turns shares (see
 * test/helpers/malformed.ts): the problem types, the seeded PRNG, the path
 * and detail regexes, and the shape of a kind.
 */
/** The problem types of §8/§15's refusals. */
export const PROBLEM = {
  invalidMessages: "/problems/invalid-messages",
  unsupportedMessage: "/problems/unsupported-message",
  invalidRequest: "/problems/invalid-request",
  payloadTooLarge: "/problems/payload-too-large",
} as const;

/** Deeper JSON than this is refused in a request body (MAX_JSON_DEPTH of the API). */
export const MAX_DEPTH = 100;

export type Json = Record<string, unknown>;

/** mulberry32: a tiny seeded PRNG, so every choice below is reproducible. */
export function prng(seed: number) {
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
export type Rng = ReturnType<typeof prng>;

/** `[`, `]`, `.` escaped: a message path as a literal regex fragment. */
export function path(...parts: (string | number)[]): string {
  return parts
    .map((part, i) => (typeof part === "number" ? `\\[${part}\\]` : i === 0 ? part : `\\.${part}`))
    .join("");
}

/** A regex anchored at the path, then `rest` (a regex source). */
export function at(where: string, rest: string): RegExp {
  return new RegExp(`^${where}: ${rest}`, "s");
}

/** `text` as a literal regex fragment. */
export const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A JSON value nested `depth` objects deep: `{"a":{"a":…1…}}`. */
export function nested(depth: number): Json {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value as Json;
}

/**
 * What a mutation makes: the messages (or anything posted in their place, in
 * the format's field: `messages` or `input`) and the expectation.
 */
export interface Mutated {
  readonly variant: string;
  readonly messages: unknown;
  readonly status: 400 | 413 | 422;
  readonly type: string;
  readonly detail: RegExp;
  readonly dropSystem?: boolean;
  readonly bug?: string;
}

/** One kind of the catalogue: how to break a valid turn (a deep copy, free to change). */
export interface Kind {
  readonly name: string;
  readonly mutate: (turn: Json[], rng: Rng, context: Context) => Mutated;
}

/** What a kind may need besides the turn. */
export interface Context {
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

export const insertAt = <T>(items: T[], index: number, item: T): T[] => {
  items.splice(index, 0, item);
  return items;
};

/** The API's answer to a body over its limit: before any format reads it. */
function tooLarge(bodyLimitBytes: number) {
  return {
    status: 413,
    type: PROBLEM.payloadTooLarge,
    detail: new RegExp(
      `^the body is larger than ${bodyLimitBytes} bytes: split large tool outputs or raise the limit$`,
    ),
  } as const;
}

/**
 * The API's answer to a body nested deeper than {@link MAX_DEPTH}: checked
 * before any format reads it, so the detail names the limit, not the
 * message (JSON posted as JSON, unlike arguments inside a JSON string).
 */
export const TOO_DEEP = {
  status: 400,
  type: PROBLEM.invalidRequest,
  detail: new RegExp(`^the request body nests deeper than ${MAX_DEPTH} levels$`),
} as const;

/** The status and problem type of a malformed message (400) and of an unsupported one (422). */
export const INVALID = { status: 400, type: PROBLEM.invalidMessages } as const;
export const UNSUPPORTED = { status: 422, type: PROBLEM.unsupportedMessage } as const;

/**
 * The content of message `i` as an array of parts (Anthropic's blocks, the
 * AI SDK's parts): a string content becomes one text part, in place.
 */
export function contentOf(turn: Json[], i: number): Json[] {
  const message = turn[i] as Json;
  if (typeof message.content === "string")
    message.content = [{ type: "text", text: message.content }];
  return message.content as Json[];
}

/** Where the turn's content parts of `type` are: [message index, part index]. */
export function contentOfType(turn: Json[], type: string): [number, number][] {
  const out: [number, number][] = [];
  turn.forEach((message, i) => {
    if (Array.isArray(message.content)) {
      message.content.forEach((part: Json, j: number) => {
        if (part.type === type) out.push([i, j]);
      });
    }
  });
  return out;
}

/** The indexes of the turn's messages of `role`. */
export const indexesOf = (turn: Json[], role: string) =>
  turn.flatMap((message, i) => (message.role === role ? [i] : []));

/**
 * The kind `name`: a tool call's `what` (its input, its arguments) made
 * longer than the body limit, which the API refuses before any format reads
 * it. `place` finds (or adds) the call and answers how to set its `what`
 * from a long text.
 */
export function overBodyLimitKind(
  name: string,
  what: "input" | "arguments",
  place: (turn: Json[], rng: Rng) => (blob: string) => void,
): Kind {
  return {
    name,
    mutate(turn, rng, { bodyLimitBytes }) {
      const put = place(turn, rng);
      const blob = "x".repeat(bodyLimitBytes + rng.int(bodyLimitBytes));
      put(blob);
      return {
        variant: `${blob.length} bytes of ${what}`,
        messages: turn,
        ...tooLarge(bodyLimitBytes),
      };
    },
  };
}

/**
 * The kind `name`: the turn's `field` (`messages`, Responses' `input`) posted
 * as a value that is not an array, refused with `rest` (of the value's type).
 */
export function notAnArrayKind(
  name: string,
  field: "messages" | "input",
  rest: (kind: string) => string,
): Kind {
  return {
    name,
    mutate(_turn, rng) {
      const [value, kind] = rng.pick(NOT_ARRAYS);
      return { variant: kind, messages: value, ...INVALID, detail: at(field, rest(kind)) };
    },
  };
}

/** `messages` that are not an array: zod's own words, alike in every format that posts `messages`. */
export const MESSAGES_NOT_AN_ARRAY = notAnArrayKind(
  "messages not an array",
  "messages",
  (kind) => `Invalid input: expected array, received ${kind}$`,
);

/**
 * The kind `name`: a value that is not an object inserted among the turn's
 * `field`, refused at its place with `rest`; `bug` as in {@link Mutated}.
 */
export function notAnObjectKind(
  name: string,
  field: "messages" | "input",
  rest: string,
  bug?: string,
): Kind {
  return {
    name,
    mutate(turn, rng) {
      const [value, kind] = rng.pick(NOT_OBJECTS);
      const p = rng.int(turn.length + 1);
      insertAt(turn, p, value as Json);
      return {
        variant: `${kind} at ${p}`,
        messages: turn,
        ...INVALID,
        detail: at(path(field, p), rest),
        ...(bug ? { bug } : {}),
      };
    },
  };
}

/** Where a function call's `arguments` string is: the OpenAI formats' one place to break it. */
export interface ArgumentsSlot {
  /** Replaces the arguments string. */
  readonly set: (text: string) => void;
  /** Its path, as a regex fragment ({@link path}). */
  readonly path: string;
  /** How a variant names the call (`messages[2].tool_calls[0]`, `input[3]`). */
  readonly where: string;
}

/**
 * The kinds "arguments not JSON" and "arguments not an object" of the
 * OpenAI formats (Chat and Responses carry a call's arguments as a JSON
 * object encoded as a string, and refuse alike what is not one), for the
 * call `slot` finds (or adds) in a turn.
 */
export function argumentsKinds(slot: (turn: Json[], rng: Rng) => ArgumentsSlot): Kind[] {
  return [
    {
      name: "arguments not JSON",
      mutate(turn, rng) {
        const call = slot(turn, rng);
        const text = rng.pick(["{path: README.md}", "", '{"path":"README.md"', "{'a':1}", "NaN"]);
        call.set(text);
        return {
          variant: `${JSON.stringify(text)} at ${call.where}`,
          messages: turn,
          ...INVALID,
          detail: at(
            call.path,
            "is not valid JSON \\(.+\\): arguments must be a JSON object encoded as a string$",
          ),
        };
      },
    },
    {
      name: "arguments not an object",
      mutate(turn, rng) {
        const call = slot(turn, rng);
        const [text, kind] = rng.pick([
          ["[1,2]", "an array"],
          ["42", "a number"],
          ["null", "null"],
          ['"README.md"', "a string"],
          ["true", "a boolean"],
        ] as const);
        call.set(text);
        return {
          variant: `${text} at ${call.where}`,
          messages: turn,
          ...INVALID,
          detail: at(call.path, `must be a JSON object encoded as a string \\(got ${kind}\\)$`),
        };
      },
    },
  ];
}

/**
 * What an orphan result's refusal adds in every format: a turn's leading
 * results answer the previous turn's pending calls (docs/architecture.md §5).
 */
export const LEADING_RESULTS =
  " (a result for a call left pending at the end of the previous turn comes first in the next turn, before any other message)";
