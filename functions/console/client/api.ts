/**
 * The console's reads and writes of the API (docs/architecture.md §8), with the key
 * the user signed in with. The key lives in sessionStorage only: it goes
 * with the tab, never into localStorage or a cookie.
 */

const KEY_ITEM = "autocompact.api-key";

/** The signed-in key, if any. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

/** Keeps the key for this tab's session. */
export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_ITEM, key);
}

/** Forgets the key (sign out, or a key the API refused). */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_ITEM);
}

/** An RFC 9457 problem as the API answers it. */
export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status: number;
  readonly detail?: string;
  readonly errors?: ReadonlyArray<{ pointer?: string; detail: string }>;
}

/** A non-2xx answer, with its problem. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
  }
}

/** What an {@link ApiError} or any failure says to the user. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const { status, detail, title } = error.problem;
    return `${title ?? "Error"} (${status}): ${detail ?? "no detail"}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The API's root: the console's URL without `/console` (so a stage prefix stays). */
function apiRoot(): string {
  return location.pathname.replace(/\/console\/?$/, "");
}

/** Calls the API with the stored key (or `key`); answers the JSON body, or throws an {@link ApiError}. */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  key: string | null = storedKey(),
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${apiRoot()}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const problem =
      json && typeof json === "object"
        ? ({ status: response.status, ...json } as Problem)
        : { status: response.status, detail: text || response.statusText };
    throw new ApiError(problem);
  }
  return json as T;
}

/** A conversation as the list answers it. */
export interface ListedConversation {
  readonly id: string;
  readonly turn_count: number;
  readonly estimated_tokens: number;
  readonly context_window: number | null;
  readonly utilization: number | null;
  readonly bands: { readonly auto: number; readonly manual: number };
  readonly last_fired_at: string | null;
}

/** A page of the list. */
export interface ConversationPage {
  readonly conversations: ListedConversation[];
  readonly next_cursor: string | null;
}

/** A tool-call policy of a band. */
export type ToolCalls =
  | { readonly policy: "omit" }
  | { readonly policy: "strip"; readonly request?: boolean; readonly response?: boolean };

/** A band as `GET …/compactions` lists it. */
export interface Band {
  readonly position: number;
  readonly from_turn: number;
  readonly to_turn: number;
  readonly source?: "auto" | "manual";
  readonly timestamp?: string;
  readonly summary?: { readonly summary: string };
  readonly reasoning?: "strip";
  readonly tool_calls?: ToolCalls;
  readonly trigger?: {
    readonly turn: number;
    readonly estimated_tokens: number;
    readonly threshold: number;
    readonly context_window: number;
    readonly estimated_tokens_after: number;
  };
}

/** `GET /v1/conversations/{id}`. */
export interface Summary {
  readonly turn_count: number;
  readonly evaluated_through: number | null;
  readonly estimated_tokens: number;
  readonly compactions: Band[];
}

/** One row of `GET …/timeline`. */
export interface TimelineTurn {
  readonly turn: number;
  readonly raw_tokens: number;
  readonly projected_tokens: number | null;
  readonly threshold: number | null;
  readonly fired: {
    readonly position: number;
    readonly from_turn: number;
    readonly to_turn: number;
    readonly source: "auto" | "manual";
  } | null;
  readonly skip_reason: string | null;
}

/** A JP event, as the projection answers it. */
export interface ViewEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** `GET …/projection`. */
export interface Projection {
  readonly events: ViewEvent[];
  readonly turns: ReadonlyArray<{ kept: number } | { summary: { from: number; to: number } }>;
  readonly estimated_tokens: number;
}

/** `GET`/`PUT …/config`. */
export interface ConfigAnswer {
  readonly conversation: { readonly compaction: { readonly auto: Record<string, unknown> } };
  readonly effective: Record<string, unknown>;
}

/** `POST …/compactions?dry_run=true`. */
export interface DryRun {
  readonly compaction: Omit<Band, "position">;
  readonly estimated_tokens_before: number;
  readonly estimated_tokens_after: number;
}

/** The path of a conversation's resource. */
export function conversationPath(id: string, rest = ""): string {
  return `/v1/conversations/${encodeURIComponent(id)}${rest}`;
}
