/**
 * A small client of a running autocompact service (`--url`, `--key`), for the
 * online commands. A problem answer (RFC 9457) becomes a {@link ServiceError}
 * carrying the service's `detail`, so the user sees what to fix.
 */

import { AutocompactError } from "../core/errors.ts";
import { type Io, type OptionsConfig, UsageError } from "./command.ts";

/** The dev tenant's key of `npm start` when AUTOCOMPACT_DEV_KEY is not set. */
export const LOCAL_DEV_KEY = "local-dev-key";

/** `--url` and `--key`, defaulting to the environment and the local runtime. */
export const SERVICE_OPTIONS = {
  url: { type: "string" },
  key: { type: "string" },
  conversation: { type: "string", short: "c" },
} as const satisfies OptionsConfig;

/** Help text of {@link SERVICE_OPTIONS}. */
export const SERVICE_HELP = `Service:
  --url URL              the service (default $AUTOCOMPACT_URL, else http://127.0.0.1:8787)
  --key KEY              the API key (default $AUTOCOMPACT_KEY, else $AUTOCOMPACT_DEV_KEY,
                         else "local-dev-key", the local runtime's default)
  -c, --conversation ID  the conversation id`;

/** A failed request: the service's problem detail, or the transport error. */
export class ServiceError extends AutocompactError {
  override readonly name = "ServiceError";
  constructor(
    message: string,
    /** The status the service answered with; 0 when it could not be reached. */
    status: number,
    /** The service's problem document, when it sent one. */
    readonly problem?: Record<string, unknown>,
  ) {
    super(message, { status, slug: "service-error", title: "The service answered with an error" });
  }
}

/** A client bound to one service and key. */
export interface ServiceClient {
  /** Sends `body` as JSON; `sign` adds headers computed from the exact body text (webhook signatures). */
  request<T>(
    method: string,
    path: string,
    body?: unknown,
    sign?: (text: string) => Record<string, string>,
  ): Promise<{ status: number; body: T }>;
}

/** Resolves `--url`/`--key` and returns a client. */
export function serviceClient(
  values: { url?: string | undefined; key?: string | undefined },
  io: Io,
): ServiceClient {
  const base = (values.url ?? io.env.AUTOCOMPACT_URL ?? "http://127.0.0.1:8787").replace(
    /\/+$/,
    "",
  );
  const key = values.key ?? io.env.AUTOCOMPACT_KEY ?? io.env.AUTOCOMPACT_DEV_KEY ?? LOCAL_DEV_KEY;
  if (!/^https?:\/\//.test(base))
    throw new UsageError(`--url must start with http:// or https:// (got "${base}")`);
  return {
    async request<T>(
      method: string,
      path: string,
      body?: unknown,
      sign?: (text: string) => Record<string, string>,
    ) {
      const text = body === undefined ? undefined : JSON.stringify(body);
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(text === undefined ? {} : { "content-type": "application/json" }),
            ...(text !== undefined && sign ? sign(text) : {}),
          },
          ...(text === undefined ? {} : { body: text }),
        });
      } catch (error) {
        const reason =
          (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
        throw new ServiceError(
          `cannot reach ${base} (${reason}): is the service running (npm start)?`,
          0,
        );
      }
      const answer = await response.text();
      let parsed: unknown;
      try {
        parsed = answer === "" ? undefined : JSON.parse(answer);
      } catch {
        throw new ServiceError(
          `${method} ${path}: ${response.status} with a non-JSON body`,
          response.status,
        );
      }
      if (!response.ok) {
        const problem = parsed as Record<string, unknown> | undefined;
        const detail = typeof problem?.detail === "string" ? problem.detail : response.statusText;
        throw new ServiceError(
          `${method} ${path}: ${response.status} ${detail}`,
          response.status,
          problem,
        );
      }
      return { status: response.status, body: parsed as T };
    },
  };
}

/** The conversation id from `--conversation`, required. */
export function conversationOf(values: { conversation?: string | undefined }): string {
  if (!values.conversation) throw new UsageError("give the conversation with --conversation ID");
  return encodeURIComponent(values.conversation);
}
