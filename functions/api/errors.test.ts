import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/config.ts";
import {
  InvalidInputError,
  PROBLEM_VARIANTS,
  SummaryRequiredError,
  UnprocessableError,
} from "../../core/errors.ts";
import { harness } from "../../test/helpers/service.ts";
import {
  ConditionFailedError,
  ContentionError,
  CorruptDataError,
  EmptySummaryError,
  EvaluationPendingError,
  INVALID_SIGNATURE,
  NotFoundError,
  QueueError,
  SetupError,
  SummarizerError,
  TurnConflictError,
  UnauthorizedError,
} from "../errors.ts";
import { REJECTED, RequestRejectedError, toProblem } from "./errors.ts";

/** Every error a route can raise, with the answer it must give (literals, not read from the classes). */
const ANSWERS: [Error, number, string, string][] = [
  [new InvalidInputError("x"), 400, "/problems/invalid-request", "Invalid request"],
  [
    new InvalidInputError("x", PROBLEM_VARIANTS.invalidTurn),
    400,
    "/problems/invalid-turn",
    "Invalid turn",
  ],
  [new ConfigError(["a: bad"]), 400, "/problems/invalid-config", "Invalid configuration"],
  [
    new InvalidInputError("x", PROBLEM_VARIANTS.invalidSpec),
    400,
    "/problems/invalid-spec",
    "Invalid compaction spec",
  ],
  [
    new InvalidInputError("x", PROBLEM_VARIANTS.noPolicy),
    400,
    "/problems/invalid-compaction",
    "Compaction without a policy",
  ],
  [new UnauthorizedError("x"), 401, "/problems/unauthorized", "Unauthorized"],
  [
    new UnauthorizedError("x", INVALID_SIGNATURE),
    401,
    "/problems/invalid-signature",
    "Invalid webhook signature",
  ],
  [new NotFoundError("x"), 404, "/problems/not-found", "Conversation not found"],
  [new TurnConflictError("x", 3), 409, "/problems/turn-conflict", "Turn conflict"],
  [
    new RequestRejectedError(REJECTED.webhookIdReused, "x"),
    409,
    "/problems/webhook-id-reused",
    "Webhook id already used",
  ],
  [
    new RequestRejectedError(REJECTED.payloadTooLarge, "x"),
    413,
    "/problems/payload-too-large",
    "Payload too large",
  ],
  [
    new RequestRejectedError(REJECTED.unsupportedMediaType, "x"),
    415,
    "/problems/unsupported-media-type",
    "Send JSON",
  ],
  [new UnprocessableError("x"), 422, "/problems/invalid-compaction", "Compaction cannot apply"],
  [
    new UnprocessableError("x", PROBLEM_VARIANTS.emptyRange),
    422,
    "/problems/empty-range",
    "Nothing to compact",
  ],
  [
    new UnprocessableError("x", PROBLEM_VARIANTS.tooLargeToStore),
    422,
    "/problems/too-large-to-store",
    "Too large to store",
  ],
  [
    new SummaryRequiredError("x"),
    422,
    "/problems/summarizer-unavailable",
    "No summarizer configured",
  ],
  [new SummarizerError("x"), 502, "/problems/summarizer-failed", "The summarizer failed"],
  [new EmptySummaryError("x"), 502, "/problems/empty-summary", "The summarizer returned nothing"],
  [new ContentionError("x"), 503, "/problems/contention", "Too many concurrent writes"],
  [
    new EvaluationPendingError("x", 3, { evaluated_through: 2, decided_through: 1 }),
    503,
    "/problems/evaluation-pending",
    "The evaluation of that turn has not finished",
  ],
  [
    new InvalidInputError("x", PROBLEM_VARIANTS.invalidMessages),
    400,
    "/problems/invalid-messages",
    "Invalid provider messages",
  ],
  [
    new UnprocessableError("x", PROBLEM_VARIANTS.unsupportedMessage),
    422,
    "/problems/unsupported-message",
    "Message not supported",
  ],
  [
    new SummarizerError("x", { timeoutMs: 5 }),
    504,
    "/problems/summary-timeout",
    "The summarizer timed out",
  ],
];

describe("toProblem", () => {
  it.each(ANSWERS)(
    "answers %s with its documented status, type and title",
    (error, status, type, title) => {
      expect(toProblem(error)).toMatchObject({ status, type, title, detail: error.message });
    },
  );

  it("adds the extensions an error carries: located issues, the expected turn", () => {
    expect(toProblem(new ConfigError(["a: bad", "b: worse"]))).toEqual({
      type: "/problems/invalid-config",
      title: "Invalid configuration",
      status: 400,
      detail: "a: bad; b: worse",
      errors: [{ detail: "a: bad" }, { detail: "b: worse" }],
    });
    expect(toProblem(new TurnConflictError("post turn 3 next", 3))).toEqual({
      type: "/problems/turn-conflict",
      title: "Turn conflict",
      status: 409,
      detail: "post turn 3 next",
      expected_turn: 3,
    });
  });

  it.each([
    new CorruptDataError("chunk hash mismatch in tenant t"),
    new ConditionFailedError("stale head"),
    new QueueError("journal"),
    new SetupError("TABLE_NAME"),
    new Error("boom"),
    "not even an error",
  ])("hides an internal fault's detail behind an opaque 500 (%s)", (error) => {
    expect(toProblem(error)).toEqual({
      type: "/problems/internal",
      title: "Internal error",
      status: 500,
      detail: "an unexpected error occurred; it has been logged",
    });
  });

  it("never answers with a status the OpenAPI document does not declare", async () => {
    const document = (await (await harness().app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const declared = new Set(
      Object.values(document.paths).flatMap((operations) =>
        Object.values(operations).flatMap((operation) => Object.keys(operation.responses)),
      ),
    );
    for (const [error] of ANSWERS) expect(declared).toContain(String(toProblem(error).status));
  });
});
