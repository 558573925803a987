/**
 * Validation issues as text, written one way everywhere: each issue as
 * `path: message` with its path in one of three notations, located by a JSON
 * pointer for a problem's `errors`, and a listing capped with "(and N more)".
 * Sites differ only by the options they pass (what the path is prefixed with,
 * what an empty path is called, whether unknown keys are split one by one).
 */
import { MAX_LISTED_ISSUES } from "./errors.ts";

/** How a path is written: `a.b.c`, `messages[3].content[1]`, or a JSON pointer `/a/b/c`. */
export type PathNotation = "dots" | "brackets" | "pointer";

/** How {@link issuePath} writes a path. */
export interface PathStyle {
  /** The notation; dotted unless given. */
  readonly notation?: PathNotation;
  /** Keys before the issue's own path: where the checked value sits (`rule`, `messages`). */
  readonly prefix?: readonly PropertyKey[];
  /** What a path with no keys (the checked value itself) is written as; `(root)` unless given. */
  readonly root?: string;
}

/** A JSON pointer (RFC 6901) to `path`: `~` and `/` escaped; `""` for the whole document. */
export function jsonPointer(path: readonly PropertyKey[]): string {
  return path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** `path` (after the style's prefix) in the style's notation, e.g. `messages[3].content[1].type`. */
export function issuePath(path: readonly PropertyKey[], style: PathStyle = {}): string {
  const { notation, prefix = [], root = "(root)" } = style;
  const keys = [...prefix, ...path];
  if (keys.length === 0) return root;
  if (notation === "pointer") return jsonPointer(keys);
  if (notation === "brackets") {
    return keys
      .map((key, i) =>
        typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`,
      )
      .join("");
  }
  return keys.map(String).join(".");
}

/** An issue as zod reports one (any object with a path and a message; `keys` for unknown keys). */
export interface IssueInput {
  readonly code?: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly keys?: readonly string[];
}

/** The keys the object at `path` (of the checked value) knows, when it is an object that knows them. */
export type KnownKeys = (path: readonly PropertyKey[]) => readonly string[] | undefined;

/** How {@link describeIssues} writes issues. */
export interface IssueStyle extends PathStyle {
  /**
   * Split zod's one issue per object with unknown keys into one issue per
   * key (so a listing of them can be capped), saying `unknown key (known: …)`
   * (the `label`, and the known keys when `known` names them). Without it,
   * zod's own issue is kept, as the provider formats' messages have it.
   */
  readonly unknownKeys?: { readonly known?: KnownKeys; readonly label?: string };
}

/** One issue, ready to show. */
export interface DescribedIssue {
  /** Where, from the checked value's root (the style's prefix included). */
  readonly path: readonly PropertyKey[];
  /** {@link jsonPointer} of `path`, for a problem's `errors`. */
  readonly pointer: string;
  /** What is wrong, without the path. */
  readonly message: string;
  /** `path: message`, the path written in the style's notation. */
  readonly text: string;
}

/** Each issue with its path (see {@link IssueStyle}), pointer and `path: message` line. */
export function describeIssues(
  issues: readonly IssueInput[],
  style: IssueStyle = {},
): DescribedIssue[] {
  const { unknownKeys, prefix = [] } = style;
  const pathStyle: PathStyle = { ...style, prefix: [] };
  const described = (path: readonly PropertyKey[], message: string): DescribedIssue => {
    const full = [...prefix, ...path];
    return {
      path: full,
      pointer: jsonPointer(full),
      message,
      text: `${issuePath(full, pathStyle)}: ${message}`,
    };
  };
  return issues.flatMap((issue) => {
    if (!unknownKeys || issue.code !== "unrecognized_keys" || !issue.keys) {
      return [described(issue.path, issue.message)];
    }
    const known = unknownKeys.known?.(issue.path);
    const message = `${unknownKeys.label ?? "unknown key"}${known ? ` (known: ${known.join(", ")})` : ""}`;
    return issue.keys.map((key) => described([...issue.path, key], message));
  });
}

/** The lines of {@link describeIssues}: `path: message` each. */
export function issueLines(issues: readonly IssueInput[], style: IssueStyle = {}): string[] {
  return describeIssues(issues, style).map((issue) => issue.text);
}

/**
 * ` (and N more)` for `count` issues left out (` (and 1 more issue)` with a
 * `noun`, plural from 2), or `""` for none.
 */
export function andMore(count: number, noun?: string): string {
  if (count <= 0) return "";
  const what = noun === undefined ? "" : ` ${noun}${count === 1 ? "" : "s"}`;
  return ` (and ${count} more${what})`;
}

/** `details` joined with "; ", the first {@link MAX_LISTED_ISSUES} of them, then "(and N more)". */
export function joinIssues(details: readonly string[]): string {
  return (
    details.slice(0, MAX_LISTED_ISSUES).join("; ") + andMore(details.length - MAX_LISTED_ISSUES)
  );
}

/** The first of `details`, then "(and N more)" for the others; `""` for none. */
export function firstIssue(details: readonly string[]): string {
  return (details[0] ?? "") + andMore(details.length - 1);
}
