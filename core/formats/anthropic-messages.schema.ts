/**
 * Zod schemas of the Anthropic Messages API messages the service models (the
 * blocks of either role, the documented and the located message schemas) and
 * the types inferred from them, and the 422 for block types they do not model;
 * the conversions live in `anthropic-messages.ts`.
 */
import * as z from "zod";
import { JsonObject } from "../events.ts";
import {
  HOSTED_BLOCK_TYPES,
  ServerToolResultBlock,
  ServerToolUseBlock,
} from "./anthropic-hosted.ts";
import { type MessagePath, unsupportedMessage } from "./issues.ts";
import {
  type ContentWording,
  documentedContent,
  forEachPostedPart,
  isJsonObject,
  locatedContent,
  roleError,
} from "./shared.ts";

// Opaque nested data (cache control, sources, citations) is validated as the
// SDK types it and kept verbatim; loose objects keep fields newer than us.
const CacheControl = z
  .looseObject({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() })
  .nullable()
  .optional();

const citationBase = { cited_text: z.string() };
const documentCitation = {
  ...citationBase,
  document_index: z.number(),
  document_title: z.string().nullable(),
};
const Citation = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("char_location"),
    ...documentCitation,
    start_char_index: z.number(),
    end_char_index: z.number(),
  }),
  z.looseObject({
    type: z.literal("page_location"),
    ...documentCitation,
    start_page_number: z.number(),
    end_page_number: z.number(),
  }),
  z.looseObject({
    type: z.literal("content_block_location"),
    ...documentCitation,
    start_block_index: z.number(),
    end_block_index: z.number(),
  }),
  z.looseObject({
    type: z.literal("web_search_result_location"),
    ...citationBase,
    encrypted_index: z.string(),
    title: z.string().nullable(),
    url: z.string(),
  }),
  z.looseObject({
    type: z.literal("search_result_location"),
    ...citationBase,
    search_result_index: z.number(),
    source: z.string(),
    title: z.string().nullable(),
    start_block_index: z.number(),
    end_block_index: z.number(),
  }),
]);

/** A text block (either role; also a tool result part). */
export const TextBlock = z.strictObject({
  type: z.literal("text"),
  text: z.string().min(1, "a text block must not be empty (the API refuses it)"),
  cache_control: CacheControl,
  citations: z.array(Citation).nullable().optional(),
});

/** A media source by URL or by uploaded file id (images and documents alike). */
const UrlSource = z.looseObject({ type: z.literal("url"), url: z.string() });
const FileSource = z.looseObject({ type: z.literal("file"), file_id: z.string() });

const ImageSource = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("base64"),
    media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
    data: z.string(),
  }),
  UrlSource,
  FileSource,
]);

/** An image block, kept verbatim in metadata. */
export const ImageBlock = z.strictObject({
  type: z.literal("image"),
  source: ImageSource,
  cache_control: CacheControl,
  transformations: z
    .looseObject({ oversized_image: z.enum(["downsize", "error"]).optional() })
    .nullable()
    .optional(),
});

const DocumentSource = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("base64"),
    media_type: z.literal("application/pdf"),
    data: z.string(),
  }),
  z.looseObject({ type: z.literal("text"), media_type: z.literal("text/plain"), data: z.string() }),
  z.looseObject({
    type: z.literal("content"),
    content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextBlock, ImageBlock]))]),
  }),
  UrlSource,
  FileSource,
]);

/** A document block, kept verbatim in metadata. */
export const DocumentBlock = z.strictObject({
  type: z.literal("document"),
  source: DocumentSource,
  cache_control: CacheControl,
  citations: z.looseObject({ enabled: z.boolean().optional() }).nullable().optional(),
  context: z.string().nullable().optional(),
  title: z.string().nullable().optional(),
});

/** A search result (a RAG source the model may cite): its text blocks count as the message's text. */
export const SearchResultBlock = z.strictObject({
  type: z.literal("search_result"),
  content: z.array(TextBlock),
  source: z.string(),
  title: z.string(),
  cache_control: CacheControl,
  citations: z.looseObject({ enabled: z.boolean().optional() }).optional(),
});

/** A file uploaded to the code execution container: no text, kept verbatim. */
export const ContainerUploadBlock = z.strictObject({
  type: z.literal("container_upload"),
  file_id: z.string(),
  cache_control: CacheControl,
});

/** What a user message holds besides tool results (one `chat_request` per message). */
export const UserContentBlock = z.discriminatedUnion("type", [
  TextBlock,
  ImageBlock,
  DocumentBlock,
  SearchResultBlock,
  ContainerUploadBlock,
]);

/** A tool result part: text, image, document or search result. */
export const ToolResultPart = z.discriminatedUnion("type", [
  TextBlock,
  ImageBlock,
  DocumentBlock,
  SearchResultBlock,
]);

/** A tool result, answering a `tool_use` of the assistant message right before. */
export const ToolResultBlock = z.strictObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(ToolResultPart)]).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl,
  toolset_name: z.string().nullable().optional(),
});

/** A thinking block: its signature is required because the API wants it back unchanged. */
export const ThinkingBlock = z.strictObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string({
    error: "a thinking block needs its signature: the API requires thinking blocks back unchanged",
  }),
});

/** A redacted thinking block: opaque `data` only. */
export const RedactedThinkingBlock = z.strictObject({
  type: z.literal("redacted_thinking"),
  data: z.string(),
});

/** A client tool call. */
export const ToolUseBlock = z.strictObject({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  // Not z.record: the very object posted is kept (no copy, no recursion).
  input: JsonObject,
  cache_control: CacheControl,
  caller: z
    .discriminatedUnion("type", [
      z.looseObject({ type: z.literal("direct") }),
      z.looseObject({ type: z.literal("code_execution_20250825"), tool_id: z.string() }),
      z.looseObject({ type: z.literal("code_execution_20260120"), tool_id: z.string() }),
    ])
    .optional(),
  toolset_name: z.string().nullable().optional(),
});

/** Any block of a user message. */
export const UserBlock = z.discriminatedUnion(
  "type",
  [TextBlock, ImageBlock, DocumentBlock, SearchResultBlock, ContainerUploadBlock, ToolResultBlock],
  {
    error:
      "a user message takes text, image, document, search_result, container_upload and tool_result blocks",
  },
);

/** Any block of an assistant message. */
export const AssistantBlock = z.discriminatedUnion(
  "type",
  [TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock],
  { error: "an assistant message takes text, thinking, redacted_thinking and tool_use blocks" },
);

const EMPTY_CONTENT = "content must not be empty (the API refuses it)";
const CONTENT: ContentWording = { empty: EMPTY_CONTENT, items: "content blocks" };

/** A message of either role, with its content parsed by `user` and `assistant`. */
function messageWith<U extends z.ZodType, A extends z.ZodType>(user: U, assistant: A) {
  return z.discriminatedUnion(
    "role",
    [
      z.strictObject({ role: z.literal("user"), content: user }),
      z.strictObject({ role: z.literal("assistant"), content: assistant }),
    ],
    {
      error: roleError(
        'role must be "user" or "assistant"',
        'expected a message object: {"role": "user" | "assistant", "content": …}',
      ),
    },
  );
}

/** One Messages API message (the subset the service models), as the API documents it. */
export const AnthropicMessageSchema = messageWith(
  documentedContent(UserBlock, CONTENT),
  documentedContent(AssistantBlock, CONTENT),
);

/**
 * Any block of a posted assistant message: the modelled ones and the hosted
 * ones (server tools, ./anthropic-hosted.ts), which go back verbatim and so
 * stay out of {@link AssistantBlock}'s type.
 */
const PostedAssistantBlock = z.discriminatedUnion(
  "type",
  [
    TextBlock,
    ThinkingBlock,
    RedactedThinkingBlock,
    ToolUseBlock,
    ServerToolUseBlock,
    ServerToolResultBlock,
  ],
  {
    error:
      "an assistant message takes text, thinking, redacted_thinking, tool_use, server_tool_use and server tool result blocks",
  },
);

/** The same, locating every issue inside the content (what posted turns are parsed with). */
export const LocatedMessage = messageWith(
  locatedContent(UserBlock, CONTENT),
  locatedContent(PostedAssistantBlock, CONTENT),
);

/** A text block. */
export type TextBlock = z.infer<typeof TextBlock>;
/** An image block. */
export type ImageBlock = z.infer<typeof ImageBlock>;
/** A document block. */
export type DocumentBlock = z.infer<typeof DocumentBlock>;
/** A search result block. */
export type SearchResultBlock = z.infer<typeof SearchResultBlock>;
/** A tool result part. */
export type ToolResultPart = z.infer<typeof ToolResultPart>;
/** A user message block other than a tool result. */
export type UserContentBlock = z.infer<typeof UserContentBlock>;
/** A tool result block. */
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;
/** A thinking block. */
export type ThinkingBlock = z.infer<typeof ThinkingBlock>;
/** A redacted thinking block. */
export type RedactedThinkingBlock = z.infer<typeof RedactedThinkingBlock>;
/** A tool use block. */
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
/** Any user message block. */
export type UserBlock = z.infer<typeof UserBlock>;
/** Any assistant message block. */
export type AssistantBlock = z.infer<typeof AssistantBlock>;
/** One Messages API message, assignable to the SDK's `MessageParam`. */
export type AnthropicMessage = z.infer<typeof AnthropicMessageSchema>;

// Block types outside the schemas: refused (422) before they would be called invalid (400).

const MODELLED_BLOCKS: ReadonlySet<string> = new Set([
  "text",
  "image",
  "document",
  "search_result",
  "container_upload",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "tool_use",
  ...HOSTED_BLOCK_TYPES,
]);
const MODELLED_PARTS: ReadonlySet<string> = new Set(["text", "image", "document", "search_result"]);

function unmodelled(path: MessagePath, type: string, where: string): never {
  throw unsupportedMessage(
    path,
    `block type "${type}" is not supported: ${where}; leave it out of the posted messages ` +
      "(tool references, browser states and block types newer than the SDK are not modelled), " +
      "or post the turn as JP events",
  );
}

/** Refuses (422) block types the service does not model, before the schema would call them invalid (400). */
export function refuseUnmodelled(value: unknown, from: number): void {
  forEachPostedPart(value, "messages", from, (block, at) => {
    if (!MODELLED_BLOCKS.has(block.type)) {
      unmodelled(
        at,
        block.type,
        "the service models text, image, document, search_result, container_upload, tool_use, tool_result, thinking, redacted_thinking, server_tool_use and server tool result blocks",
      );
    }
    if (block.type !== "tool_result" || !Array.isArray(block.content)) return;
    block.content.forEach((part: unknown, k) => {
      if (isJsonObject(part) && typeof part.type === "string" && !MODELLED_PARTS.has(part.type)) {
        unmodelled(
          [...at, "content", k],
          part.type,
          "a tool result's content may hold text, image, document and search_result parts",
        );
      }
    });
  });
}
