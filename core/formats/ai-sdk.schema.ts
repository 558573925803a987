/**
 * The AI SDK format's zod schemas for `ModelMessage` and its parts, and the
 * types inferred from them (the mapping to events is in ./ai-sdk.ts).
 */
import * as z from "zod";
import { JsonObject } from "../events.ts";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../json.ts";
import {
  type ContentWording,
  documentedContent,
  isJsonObject,
  locatedContent,
  roleError,
} from "./shared.ts";

/** A JSON value (what `ai` types as `JSONValue`). */
export type JsonValue =
  | null
  | string
  | number
  | boolean
  | JsonValue[]
  | { [key: string]: JsonValue };

function isJsonValue(value: unknown): value is JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isJsonObject(value) && Object.values(value).every(isJsonValue);
}

// Not z.json(): the very value posted is kept (no copy), and the API's
// OpenAPI generator cannot follow a recursive schema.
const JsonValue = z
  .custom<JsonValue>(
    (value) => !jsonDepthExceeds(value) && isJsonValue(value),
    `expected a JSON value (nesting at most ${MAX_JSON_DEPTH} levels)`,
  )
  .meta({
    type: ["null", "boolean", "number", "string", "array", "object"],
    description: "Any JSON value, kept verbatim.",
  });

/** Provider-specific options: an object of JSON objects, kept verbatim. */
const ProviderOptions = z.record(z.string(), z.record(z.string(), JsonValue));
/** The optional `providerOptions` field every message and part takes. */
export const options = { providerOptions: ProviderOptions.optional() };

/** A text part (user or assistant). */
export const AiSdkTextPart = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  ...options,
});

/** An image part of a user message (base64 data or a URL, as a string). */
export const AiSdkImagePart = z.strictObject({
  type: z.literal("image"),
  image: z.string(),
  mediaType: z.string().optional(),
  ...options,
});

/** A file part of a user message (base64 data or a URL, as a string). */
export const AiSdkFilePart = z.strictObject({
  type: z.literal("file"),
  data: z.string(),
  filename: z.string().optional(),
  mediaType: z.string(),
  ...options,
});

/** A reasoning part of an assistant message. */
export const AiSdkReasoningPart = z.strictObject({
  type: z.literal("reasoning"),
  text: z.string(),
  ...options,
});

/** A tool call of an assistant message. */
export const AiSdkToolCallPart = z.strictObject({
  type: z.literal("tool-call"),
  toolCallId: z.string(),
  toolName: z.string(),
  // Not z.record: the very object posted is kept (no copy).
  input: JsonObject,
  ...options,
  providerExecuted: z.boolean().optional(),
});

const outputContentPart = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text: z.string(), ...options }),
  z.strictObject({ type: z.literal("media"), data: z.string(), mediaType: z.string() }),
  z.strictObject({
    type: z.literal("file-data"),
    data: z.string(),
    mediaType: z.string(),
    filename: z.string().optional(),
    ...options,
  }),
  z.strictObject({
    type: z.literal("file-url"),
    url: z.string(),
    mediaType: z.string().optional(),
    ...options,
  }),
  z.strictObject({
    type: z.literal("file-id"),
    fileId: z.union([z.string(), z.record(z.string(), z.string())]),
    ...options,
  }),
  z.strictObject({
    type: z.literal("image-data"),
    data: z.string(),
    mediaType: z.string(),
    ...options,
  }),
  z.strictObject({ type: z.literal("image-url"), url: z.string(), ...options }),
  z.strictObject({
    type: z.literal("image-file-id"),
    fileId: z.union([z.string(), z.record(z.string(), z.string())]),
    ...options,
  }),
  z.strictObject({ type: z.literal("custom"), ...options }),
]);

/** A tool result's output. */
export const AiSdkToolResultOutput = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), value: z.string(), ...options }),
  z.strictObject({ type: z.literal("json"), value: JsonValue, ...options }),
  z.strictObject({
    type: z.literal("execution-denied"),
    reason: z.string().optional(),
    ...options,
  }),
  z.strictObject({ type: z.literal("error-text"), value: z.string(), ...options }),
  z.strictObject({ type: z.literal("error-json"), value: JsonValue, ...options }),
  z.strictObject({ type: z.literal("content"), value: z.array(outputContentPart), ...options }),
]);

/** A tool result of a tool message. */
export const AiSdkToolResultPart = z.strictObject({
  type: z.literal("tool-result"),
  toolCallId: z.string(),
  toolName: z.string(),
  output: AiSdkToolResultOutput,
  ...options,
});

/** A tool approval request of an assistant message: the call `toolCallId` waits for the user's approval. */
export const AiSdkToolApprovalRequest = z.strictObject({
  type: z.literal("tool-approval-request"),
  approvalId: z.string(),
  toolCallId: z.string(),
  signature: z.string().optional(),
  inputSchemaInput: JsonValue.optional(),
});

/** The user's answer to a tool approval request, in a tool message. */
export const AiSdkToolApprovalResponse = z.strictObject({
  type: z.literal("tool-approval-response"),
  approvalId: z.string(),
  approved: z.boolean(),
  reason: z.string().optional(),
  providerExecuted: z.boolean().optional(),
});

/** A part of a user message. */
export const AiSdkUserPart = z.discriminatedUnion(
  "type",
  [AiSdkTextPart, AiSdkImagePart, AiSdkFilePart],
  { error: "a user message takes text, image and file parts" },
);

/**
 * A part of an assistant message (the ones the service models): a
 * `tool-result` there is a provider-executed tool's (docs/architecture.md §15
 * "Hosted tools"), as is a `tool-call` with `providerExecuted: true`.
 */
export const AiSdkAssistantPart = z.discriminatedUnion(
  "type",
  [
    AiSdkTextPart,
    AiSdkReasoningPart,
    AiSdkToolCallPart,
    AiSdkToolResultPart,
    AiSdkToolApprovalRequest,
  ],
  {
    error:
      "an assistant message takes text, reasoning, tool-call, tool-result and tool-approval-request parts",
  },
);

/** A part of a tool message: a result, or the user's answer to an approval request. */
export const AiSdkToolPart = z.discriminatedUnion(
  "type",
  [AiSdkToolResultPart, AiSdkToolApprovalResponse],
  { error: "a tool message takes tool-result and tool-approval-response parts" },
);

const EMPTY_CONTENT = "content must not be empty";
const CONTENT: ContentWording = { empty: EMPTY_CONTENT, items: "parts" };

const toolContent = z.array(AiSdkToolPart).min(1, EMPTY_CONTENT);

/** A message of any role, with user and assistant content parsed by `user` and `assistant`. */
function messageWith<U extends z.ZodType, A extends z.ZodType>(user: U, assistant: A) {
  return z.discriminatedUnion(
    "role",
    [
      z.strictObject({ role: z.literal("user"), content: user, ...options }),
      z.strictObject({ role: z.literal("assistant"), content: assistant, ...options }),
      z.strictObject({ role: z.literal("tool"), content: toolContent, ...options }),
    ],
    {
      error: roleError(
        'role must be "user", "assistant" or "tool" ("system" only leading, with drop_system)',
        'expected a message object: {"role": "user" | "assistant" | "tool", "content": …}',
      ),
    },
  );
}

/** One `ModelMessage` as the service takes it (system messages are refused before). */
export const AiSdkMessageSchema = messageWith(
  documentedContent(AiSdkUserPart, CONTENT),
  documentedContent(AiSdkAssistantPart, CONTENT),
);

/** {@link AiSdkMessageSchema} with content issues located at the part (for parsing a posted turn). */
export const LocatedMessage = messageWith(
  locatedContent(AiSdkUserPart, CONTENT),
  locatedContent(AiSdkAssistantPart, CONTENT),
);

/** A text part. */
export type AiSdkTextPart = z.infer<typeof AiSdkTextPart>;
/** A part of a user message. */
export type AiSdkUserPart = z.infer<typeof AiSdkUserPart>;
/** A part of an assistant message. */
export type AiSdkAssistantPart = z.infer<typeof AiSdkAssistantPart>;
/** A tool call part. */
export type AiSdkToolCallPart = z.infer<typeof AiSdkToolCallPart>;
/** A tool result part. */
export type AiSdkToolResultPart = z.infer<typeof AiSdkToolResultPart>;
/** A tool approval request part. */
export type AiSdkToolApprovalRequest = z.infer<typeof AiSdkToolApprovalRequest>;
/** A tool approval response part. */
export type AiSdkToolApprovalResponse = z.infer<typeof AiSdkToolApprovalResponse>;
/** A part of a tool message. */
export type AiSdkToolPart = z.infer<typeof AiSdkToolPart>;
/** A tool result's output. */
export type AiSdkToolResultOutput = z.infer<typeof AiSdkToolResultOutput>;
/** One message, assignable to the package's `ModelMessage`. */
export type AiSdkMessage = z.infer<typeof AiSdkMessageSchema>;
