/**
 * Zod schemas of the OpenAI Chat Completions messages and content parts (as
 * the API documents them) and the types inferred from them; the conversions
 * live in `openai-chat.ts`.
 */
import * as z from "zod";
import { isJsonObject } from "./shared.ts";

/** A text content part. */
export const ChatTextPart = z.looseObject({ type: z.literal("text"), text: z.string() });

/** An assistant's refusal content part. */
export const ChatRefusalPart = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });

/** An image content part (kept verbatim in metadata). */
export const ChatImagePart = z.looseObject({
  type: z.literal("image_url"),
  image_url: z.looseObject({
    // OpenAI's schema wants a URI (an https: or data: URL) and one of its detail levels.
    url: z.string().regex(/^[A-Za-z][A-Za-z0-9+.-]*:/, "url must be a URL (https: or data:)"),
    detail: z.enum(["auto", "low", "high"]).optional(),
  }),
});

/** An audio input content part (kept verbatim in metadata). */
export const ChatAudioPart = z.looseObject({
  type: z.literal("input_audio"),
  input_audio: z.looseObject({ data: z.string(), format: z.enum(["wav", "mp3"]) }),
});

/** A file content part (kept verbatim in metadata). */
export const ChatFilePart = z.looseObject({
  type: z.literal("file"),
  file: z.looseObject({
    file_data: z.string().optional(),
    file_id: z.string().optional(),
    filename: z.string().optional(),
  }),
});

/** The detail of a tagged union's failure: no object, no tag, or an unknown tag. */
function tagError(what: string, key: string, tags: readonly string[]) {
  const expected = tags.length === 1 ? JSON.stringify(tags[0]) : `one of ${tags.join(", ")}`;
  return (issue: { input: unknown }): string => {
    if (!isJsonObject(issue.input)) return `expected a ${what} object`;
    const tag = issue.input[key];
    return tag === undefined
      ? `a ${what} needs a ${key}: ${expected}`
      : `unknown ${what} ${key} ${JSON.stringify(tag)}: expected ${expected}`;
  };
}

/** A content part of a user message. */
export const ChatUserPart = z.discriminatedUnion(
  "type",
  [ChatTextPart, ChatImagePart, ChatAudioPart, ChatFilePart],
  { error: tagError("content part", "type", ["text", "image_url", "input_audio", "file"]) },
);

/** A content part of an assistant message. */
export const ChatAssistantPart = z.discriminatedUnion("type", [ChatTextPart, ChatRefusalPart], {
  error: tagError("content part", "type", ["text", "refusal"]),
});

/** A content part of a system, developer or tool message (text only). */
const textOnlyPart = z.looseObject(
  {
    type: z.literal("text", {
      error: (issue) =>
        issue.input === undefined
          ? 'a content part needs a type: "text"'
          : `unknown content part type ${JSON.stringify(issue.input)}: expected "text"`,
    }),
    text: z.string(),
  },
  { error: "expected a content part object" },
);

/** A string or a non-empty parts array; a bad part is located by {@link located}. */
function content<T>(part: z.ZodType<T>) {
  return z.union([z.string(), z.array(part).min(1, "a content array needs at least one part")], {
    error: "expected a string or an array of content parts",
  });
}

/** A system prompt: refused in a turn unless leading and dropped (`dropSystem`). */
export const ChatSystemMessage = z.looseObject({
  role: z.literal("system"),
  content: content(textOnlyPart),
  name: z.string().optional(),
});

/** A developer prompt: treated as a system prompt. */
export const ChatDeveloperMessage = z.looseObject({
  role: z.literal("developer"),
  content: content(textOnlyPart),
  name: z.string().optional(),
});

/** A user message. */
export const ChatUserMessage = z.looseObject({
  role: z.literal("user"),
  content: content(ChatUserPart),
  name: z.string().optional(),
});

/** A function tool call of an assistant message. */
export const ChatFunctionToolCall = z.looseObject({
  id: z.string(),
  type: z.literal("function"),
  // Strict: the function is rebuilt from JP's name and arguments, so another key would be lost.
  function: z.strictObject({ name: z.string(), arguments: z.string() }),
});

/** A custom (free-form input) tool call: its input string becomes JP's `arguments.input`. */
export const ChatCustomToolCall = z.looseObject({
  id: z.string(),
  type: z.literal("custom"),
  custom: z.looseObject({ name: z.string(), input: z.string() }),
});

/** An assistant tool call. */
export const ChatToolCall = z.discriminatedUnion(
  "type",
  [ChatFunctionToolCall, ChatCustomToolCall],
  { error: tagError("tool call", "type", ["function", "custom"]) },
);

/** An assistant message. */
export const ChatAssistantMessage = z.looseObject({
  role: z.literal("assistant"),
  content: content(ChatAssistantPart).nullable().optional(),
  refusal: z.string().nullable().optional(),
  name: z.string().optional(),
  tool_calls: z
    .array(ChatToolCall)
    .min(1, "tool_calls needs at least one call (leave it out instead)")
    .optional(),
  audio: z.looseObject({ id: z.string() }).nullable().optional(),
  function_call: z.looseObject({ name: z.string(), arguments: z.string() }).nullable().optional(),
});

/** A tool result. */
export const ChatToolMessage = z.looseObject({
  role: z.literal("tool"),
  tool_call_id: z.string(),
  content: content(textOnlyPart),
});

/** The deprecated function result message: refused (422). */
export const ChatFunctionMessage = z.looseObject({
  role: z.literal("function"),
  name: z.string(),
  content: z.string().nullable(),
});

const ROLES = ["system", "developer", "user", "assistant", "tool", "function"] as const;

/** One Chat Completions request message (the subset of OpenAI's `ChatCompletionMessageParam` we validate). */
export const ChatMessage = z.discriminatedUnion(
  "role",
  [
    ChatSystemMessage,
    ChatDeveloperMessage,
    ChatUserMessage,
    ChatAssistantMessage,
    ChatToolMessage,
    ChatFunctionMessage,
  ],
  { error: tagError("message", "role", ROLES) },
);

/** The parsed value of the `ChatTextPart` schema. */
export type ChatTextPart = z.infer<typeof ChatTextPart>;
/** The parsed value of the `ChatUserPart` schema. */
export type ChatUserPart = z.infer<typeof ChatUserPart>;
/** The parsed value of the `ChatAssistantPart` schema. */
export type ChatAssistantPart = z.infer<typeof ChatAssistantPart>;
/** The parsed value of the `ChatToolCall` schema. */
export type ChatToolCall = z.infer<typeof ChatToolCall>;
/** The parsed value of the `ChatFunctionToolCall` schema. */
export type ChatFunctionToolCall = z.infer<typeof ChatFunctionToolCall>;
/** The parsed value of the `ChatUserMessage` schema. */
export type ChatUserMessage = z.infer<typeof ChatUserMessage>;
/** The parsed value of the `ChatAssistantMessage` schema. */
export type ChatAssistantMessage = z.infer<typeof ChatAssistantMessage>;
/** The parsed value of the `ChatToolMessage` schema. */
export type ChatToolMessage = z.infer<typeof ChatToolMessage>;
/** The parsed value of the `ChatMessage` schema. */
export type ChatMessage = z.infer<typeof ChatMessage>;
