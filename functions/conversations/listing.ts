/**
 * The tenant's conversations (`GET /v1/conversations`), most recently
 * active first: one page of the store's list index, each entry with the
 * numbers the console shows.
 */
import { type ModelCatalog, resolveContextWindow } from "../../core/catalog.ts";
import { tokensFromChars } from "../../core/estimate.ts";
import type { BandCounts, ConversationStore, ListedConversation } from "../ports.ts";
import { bandCounts } from "./log.ts";

/** One conversation of the list. */
export interface ConversationListEntry {
  readonly id: string;
  readonly turn_count: number;
  readonly estimated_tokens: number;
  /** The latest turn's model's window (explicit, else the catalog's); `null` when unknown. */
  readonly context_window: number | null;
  /** `estimated_tokens / context_window`; `null` when the window is unknown. */
  readonly utilization: number | null;
  readonly bands: BandCounts;
  /** The timestamp of the latest automatic band written; `null` when none was. */
  readonly last_fired_at: string | null;
}

/** A page of the list, and where the next one starts (`null` on the last). */
export interface ConversationList {
  readonly conversations: ConversationListEntry[];
  readonly next_cursor: string | null;
}

/**
 * One page of `tenant`'s conversations. A head whose compactions have not
 * changed since before the head counted them has its bands counted from
 * its compactions here (once per such conversation listed).
 */
export async function listConversations(
  store: ConversationStore,
  catalog: ModelCatalog,
  tenant: string,
  page: { readonly limit: number; readonly cursor?: string },
): Promise<ConversationList> {
  const listed = await store.listConversations(tenant, page);
  const bandsOf = async (entry: ListedConversation) =>
    entry.bands ??
    bandCounts(await store.listCompactions({ tenant, conversation: entry.conversation }));
  const conversations = await Promise.all(
    listed.conversations.map(async (entry): Promise<ConversationListEntry> => {
      const window = resolveContextWindow(entry.model, catalog) ?? null;
      const estimated = tokensFromChars(entry.projected_chars);
      return {
        id: entry.conversation,
        turn_count: entry.turn_count,
        estimated_tokens: estimated,
        context_window: window,
        utilization: window === null ? null : estimated / window,
        bands: await bandsOf(entry),
        last_fired_at: entry.last_fired_at ?? null,
      };
    }),
  );
  return { conversations, next_cursor: listed.next_cursor ?? null };
}
