/**
 * JP's on-disk `events.json` form. JP base64-encodes (standard alphabet,
 * padded) every string leaf of tool call arguments, tool response `content`
 * and every string leaf of `metadata`, on the known conversation event types
 * only; nothing marks a file as encoded. We detect it per file: a file is in
 * JP form when it has such strings and every one of them is canonical base64
 * of valid UTF-8. Tool responses written before March 2026 used the URL-safe
 * alphabet, which is accepted too.
 */

const STANDARD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_SAFE = /^(?:[A-Za-z0-9\-_]{4})*(?:[A-Za-z0-9\-_]{2}==|[A-Za-z0-9\-_]{3}=)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The wire forms a stream file can be in. */
export type StreamFormat = "plain" | "jp";

/** Decodes one canonical base64 string to UTF-8 text, or `undefined` when it is not one. */
export function decodeBase64Text(text: string, allowUrlSafe = false): string | undefined {
  let standard = text;
  if (!STANDARD.test(text)) {
    if (!allowUrlSafe || !URL_SAFE.test(text)) return undefined;
    standard = text.replaceAll("-", "+").replaceAll("_", "/");
  }
  let binary: string;
  try {
    binary = atob(standard);
  } catch {
    return undefined;
  }
  if (btoa(binary) !== standard) return undefined;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

type Visit = (text: string, allowUrlSafe: boolean) => string;

function mapStrings(value: unknown, visit: Visit): unknown {
  if (typeof value === "string") return visit(value, false);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, visit));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, visit);
    return out;
  }
  return value;
}

const ENCODED_EVENT_TYPES = new Set([
  "turn_start",
  "chat_request",
  "chat_response",
  "tool_call_request",
  "tool_call_response",
  "inquiry_request",
  "inquiry_response",
]);

/** Applies `visit` to every string JP encodes in one raw entry; returns a new entry. */
function mapEncodedFields(entry: unknown, visit: Visit): unknown {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return entry;
  const record = entry as Record<string, unknown>;
  if (typeof record.type !== "string" || !ENCODED_EVENT_TYPES.has(record.type)) return entry;
  const out: Record<string, unknown> = { ...record };
  if (record.metadata !== undefined) out.metadata = mapStrings(record.metadata, visit);
  if (record.type === "tool_call_request" && record.arguments !== undefined) {
    out.arguments = mapStrings(record.arguments, visit);
  }
  if (record.type === "tool_call_response" && typeof record.content === "string") {
    out.content = visit(record.content, true);
  }
  return out;
}

/** Decides whether raw entries are in JP's base64 form (see the module comment). */
export function detectFormat(entries: readonly unknown[]): StreamFormat {
  let candidates = 0;
  let allDecode = true;
  for (const entry of entries) {
    mapEncodedFields(entry, (text, allowUrlSafe) => {
      candidates++;
      if (allDecode && decodeBase64Text(text, allowUrlSafe) === undefined) allDecode = false;
      return text;
    });
    if (!allDecode) return "plain";
  }
  return candidates > 0 ? "jp" : "plain";
}

/** Decodes raw entries from JP's form; a string that does not decode is kept as it is (as JP does). */
export function decodeJpEntries(entries: readonly unknown[]): unknown[] {
  return entries.map((entry) =>
    mapEncodedFields(entry, (text, allowUrlSafe) => decodeBase64Text(text, allowUrlSafe) ?? text),
  );
}

/** Encodes raw entries into JP's form (for tests and for writing files JP can read). */
export function encodeJpEntries(entries: readonly unknown[]): unknown[] {
  const encoder = new TextEncoder();
  return entries.map((entry) =>
    mapEncodedFields(entry, (text) => {
      let binary = "";
      for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
      return btoa(binary);
    }),
  );
}
