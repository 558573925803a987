/**
 * JP's on-disk `events.json` form. JP base64-encodes (standard alphabet,
 * padded) every string leaf of tool call arguments, tool response `content`
 * and every string leaf of `metadata`, on the known conversation event types
 * only; nothing marks a file as encoded. We detect it per file: a file is in
 * JP form when it has such strings and every one of them is canonical base64
 * of valid UTF-8. Tool responses written before March 2026 used the URL-safe
 * alphabet, which is accepted too.
 */

import { isUtf8, transcode } from "node:buffer";
import { CONVERSATION_EVENT_TYPES } from "./turns.ts";

const URL_SAFE = /^(?:[A-Za-z0-9\-_]{4})*(?:[A-Za-z0-9\-_]{2}==|[A-Za-z0-9\-_]{3}=)?$/;

/** The wire forms a stream file can be in. */
export type StreamFormat = "plain" | "jp";

const BASE64_VALUES = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const NON_ASCII = /[\u0080-\uffff]/;

/** Canonical padding leaves the unused low bits of the last symbol zero. */
function hasZeroTrailingBits(standard: string): boolean {
  if (standard.endsWith("=="))
    return (BASE64_VALUES.indexOf(standard.charAt(standard.length - 3)) & 0x0f) === 0;
  if (standard.endsWith("="))
    return (BASE64_VALUES.indexOf(standard.charAt(standard.length - 2)) & 0x03) === 0;
  return true;
}

/**
 * The bytes of `standard` as a binary string when it is canonical base64 (the
 * standard alphabet, padded), else `undefined`. `atob` checks the alphabet
 * and the padding natively, several times faster than a regular expression
 * over megabytes (npm run bench -- cli, JP form); what it forgives, ASCII
 * whitespace and missing padding, shows in the decoded length (which only a
 * padded string whose length is a multiple of 4 can match), and non-zero
 * trailing bits are checked apart.
 */
function canonicalBinary(standard: string): string | undefined {
  if (!hasZeroTrailingBits(standard)) return undefined;
  let binary: string;
  try {
    binary = atob(standard);
  } catch {
    return undefined;
  }
  const padding = standard.endsWith("==") ? 2 : standard.endsWith("=") ? 1 : 0;
  return binary.length === (standard.length / 4) * 3 - padding ? binary : undefined;
}

/** Decodes one canonical base64 string to UTF-8 text, or `undefined` when it is not one. */
export function decodeBase64Text(text: string, allowUrlSafe = false): string | undefined {
  let binary = canonicalBinary(text);
  if (binary === undefined) {
    if (!allowUrlSafe || !URL_SAFE.test(text)) return undefined;
    binary = canonicalBinary(text.replaceAll("-", "+").replaceAll("_", "/"));
    // Stryker disable next-line ConditionalExpression: without it, undefined falls through the ASCII test and is returned all the same; the guard narrows the type.
    if (binary === undefined) return undefined;
  }
  // ASCII decodes to itself; only other bytes need a real UTF-8 decode.
  // Stryker disable next-line ConditionalExpression: a fast path; the UTF-8 decode below gives the same text for ASCII.
  if (!NON_ASCII.test(binary)) return binary;
  // Node's native byte work throughout: with a JavaScript copy of the bytes
  // and a fatal TextDecoder, decoding the 74 MB JP stream of `npm run bench --
  // cli` took 538 ms profiled, with this 187 ms. Core runs on Node only (the
  // Lambdas and the CLI). Each character of `binary` is one byte (atob writes
  // only U+0000 to U+00FF), as Latin-1 encodes them; isUtf8 is the check the
  // fatal TextDecoder makes (simdutf's), and ICU's transcode then cannot fail.
  const bytes = Buffer.from(binary, "latin1");
  if (!isUtf8(bytes)) return undefined;
  // Dropped as the TextDecoder this replaces dropped it: a leading byte order mark.
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // Stryker disable next-line StringLiteral: Node's transcode reads an empty encoding name as UTF-8.
  return transcode(bytes.subarray(start), "utf8", "utf16le").toString("utf16le");
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

/** Applies `visit` to every string JP encodes in one raw entry; returns a new entry. */
function mapEncodedFields(entry: unknown, visit: Visit): unknown {
  const type = (entry as { type?: unknown } | null | undefined)?.type;
  if (!(CONVERSATION_EVENT_TYPES as ReadonlySet<unknown>).has(type)) return entry;
  const record = entry as Record<string, unknown>;
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

/** Thrown (one shared instance, no stack captured per throw) to leave the walk at the first plain string. */
const NOT_ENCODED = new Error();

/**
 * Decodes raw entries when they are in JP's form, in one pass: every candidate
 * string is decoded as it is met, and the first one that is not base64 of
 * UTF-8 means the file is plain (the input is returned untouched).
 */
export function decodeIfJp(entries: readonly unknown[]): {
  format: StreamFormat;
  entries: readonly unknown[];
} {
  let candidates = 0;
  try {
    const decoded = entries.map((entry) =>
      mapEncodedFields(entry, (text, allowUrlSafe) => {
        candidates++;
        const value = decodeBase64Text(text, allowUrlSafe);
        if (value === undefined) throw NOT_ENCODED;
        return value;
      }),
    );
    return candidates > 0 ? { format: "jp", entries: decoded } : { format: "plain", entries };
  } catch (error) {
    if (error === NOT_ENCODED) return { format: "plain", entries };
    throw error;
  }
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
