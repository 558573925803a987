/**
 * The console's connection to the API (docs/architecture.md §8): the published
 * client (`autocompact/client`) with the key the user signed in with. The key
 * lives in sessionStorage only: it goes with the tab, never into
 * localStorage or a cookie.
 */
import { AutocompactClient, ServiceError } from "../../../client/index.ts";

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

/**
 * A client of the API that serves this page, with the stored key (or `key`).
 * The API's root is the console's URL without `/console`, so a stage prefix
 * (`/prod/console`) stays.
 */
export function connect(key: string | null = storedKey()): AutocompactClient {
  const root = location.pathname.replace(/\/console\/?$/, "");
  return new AutocompactClient({ url: `${location.origin}${root}`, key: key ?? "" });
}

/** Whether `error` is the API refusing the key (401). */
export function isUnauthorized(error: unknown): error is ServiceError {
  return error instanceof ServiceError && error.status === 401;
}

/** What a {@link ServiceError} or any failure says to the user. */
export function describe(error: unknown): string {
  if (error instanceof ServiceError && error.status !== 0) {
    const problem = error.problem;
    return `${problem?.title ?? "Error"} (${error.status}): ${problem?.detail ?? error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}
