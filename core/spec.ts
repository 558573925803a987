/**
 * The `--compact=SPEC` DSL of RFD 064: `POLICIES[:RANGE]`, e.g. `s:..-3`,
 * `r+t=strip-responses:5..-3`, `t=omit:-10..-3`.
 *
 * Bounds are 0-based turn indices as docs/architecture.md §5 specifies (JP's own CLI
 * has since moved to 1-based); a negative bound `-N` is N turns before the
 * last one, so `..-3` keeps the last three turns, like `keep_last = 3`.
 */
import type { CompactionRule, ToolCallMode } from "./config.ts";
import { InvalidInputError, PROBLEM_VARIANTS, UnprocessableError } from "./errors.ts";
import type { TurnRange } from "./rules.ts";

/** A bound of a spec range: an absolute turn, or an offset before the last turn. */
export type SpecBound = { readonly absolute: number } | { readonly fromEnd: number };

/** A parsed spec: the rule's policies and its range, if it gave one. */
export interface CompactionSpec {
  readonly reasoning: "strip" | null;
  readonly tool_calls: ToolCallMode | null;
  readonly summarize: boolean;
  /** `undefined` when the spec has no range (the rule's keep_first/keep_last apply). */
  readonly range?: { readonly from?: SpecBound; readonly to?: SpecBound };
}

/** A spec that does not parse: a 400 whose message says what is wrong and how it should look. */
function specError(spec: string, reason: string): InvalidInputError {
  return new InvalidInputError(
    `invalid compact spec '${spec}': ${reason}`,
    PROBLEM_VARIANTS.invalidSpec,
  );
}

const TOOL_MODES: Readonly<Record<string, ToolCallMode>> = {
  strip: "strip",
  s: "strip",
  "strip-responses": "strip-responses",
  strip_responses: "strip-responses",
  sres: "strip-responses",
  "strip-requests": "strip-requests",
  strip_requests: "strip-requests",
  sreq: "strip-requests",
  omit: "omit",
  o: "omit",
};

function parseBound(spec: string, text: string): SpecBound {
  if (/^-\d+$/.test(text)) return { fromEnd: Number(text.slice(1)) };
  if (/^\d+$/.test(text)) return { absolute: Number(text) };
  throw specError(
    spec,
    `invalid bound '${text}' (expected a turn index like 5 or an offset from the end like -3)`,
  );
}

function parseRange(spec: string, text: string): NonNullable<CompactionSpec["range"]> {
  const dots = text.indexOf("..");
  if (dots < 0) {
    const bound = parseBound(spec, text);
    return "fromEnd" in bound ? { to: bound } : { from: bound };
  }
  const left = text.slice(0, dots);
  const right = text.slice(dots + 2);
  return {
    ...(left === "" ? {} : { from: parseBound(spec, left) }),
    ...(right === "" ? {} : { to: parseBound(spec, right) }),
  };
}

/** Parses a DSL spec. Throws an {@link InvalidInputError} (`invalid-spec`) with a message naming the problem. */
export function parseSpec(spec: string): CompactionSpec {
  const colon = spec.indexOf(":");
  const [policyText, rangeText]: [string, string?] =
    colon < 0 ? [spec] : [spec.slice(0, colon), spec.slice(colon + 1)];
  let reasoning: "strip" | null = null;
  let toolCalls: ToolCallMode | null = null;
  let summarize = false;
  for (const raw of policyText.split("+")) {
    const policy = raw.trim();
    if (policy === "")
      throw specError(spec, "empty policy (use r, t, s joined by +, e.g. r+t:..-3)");
    const equals = policy.indexOf("=");
    const [key, value]: [string, string?] =
      equals < 0 ? [policy] : [policy.slice(0, equals).trim(), policy.slice(equals + 1).trim()];
    switch (key) {
      case "r":
      case "reasoning":
        if (value !== undefined) throw specError(spec, "`reasoning` does not take a value");
        reasoning = "strip";
        break;
      case "s":
      case "summarize":
        if (value !== undefined) throw specError(spec, "`summarize` does not take a value");
        summarize = true;
        break;
      case "t":
      case "tools": {
        const mode =
          value === undefined
            ? "strip"
            : Object.hasOwn(TOOL_MODES, value)
              ? TOOL_MODES[value]
              : undefined;
        if (!mode) {
          throw specError(
            spec,
            `unknown tool_calls mode: \`${value}\` (use strip, strip-requests, strip-responses or omit)`,
          );
        }
        toolCalls = mode;
        break;
      }
      default:
        throw specError(
          spec,
          `unknown policy '${key}' (use r, t, s or reasoning, tools, summarize)`,
        );
    }
  }
  const base = { reasoning, tool_calls: toolCalls, summarize };
  return rangeText === undefined ? base : { ...base, range: parseRange(spec, rangeText) };
}

/**
 * Resolves a spec's range to absolute turns of a conversation with
 * `turnCount` turns. Without a range, `keep_first`/`keep_last` of `defaults`
 * apply. An absolute `to` past the end is clamped to the last turn; a range
 * that selects nothing is an {@link UnprocessableError} (`empty-range`).
 */
export function resolveSpecRange(
  spec: CompactionSpec,
  turnCount: number,
  defaults: Pick<CompactionRule, "keep_first" | "keep_last">,
): TurnRange {
  if (turnCount === 0)
    throw new UnprocessableError(
      "the conversation has no turns to compact",
      PROBLEM_VARIANTS.emptyRange,
    );
  const last = turnCount - 1;
  const resolve = (bound: SpecBound) =>
    "absolute" in bound ? bound.absolute : last - bound.fromEnd;
  const from = spec.range
    ? spec.range.from
      ? Math.max(0, resolve(spec.range.from))
      : 0
    : defaults.keep_first;
  const to = spec.range
    ? spec.range.to
      ? Math.min(last, resolve(spec.range.to))
      : last
    : last - defaults.keep_last;
  // from >= 0 and to <= last (keep_first/keep_last are never negative), so
  // this also catches a range wholly before or after the conversation.
  if (from > to) {
    throw new UnprocessableError(
      `the range selects no turn: it resolves to ${from}..${to} but the conversation has turns 0..${last}`,
      PROBLEM_VARIANTS.emptyRange,
    );
  }
  return { from_turn: from, to_turn: to };
}

/** The rule a spec describes (a DSL spec is self-contained: nothing is inherited). */
export function ruleOfSpec(
  spec: CompactionSpec,
): Pick<CompactionRule, "reasoning" | "tool_calls" | "summary"> {
  return {
    reasoning: spec.summarize ? null : spec.reasoning,
    tool_calls: spec.summarize ? null : spec.tool_calls,
    summary: spec.summarize ? {} : null,
  };
}
