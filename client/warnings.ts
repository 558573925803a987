/**
 * The warnings of an answer about one conversation (docs/architecture.md §8,
 * "Warnings"), told to the client's `onWarning` hook as the answer arrives.
 */
import type { Warning } from "./types.ts";

/** `answer`, once `onWarning` has heard each of its warnings, with the conversation's id. */
export async function reported<T extends { readonly warnings: readonly Warning[] }>(
  conversation: string,
  answer: Promise<T>,
  onWarning: ((warning: Warning, conversation: string) => void) | undefined,
): Promise<T> {
  const answered = await answer;
  // An older service answers no `warnings`: nothing to tell.
  for (const warning of answered.warnings ?? []) onWarning?.(warning, conversation);
  return answered;
}
