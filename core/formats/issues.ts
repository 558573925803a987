/**
 * The errors of a format's conversion, in one place, so both formats locate
 * problems the same way: a detail that starts with the message's path as the
 * platform wrote it (`messages[3].content[1]`), and a JSON pointer per issue.
 */
import type * as z from "zod";
import { InvalidInputError, PROBLEM_VARIANTS, UnprocessableError } from "../errors.ts";
import { describeIssues, issuePath, joinIssues, jsonPointer } from "../issues.ts";
import type { MessagesField } from "./format.ts";

/** A location inside the posted messages: the field, then indexes and keys. */
export type MessagePath = readonly [MessagesField, ...(string | number)[]];

/** `messages[3].content[1].type` */
export function describePath(path: readonly PropertyKey[]): string {
  return issuePath(path, { notation: "brackets", root: "" });
}

/** Posted messages that break the format's rules (400): shape, pairing, duplicates, empty content. */
export function invalidMessage(path: MessagePath, detail: string): InvalidInputError {
  return new InvalidInputError(`${describePath(path)}: ${detail}`, {
    ...PROBLEM_VARIANTS.invalidMessages,
    issues: [{ pointer: jsonPointer(path), detail }],
  });
}

/** A valid message the service does not take in a turn (422): system prompts, items it does not model. */
export function unsupportedMessage(path: MessagePath, detail: string): UnprocessableError {
  return new UnprocessableError(
    `${describePath(path)}: ${detail}`,
    PROBLEM_VARIANTS.unsupportedMessage,
  );
}

/**
 * Parses `value` (the whole `field` array) with `schema`, or throws one
 * {@link InvalidInputError} listing every issue, each located.
 */
export function parseMessages<T>(schema: z.ZodType<T>, value: unknown, field: MessagesField): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = describeIssues(result.error.issues, {
    notation: "brackets",
    prefix: [field],
  }).map(({ pointer, text }) => ({ pointer, detail: text }));
  throw new InvalidInputError(joinIssues(issues.map((issue) => issue.detail)), {
    ...PROBLEM_VARIANTS.invalidMessages,
    issues,
  });
}
