/**
 * Parsing rules several formats share: tool arguments sent as a JSON string
 * (OpenAI Chat, OpenAI Responses), and message content that is a string or
 * an array of parts (Anthropic Messages, the AI SDK).
 */
import * as z from "zod";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../json.ts";
import { invalidMessage, type MessagePath } from "./issues.ts";

/** A JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Tool arguments the provider sends as a JSON string: they must encode a
 * JSON object no deeper than {@link MAX_JSON_DEPTH}, else a located 400.
 */
export function parseToolArguments(text: string, at: MessagePath): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidMessage(
      at,
      `is not valid JSON (${(error as Error).message}): arguments must be a JSON object encoded as a string`,
    );
  }
  if (!isJsonObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw invalidMessage(at, `must be a JSON object encoded as a string (got ${kind})`);
  }
  if (jsonDepthExceeds(value)) {
    throw invalidMessage(
      at,
      `nests deeper than ${MAX_JSON_DEPTH} levels: flatten the tool's arguments`,
    );
  }
  return value;
}

/** How a format words its content rules. */
export interface ContentWording {
  /** The message for empty content. */
  readonly empty: string;
  /** What the array holds, for the message of content of another type ("parts", "content blocks"). */
  readonly items: string;
}

/** Message content as the provider documents it: a string or a non-empty array of `items`. */
export function documentedContent<P>(items: z.ZodType<P>, wording: ContentWording) {
  return z
    .union([z.string(), z.array(items)])
    .refine((content) => content.length > 0, wording.empty);
}

/**
 * The same content, parsed branch by branch: a union reports only "Invalid
 * input" at `content`, and posted turns need every issue located inside it
 * (`messages[3].content[1].type`).
 */
export function locatedContent<P>(items: z.ZodType<P>, wording: ContentWording) {
  const array = z.array(items);
  return z.unknown().transform((value, ctx): string | P[] => {
    if (typeof value !== "string" && !Array.isArray(value)) {
      ctx.addIssue(`content must be a string or an array of ${wording.items}`);
      return z.NEVER;
    }
    if (value.length === 0) {
      ctx.addIssue(wording.empty);
      return z.NEVER;
    }
    if (typeof value === "string") return value;
    const result = array.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  });
}
