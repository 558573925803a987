/**
 * The tenant's conversations (`GET /v1/conversations`), most recently
 * active first: one page of the store's list index, each entry with the
 * numbers the console shows, and its warnings (core/warnings.ts): they need
 * the config layers and the last decision, which the index does not hold,
 * so each listed conversation's head is read (one read each).
 */
import { resolveContextWindow } from "../../core/catalog.ts";
import { tokensFromChars } from "../../core/estimate.ts";
import type { Warning } from "../../core/warnings.ts";
import type { BandCounts, ConversationStore, ListedConversation, Tenant } from "../ports.ts";
import { bandCounts } from "./log.ts";
import { catalogFor, type ServiceSettings, warningsOf } from "./state.ts";

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
  /** Its warnings (empty when none, or when it was deleted since the page was read). */
  readonly warnings: Warning[];
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
  settings: ServiceSettings,
  tenant: Tenant,
  page: { readonly limit: number; readonly cursor?: string },
): Promise<ConversationList> {
  const listed = await store.listConversations(tenant.id, page);
  const refOf = (entry: ListedConversation) => ({
    tenant: tenant.id,
    conversation: entry.conversation,
  });
  const bandsOf = async (entry: ListedConversation) =>
    entry.bands ?? bandCounts(await store.listCompactions(refOf(entry)));
  const warningsFor = async (entry: ListedConversation) => {
    const head = await store.getHead(refOf(entry));
    return head && !head.deleting ? warningsOf(settings, tenant, entry.conversation, head) : [];
  };
  const conversations = await Promise.all(
    listed.conversations.map(async (entry): Promise<ConversationListEntry> => {
      const window = resolveContextWindow(entry.model, catalogFor(settings, tenant)) ?? null;
      const estimated = tokensFromChars(entry.projected_chars);
      const [bands, warnings] = await Promise.all([bandsOf(entry), warningsFor(entry)]);
      return {
        id: entry.conversation,
        turn_count: entry.turn_count,
        estimated_tokens: estimated,
        context_window: window,
        utilization: window === null ? null : estimated / window,
        bands,
        last_fired_at: entry.last_fired_at ?? null,
        warnings,
      };
    }),
  );
  return { conversations, next_cursor: listed.next_cursor ?? null };
}
