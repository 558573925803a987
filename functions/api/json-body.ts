/**
 * Reading a request body: UTF-8 text, then JSON that `JSON.parse` gives back
 * unchanged (docs/architecture.md §8, Bodies). Every route with a body reads
 * it here, as text first (a signature covers the raw bytes).
 */
import { InvalidInputError } from "../../core/errors.ts";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../core/json.ts";
import { lossyBodyError } from "../../core/json-text.ts";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text; bytes that are not UTF-8 are refused, never replaced with U+FFFD. */
export async function bodyText(request: { arrayBuffer(): Promise<ArrayBuffer> }): Promise<string> {
  const bytes = await request.arrayBuffer();
  try {
    return UTF8.decode(bytes);
  } catch (error) {
    throw new InvalidInputError("the request body is not valid UTF-8: send JSON encoded as UTF-8", {
      cause: error,
    });
  }
}

/**
 * The body's JSON: refused when empty, not JSON, nested deeper than
 * {@link MAX_JSON_DEPTH}, or holding what `JSON.parse` would change (I-JSON).
 */
export function parseJson(text: string): unknown {
  if (text.trim() === "")
    throw new InvalidInputError("the request body is empty: send a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      `the request body is not valid JSON (${(error as Error).message})`,
      { cause: error },
    );
  }
  if (jsonDepthExceeds(value)) {
    throw new InvalidInputError(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  // JSON.parse keeps the last of duplicate keys and rounds long numbers without a word.
  const lossy = lossyBodyError(text);
  if (lossy) throw lossy;
  return value;
}
