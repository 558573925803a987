/**
 * What `JSON.parse` changes without a word, found on the text itself: a
 * duplicate key (the last one wins, the others vanish) and a number a
 * 64-bit float does not hold (`1e999` becomes `Infinity`, stored as `null`;
 * `12345678901234567890` becomes `12345678901234567000`). RFC 7493 (I-JSON)
 * §2.2–2.3 forbids both for interoperable JSON; the service refuses them
 * with a located 400 rather than keep something else (docs/architecture.md §15).
 *
 * The scan is a minimal tokenizer, not a parser: it runs only on text that
 * `JSON.parse` has already accepted, so it never meets a syntax error.
 */
import { InvalidInputError } from "./errors.ts";
import { issuePath, joinIssues, jsonPointer } from "./issues.ts";

/** What is wrong with a value of the text. */
export type JsonTextProblem =
  /** A key seen earlier in the same object. */
  | "duplicate-key"
  /** A number beyond a 64-bit float's range: `JSON.parse` gives ±Infinity. */
  | "non-finite"
  /** A finite number the float it reads as does not give back (too many digits, or an underflow to 0). */
  | "inexact";

/** One problem of a JSON text, located by the keys and indexes of the value it is at. */
export interface JsonTextIssue {
  readonly problem: JsonTextProblem;
  /** The value's path: the duplicated key's for `duplicate-key`, the number's otherwise. */
  readonly path: readonly (string | number)[];
  /** The key (for `duplicate-key`) or the number as written. */
  readonly token: string;
}

type Frame =
  | { readonly kind: "object"; readonly keys: Set<string>; key: string; expectingKey: boolean }
  | { readonly kind: "array"; index: number };

// Character codes of the JSON text's structure.
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** An integer every 64-bit float reader holds exactly: at most 15 digits. */
const SMALL_INTEGER = /^-?\d{1,15}$/;
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** DECIMAL's groups: sign, whole digits, fraction digits and exponent. */
type DecimalParts = [string, string, string, string | undefined, string | undefined];

/**
 * A decimal literal as `digits e exponent` with no leading or trailing
 * zeros (`0.0120e1` and `12e-2` both `12e-1`); every zero is the empty
 * text, its sign dropped (`-0` reads back as `0`, the same number).
 */
function canonicalDecimal(literal: string): string {
  // A JSON number or a finite float's text: DECIMAL matches it whole.
  const [, sign, whole, fraction = "", exponent] = DECIMAL.exec(literal) as unknown as DecimalParts;
  let digits = whole + fraction;
  let power = Number(exponent ?? 0) + whole.length;
  const leading = digits.length - digits.replace(/^0+/, "").length;
  digits = digits.slice(leading).replace(/0+$/, "");
  power -= leading;
  return digits && `${sign}${digits}e${power}`;
}

/** The problem of a number literal, if a 64-bit float does not hold its value. */
export function numberProblem(literal: string): JsonTextProblem | undefined {
  // Stryker disable next-line ConditionalExpression: a fast path; the comparison below finds these exact too.
  if (SMALL_INTEGER.test(literal)) return undefined;
  const value = Number(literal);
  if (!Number.isFinite(value)) return "non-finite";
  // The shortest text of the float read back is the literal's value exactly, or the float is another number.
  return canonicalDecimal(String(value)) === canonicalDecimal(literal) ? undefined : "inexact";
}

/** The index of the `"` closing the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text[end - 1 - backslashes] === "\\") backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

function pathOf(stack: readonly Frame[]): (string | number)[] {
  return stack.map((frame) => (frame.kind === "array" ? frame.index : frame.key));
}

/**
 * Every duplicate key and every number a 64-bit float does not hold in
 * `text`, which must be JSON that `JSON.parse` accepts. Iterative: any depth
 * is safe to scan.
 *
 * @example
 * jsonTextIssues('{"a":1,"a":2,"n":1e999}')
 * // [{ problem: "duplicate-key", path: ["a"], token: "a" },
 * //  { problem: "non-finite", path: ["n"], token: "1e999" }]
 */
export function jsonTextIssues(text: string): JsonTextIssue[] {
  const issues: JsonTextIssue[] = [];
  const stack: Frame[] = [];
  let i = 0;
  // Stryker disable next-line EqualityOperator: at text.length charCodeAt is NaN, no token's code: one more step only moves i on.
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      if (top?.kind === "object" && top.expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        top.key = key;
        top.expectingKey = false;
        if (top.keys.has(key))
          issues.push({ problem: "duplicate-key", path: pathOf(stack), token: key });
        else top.keys.add(key);
      }
      i = end + 1;
    } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
      NUMBER.lastIndex = i;
      const literal = (NUMBER.exec(text) as RegExpExecArray)[0];
      const problem = numberProblem(literal);
      if (problem) issues.push({ problem, path: pathOf(stack), token: literal });
      i += literal.length;
    } else {
      if (code === OPEN_BRACE) {
        stack.push({
          kind: "object",
          keys: new Set(),
          // Stryker disable next-line StringLiteral: the object's first key is read before anything under it.
          key: "",
          expectingKey: true,
        });
      } else if (code === OPEN_BRACKET) stack.push({ kind: "array", index: 0 });
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) stack.pop();
      else if (code === COMMA) {
        // The text is JSON: a comma is always inside an array or an object.
        const frame = top as Frame;
        if (frame.kind === "object") frame.expectingKey = true;
        else frame.index++;
      }
      // Whitespace, `:` and the letters of true, false and null need nothing.
      i++;
    }
  }
  return issues;
}

const WHY: Record<JsonTextProblem, string> = {
  "duplicate-key": "keys must be unique within an object (a JSON reader keeps only one of them)",
  "non-finite":
    "is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
  inexact:
    "has more digits than a 64-bit float holds, so it would read back as another number: send it as a string",
};

/** What an issue says, without its location: `duplicate key "a": …`, `1e999 is beyond …`. */
export function describeJsonTextIssue(issue: JsonTextIssue): string {
  return issue.problem === "duplicate-key"
    ? `duplicate key ${JSON.stringify(issue.token)}: ${WHY[issue.problem]}`
    : `${issue.token} ${WHY[issue.problem]}`;
}

/**
 * The 400 for a request body whose `text` (JSON that `JSON.parse` took) has
 * duplicate keys or numbers a 64-bit float does not give back, each issue
 * located by its JSON pointer; `undefined` when it has none.
 */
export function lossyBodyError(text: string): InvalidInputError | undefined {
  const issues = jsonTextIssues(text);
  if (issues.length === 0) return undefined;
  const lines = issues.map(
    (issue) =>
      `${issuePath(issue.path, { notation: "brackets", root: "the body" })}: ${describeJsonTextIssue(issue)}`,
  );
  return new InvalidInputError(`the request body would not be kept as sent: ${joinIssues(lines)}`, {
    issues: issues.map((issue) => ({
      pointer: jsonPointer(issue.path),
      detail: describeJsonTextIssue(issue),
    })),
  });
}
