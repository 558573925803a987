/**
 * The one error hierarchy of autocompact. Every error raised on purpose is an
 * {@link AutocompactError} that carries its own answer: the HTTP status and
 * the RFC 9457 problem type and title a route answers with. The HTTP edge
 * therefore maps errors in a few lines, and no error class can fall through
 * to an unexplained 500. Core knows no HTTP; the status is plain data here.
 *
 * Classes exist for what callers tell apart (`instanceof`); variants that only
 * answer differently (an invalid spec, turn or timestamp) are one class with
 * a different problem type.
 */

/** What an error answers with: status, problem type slug (`/problems/<slug>`) and title. */
export interface ProblemKind {
  readonly status: number;
  readonly slug: string;
  readonly title: string;
}

/** One located problem in an input (a JSON pointer when there is one). */
export interface InputIssue {
  readonly pointer?: string;
  readonly detail: string;
}

/** Options every error takes: the underlying `cause`, and a narrower problem type or title. */
export interface ErrorOptions {
  readonly cause?: unknown;
  readonly slug?: string;
  readonly title?: string;
}

/** The base of every error autocompact raises on purpose; see the module comment. */
export class AutocompactError extends Error {
  override readonly name: string = "AutocompactError";
  /** The HTTP status of the answer. 500 means an internal fault: its message is never shown. */
  readonly status: number;
  /** The problem type, `/problems/<slug>`. */
  readonly type: string;
  /** The problem title: short, the same for every occurrence of the type. */
  readonly title: string;

  constructor(message: string, kind: ProblemKind, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = kind.status;
    this.type = `/problems/${options.slug ?? kind.slug}`;
    this.title = options.title ?? kind.title;
  }

  /** Members the problem document adds beside the standard ones (RFC 9457 extensions). */
  problemExtensions(): Record<string, unknown> {
    return {};
  }

  /** Headers the answer carries (`Retry-After`, `WWW-Authenticate`, …). */
  responseHeaders(): Record<string, string> {
    return {};
  }
}

/**
 * At most this many issues are listed in an answer (`errors`, or joined in a
 * detail); the rest are counted (`errors_omitted`, "(and N more)"), so a
 * request with 400,000 bad events answers in kilobytes, not 29 MB.
 */
export const MAX_LISTED_ISSUES = 100;

/** Input that does not validate (400); `issues` locate each problem when there are several. */
export class InvalidInputError extends AutocompactError {
  override readonly name: string = "InvalidInputError";
  readonly issues: readonly InputIssue[];

  constructor(message: string, options: ErrorOptions & { issues?: readonly InputIssue[] } = {}) {
    super(message, { status: 400, slug: "invalid-request", title: "Invalid request" }, options);
    this.issues = options.issues ?? [];
  }

  /** `errors`: the first {@link MAX_LISTED_ISSUES} issues; `errors_omitted`: how many more there are. */
  override problemExtensions(): Record<string, unknown> {
    if (this.issues.length === 0) return {};
    const omitted = this.issues.length - MAX_LISTED_ISSUES;
    return omitted > 0
      ? { errors: this.issues.slice(0, MAX_LISTED_ISSUES), errors_omitted: omitted }
      : { errors: this.issues };
  }
}

/** A valid request that cannot apply to the conversation as it is (422): nothing to compact, nothing to reset. */
export class UnprocessableError extends AutocompactError {
  override readonly name: string = "UnprocessableError";

  constructor(message: string, options: ErrorOptions = {}) {
    super(
      message,
      { status: 422, slug: "invalid-compaction", title: "Compaction cannot apply" },
      options,
    );
  }
}

/** A summary rule must fire but no summarizer is configured, or no summary text was given (422). */
export class SummaryRequiredError extends UnprocessableError {
  override readonly name = "SummaryRequiredError";

  constructor(message: string, options: ErrorOptions = {}) {
    super(message, {
      slug: "summarizer-unavailable",
      title: "No summarizer configured",
      ...options,
    });
  }
}

/** The narrower problem types of the classes above, in one place (the API reference lists them). */
export const PROBLEM_VARIANTS = {
  invalidTurn: { slug: "invalid-turn", title: "Invalid turn" },
  invalidTimestamp: { slug: "invalid-timestamp", title: "Invalid timestamp" },
  invalidConfig: { slug: "invalid-config", title: "Invalid configuration" },
  invalidSpec: { slug: "invalid-spec", title: "Invalid compaction spec" },
  noPolicy: { slug: "invalid-compaction", title: "Compaction without a policy" },
  emptyRange: { slug: "empty-range", title: "Nothing to compact" },
  tooLargeToStore: { slug: "too-large-to-store", title: "Too large to store" },
  invalidMessages: { slug: "invalid-messages", title: "Invalid provider messages" },
  unsupportedMessage: { slug: "unsupported-message", title: "Message not supported" },
} as const satisfies Record<string, Omit<ProblemKind, "status">>;
