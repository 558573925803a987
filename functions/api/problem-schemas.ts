/**
 * The RFC 9457 problems the HTTP API answers with (routes.ts declares them
 * per route), and the API gateway's own throttling body.
 */
import { z } from "@hono/zod-openapi";
import { MAX_LISTED_ISSUES } from "../../core/errors.ts";
import { ProgressFields } from "./response-schemas.ts";

/** An RFC 9457 problem. */
export const ProblemSchema = z
  .looseObject({
    type: z.string().openapi({ example: "/problems/invalid-request" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().openapi({ description: "What went wrong and how to fix it." }),
    errors: z
      .array(z.object({ pointer: z.string().optional(), detail: z.string() }))
      .max(MAX_LISTED_ISSUES)
      .optional()
      .openapi({
        description: `Each problem of an invalid request, located by JSON pointer: the first ${MAX_LISTED_ISSUES}.`,
      }),
    errors_omitted: z
      .number()
      .int()
      .positive()
      .optional()
      .openapi({
        description: `How many problems are not listed in \`errors\` (only past ${MAX_LISTED_ISSUES}).`,
      }),
  })
  .openapi("Problem", { description: "An RFC 9457 problem document." });

/** The 409 of a turn post: the problem and the turn to post next. */
export const TurnConflictProblem = ProblemSchema.extend({
  expected_turn: z.number().int().nonnegative(),
}).openapi("TurnConflictProblem");

/** The 409 of a signed turn post whose `webhook-id` was already used for another message. */
export const WebhookIdReusedProblem = ProblemSchema.extend({
  type: z.literal("/problems/webhook-id-reused"),
}).openapi("WebhookIdReusedProblem", {
  description:
    "An RFC 9457 problem: the `webhook-id` of a signed post was already used for another message; nothing was stored.",
});

/** The 409 of a manual compaction whose `Idempotency-Key` was used for another request, or is still running. */
export const IdempotencyConflictProblem = ProblemSchema.extend({
  type: z.enum(["/problems/idempotency-key-reused", "/problems/idempotency-key-in-progress"]),
}).openapi("IdempotencyConflictProblem", {
  description:
    "An RFC 9457 problem: the `Idempotency-Key` was already used for another request to this conversation (`idempotency-key-reused`; nothing was done), or the first request under it has not answered yet (`idempotency-key-in-progress`, with `Retry-After`).",
});

/** The 503 of a read (or a post with `wait`) whose wait for a turn's evaluation ran out. */
export const EvaluationPendingProblem = ProblemSchema.extend({
  type: z.literal("/problems/evaluation-pending"),
  after_turn: z.number().int().nonnegative(),
  ...ProgressFields,
}).openapi("EvaluationPendingProblem", {
  description:
    "An RFC 9457 problem: no evaluation had decided on `after_turn` when the wait ran out (`Retry-After` says when to ask again); `evaluated_through` and `decided_through` say how far evaluations got.",
});

/** The 409 of a paged read whose cursor was given for another life or compactions version of the conversation. */
export const StaleCursorProblem = ProblemSchema.extend({
  type: z.literal("/problems/stale-cursor"),
}).openapi("StaleCursorProblem", {
  description:
    "An RFC 9457 problem: the pages read so far may not join up with the next ones (a compaction was added or removed, or the conversation recreated); read again without `cursor`.",
});

/** The 429 of a tenant over its request rate or its concurrent waiting reads (functions/api/limits.ts). */
export const RateLimitedProblem = ProblemSchema.extend({
  type: z.literal("/problems/rate-limited"),
  limit: z.enum(["requests_per_second", "waiting_reads"]),
  retry_after: z.number().int().positive(),
}).openapi("RateLimitedProblem", {
  description:
    "An RFC 9457 problem: the tenant is over its requests a second or its concurrent waiting reads on this instance (`limit`); retry after `Retry-After` seconds (`retry_after`).",
});

/** The 429 of a manual or dry-run summary once the tenant's summary tokens of the day are used up. */
export const SummaryBudgetProblem = ProblemSchema.extend({
  type: z.literal("/problems/summary-budget"),
  summary_tokens_per_day: z.number().int().positive(),
  summary_tokens_used: z.number().int().nonnegative(),
  resets_at: z.string().openapi({ description: "When the budget resets: the next UTC midnight." }),
}).openapi("SummaryBudgetProblem", {
  description:
    "An RFC 9457 problem: the tenant's summary tokens of the UTC day are used up; manual and dry-run summaries resume at `resets_at` (`Retry-After` seconds).",
});

/** What API Gateway answers when it throttles (its own body, not a problem). */
export const GatewayMessage = z.object({ message: z.string() }).openapi("GatewayMessage");
