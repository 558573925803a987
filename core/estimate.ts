/**
 * The size estimate of D50: characters of provider-visible content, counted
 * as UTF-8 bytes like JP's reference heuristic, divided by four. The estimate
 * is a real number, never rounded, so equalities between ways of computing it
 * hold exactly.
 */
import { type Entry, isKnown } from "./events.ts";
import { project } from "./projection.ts";
import { turnCount } from "./turns.ts";
import { utf8Length } from "./utf8.ts";

/** Characters per token of the heuristic. */
export const CHARS_PER_TOKEN = 4;

/** The estimate of a view. */
export interface SizeEstimate {
  readonly chars: number;
  readonly estimated_tokens: number;
}

/** Characters one entry contributes to the estimate (0 for anything not provider-visible). */
export function entryChars(entry: Entry): number {
  if (!isKnown(entry)) return 0;
  switch (entry.type) {
    case "chat_request":
      return utf8Length(entry.content);
    case "chat_response":
      if (entry.message !== undefined) return utf8Length(entry.message);
      if (entry.reasoning !== undefined) return utf8Length(entry.reasoning);
      return utf8Length(JSON.stringify(entry.data) ?? "");
    case "tool_call_request":
      return utf8Length(entry.name) + utf8Length(JSON.stringify(entry.arguments));
    case "tool_call_response":
      return utf8Length(entry.content);
    default:
      return 0;
  }
}

/** Converts a character count to the token estimate. */
export function tokensFromChars(chars: number): number {
  return chars / CHARS_PER_TOKEN;
}

/** Estimates a view as given (no projection applied). */
export function estimateView(entries: readonly Entry[]): SizeEstimate {
  let chars = 0;
  for (const entry of entries) chars += entryChars(entry);
  return { chars, estimated_tokens: tokensFromChars(chars) };
}

/** Estimates a raw stream the way D50 does: over its projected view. */
export function estimateStream(entries: readonly Entry[]): SizeEstimate & { turn_count: number } {
  return { ...estimateView(project(entries).entries), turn_count: turnCount(entries) };
}
