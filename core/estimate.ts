/**
 * The size estimate of D50: characters of provider-visible content, counted
 * as UTF-8 bytes like JP's reference heuristic, divided by four. The estimate
 * is a real number, never rounded, so equalities between ways of computing it
 * hold exactly.
 */
import type { Entry, KnownEntry } from "./events.ts";
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
  // Unknown entry types fall through to `default`: they are never provider-visible.
  const known = entry as KnownEntry;
  switch (known.type) {
    case "chat_request":
      return utf8Length(known.content);
    case "chat_response":
      if (known.message !== undefined) return utf8Length(known.message);
      if (known.reasoning !== undefined) return utf8Length(known.reasoning);
      return utf8Length(JSON.stringify(known.data));
    case "tool_call_request":
      return utf8Length(known.name) + utf8Length(JSON.stringify(known.arguments));
    case "tool_call_response":
      return utf8Length(known.content);
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
