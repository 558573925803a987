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
export const NOT_ARRAYS: readonly [unknown, string][] = [
  [{ role: "user", content: "hi" }, "object"],
  ["What is in README.md?", "string"],
  [42, "number"],
  [true, "boolean"],
  [null, "null"],
];

/** Values that are not a JSON object (as messages). */
export const NOT_OBJECTS: readonly [unknown, string][] = [
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
export function tooLarge(bodyLimitBytes: number) {
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
