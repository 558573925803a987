/**
 * The online commands' options for reaching a running autocompact service
 * (`--url`, `--key`, `--conversation`, `--timeout`), and the {@link AutocompactClient}
 * (client/index.ts, the package's `autocompact/client`) they resolve to. A
 * problem answer (RFC 9457) becomes a `ServiceError` carrying the service's
 * `detail`, so the user sees what to fix.
 */

import { AutocompactClient, type Warning } from "../client/index.ts";
import { type Io, type OptionsConfig, oneLine, UsageError, write } from "./command.ts";

/** The dev tenant's key of `npm start` when AUTOCOMPACT_DEV_KEY is not set. */
export const LOCAL_DEV_KEY = "local-dev-key";

/** `--timeout SECONDS`: how long one request may take (the client's `timeoutMs`). */
export const TIMEOUT_OPTION = { timeout: { type: "string" } } as const satisfies OptionsConfig;

/** Help text of {@link TIMEOUT_OPTION}. */
const TIMEOUT_HELP = `  --timeout SECONDS      how long one request may take (default 30; a read's wait comes on top)`;

/** `--url`, `--key` and `--timeout`, defaulting to the environment and the local runtime. */
export const SERVICE_OPTIONS = {
  url: { type: "string" },
  key: { type: "string" },
  conversation: { type: "string", short: "c" },
  ...TIMEOUT_OPTION,
} as const satisfies OptionsConfig;

/** Help text of {@link SERVICE_OPTIONS}. */
export const SERVICE_HELP = `Service:
  --url URL              the service (default $AUTOCOMPACT_URL, else http://127.0.0.1:8787)
  --key KEY              the API key (default $AUTOCOMPACT_KEY, else $AUTOCOMPACT_DEV_KEY,
                         else "local-dev-key", the local runtime's default)
  -c, --conversation ID  the conversation id
${TIMEOUT_HELP}`;

/** `--timeout`'s seconds as milliseconds, or `undefined` for the client's default. */
function timeoutMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
    throw new UsageError(
      `--timeout must be a number of seconds from 0.001 to 86400 (got "${value}")`,
    );
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/** Resolves `--url`/`--key`/`--timeout` and returns a client of the service. */
export function serviceClient(
  values: { url?: string | undefined; key?: string | undefined; timeout?: string | undefined },
  io: Io,
): AutocompactClient {
  const url = (values.url ?? io.env.AUTOCOMPACT_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
  const key = values.key ?? io.env.AUTOCOMPACT_KEY ?? io.env.AUTOCOMPACT_DEV_KEY ?? LOCAL_DEV_KEY;
  if (!/^https?:\/\//.test(url))
    throw new UsageError(`--url must start with http:// or https:// (got "${url}")`);
  const timeout = timeoutMs(values.timeout);
  return new AutocompactClient({
    url,
    key,
    ...(timeout === undefined ? {} : { timeoutMs: timeout }),
  });
}

/** The conversation id from `--conversation`, required (the client URL-encodes it). */
export function conversationOf(values: { conversation?: string | undefined }): string {
  if (!values.conversation) throw new UsageError("give the conversation with --conversation ID");
  return values.conversation;
}

/**
 * Prints a conversation's warnings (docs/architecture.md §8, "Warnings") to
 * stderr, one line each: `warning: <code>: <detail>`; stdout stays the output.
 */
export async function printWarnings(io: Io, warnings: readonly Warning[]): Promise<void> {
  for (const { code, detail } of warnings)
    await write(io.stderr, `warning: ${code}: ${oneLine(detail)}\n`);
}
