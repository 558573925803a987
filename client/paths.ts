/**
 * The paths and queries of the client's requests: a conversation's id
 * URL-encoded, the format a view is read in, and a query only when it has a
 * parameter.
 */

/** `path` with `query`, when it has any parameter. */
export function withQuery(path: string, query: URLSearchParams): string {
  const text = query.toString();
  return text === "" ? path : `${path}?${text}`;
}

/** The path of a conversation: its id URL-encoded. */
export function conversationPath(conversation: string): string {
  return `/v1/conversations/${encodeURIComponent(conversation)}`;
}

/** `format=X` for a provider format; nothing for JP events, the default. */
export function formatQuery(options: { readonly format?: string }): URLSearchParams {
  return new URLSearchParams(
    options.format === undefined || options.format === "jp" ? {} : { format: options.format },
  );
}
