/**
 * Byte length of a string in UTF-8, fast enough that the size estimate of a
 * stream costs about as much as parsing it. Pure-ASCII text (the common case)
 * is recognized by one regular-expression scan; anything else is encoded into
 * a reusable scratch buffer (the platform encoder is several times faster
 * than a JavaScript loop over code units). Lone surrogates count as the
 * three-byte replacement character, as an encoder writes them.
 */
const NON_ASCII = /[\u0080-\uffff]/;
const encoder = new TextEncoder();
let scratch = new Uint8Array(64 * 1024);

/** The number of bytes of `text` in UTF-8. */
export function utf8Length(text: string): number {
  if (!NON_ASCII.test(text)) return text.length;
  const needed = text.length * 3;
  if (scratch.length < needed) scratch = new Uint8Array(needed);
  return encoder.encodeInto(text, scratch).written;
}
