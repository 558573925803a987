/**
 * The one error {@link AutocompactClient} throws: a non-2xx answer, with the
 * service's RFC 9457 problem, or a service that could not be reached.
 */

import { AutocompactError } from "../core/errors.ts";
import type {
  EvaluationPendingProblem,
  Problem,
  RateLimitedProblem,
  SummaryBudgetProblem,
} from "./types.ts";

/** A failed request: the service's problem detail, or the transport error. */
export class ServiceError extends AutocompactError {
  override readonly name: string = "ServiceError";
  constructor(
    message: string,
    /** The status the service answered with; 0 when it could not be reached. */
    status: number,
    /**
     * The service's problem document (`type`, `title`, `detail`, and
     * extensions such as `expected_turn` or `errors`), when it sent one.
     */
    readonly problem?: Problem,
  ) {
    super(message, { status, slug: "service-error", title: "The service answered with an error" });
  }
}

/**
 * A request that got no whole answer within the client's timeout
 * (`timeoutMs`, 30 s by default): the service may still have done it, so a
 * retry of a write should be one the service recognizes (a turn's replay, an
 * `Idempotency-Key`). Its status is 0, as for a service that cannot be reached.
 */
export class RequestTimeoutError extends ServiceError {
  override readonly name = "RequestTimeoutError";
  constructor(
    message: string,
    /** The timeout that ran out, in milliseconds (a `wait`'s seconds included). */
    readonly timeoutMs: number,
  ) {
    super(message, 0);
  }
}

/**
 * Whether `error` is the 503 `/problems/evaluation-pending` of a read with
 * `afterTurn` (or a post with `wait`): no evaluation had decided on that turn
 * when the wait ran out. Its problem says how far evaluations had got
 * (`evaluated_through`, `decided_through`); a post that gets it is stored.
 */
export function isEvaluationPending(
  error: unknown,
): error is ServiceError & { readonly problem: EvaluationPendingProblem } {
  return (
    error instanceof ServiceError &&
    error.status === 503 &&
    error.problem?.type === "/problems/evaluation-pending" &&
    typeof error.problem.after_turn === "number"
  );
}

/**
 * Whether `error` is a 429 of the tenant's limits: `/problems/rate-limited`
 * (its requests a second or its waiting reads; retry after
 * `problem.retry_after` seconds) or `/problems/summary-budget` (its summary
 * tokens of the day; summaries resume at `problem.resets_at`). The client
 * asks again after `Retry-After` only for a read with `afterTurn` refused as
 * rate-limited, within its deadline; it throws the others. The API
 * gateway's own 429 has no problem.
 */
export function isRateLimited(
  error: unknown,
): error is ServiceError & { readonly problem: RateLimitedProblem | SummaryBudgetProblem } {
  return (
    error instanceof ServiceError &&
    error.status === 429 &&
    (error.problem?.type === "/problems/rate-limited" ||
      error.problem?.type === "/problems/summary-budget")
  );
}

/** The body as a problem document, when it is one (a JSON object with a string `detail`). */
export function asProblem(body: unknown): Problem | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  return typeof (body as { detail?: unknown }).detail === "string" ? (body as Problem) : undefined;
}
