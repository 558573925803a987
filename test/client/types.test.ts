/**
 * The client's hand-written types (client/types.ts) against the API's zod
 * schemas (functions/api/schemas.ts, response-schemas.ts,
 * problem-schemas.ts): checked by the compiler (`npm run
 * typecheck`), so a schema change that the types do not follow fails the
 * build. And the client's import graph: it must load nothing of the service's
 * runtime (hono, the AWS SDK, Powertools).
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type * as Client from "../../client/index.ts";
import type * as Problems from "../../functions/api/problem-schemas.ts";
import type * as Responses from "../../functions/api/response-schemas.ts";
import type * as Requests from "../../functions/api/schemas.ts";
import type { DeadLetterEntry } from "../../functions/queue/dead-letters.ts";

/** Each assignable to the other (as functions/api/schemas.ts checks core's config type). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `any` or `never`, which {@link Same} would find the same as anything. */
type Vacuous<T> = 0 extends 1 & T ? true : [T] extends [never] ? true : false;
/** {@link Same}, and also with every optional field made required: an optional field on one side only differs. */
type Exactly<A, B> = [Vacuous<A> | Vacuous<B>] extends [false]
  ? Same<A, B> extends true
    ? Same<Required<A>, Required<B>>
    : false
  : false;
/** Every `Sub` is a `Super` (neither `any` nor `never`). */
type Covers<Super, Sub> = [Vacuous<Sub> | Vacuous<Super>] extends [false]
  ? [Sub] extends [Super]
    ? true
    : false
  : false;
type Out<T extends z.ZodType> = z.output<T>;

// Responses: the client's type is the schema's, field for field.
const responses = {
  AppendOutcome: true satisfies Exactly<Client.AppendOutcome, Out<typeof Responses.AppendResponse>>,
  ConversationSummary: true satisfies Exactly<
    Client.ConversationSummary,
    Out<typeof Responses.ConversationSummary>
  >,
  Events: true satisfies Exactly<Client.Events, Out<typeof Responses.EventsResponse>>,
  JpEvent: true satisfies Exactly<Client.JpEvent, Out<typeof Requests.Event>>,
  Projection: true satisfies Exactly<Client.Projection, Out<typeof Responses.ProjectionResponse>>,
  Compactions: true satisfies Exactly<
    Client.Compactions,
    Out<typeof Responses.CompactionsResponse>
  >,
  ListedCompaction: true satisfies Exactly<
    Client.ListedCompaction,
    Out<typeof Responses.ListedCompaction>
  >,
  RemovedCompactions: true satisfies Exactly<
    Client.RemovedCompactions,
    Out<typeof Responses.RemovedResponse>
  >,
  ConversationConfig: true satisfies Exactly<
    Client.ConversationConfig,
    Out<typeof Responses.ConfigResponse>
  >,
  EffectiveConfig: true satisfies Exactly<
    Client.EffectiveConfig,
    Out<typeof Responses.EffectiveConfig>
  >,
  Verification: true satisfies Exactly<Client.Verification, Out<typeof Responses.VerifyResponse>>,
  Health: true satisfies Exactly<Client.Health, Out<typeof Responses.HealthResponse>>,
  Problem: true satisfies Exactly<Client.Problem, Out<typeof Problems.ProblemSchema>>,
  TurnConflictProblem: true satisfies Exactly<
    Client.TurnConflictProblem,
    Out<typeof Problems.TurnConflictProblem>
  >,
  RateLimitedProblem: true satisfies Exactly<
    Client.RateLimitedProblem,
    Out<typeof Problems.RateLimitedProblem>
  >,
  SummaryBudgetProblem: true satisfies Exactly<
    Client.SummaryBudgetProblem,
    Out<typeof Problems.SummaryBudgetProblem>
  >,
  EvaluationPendingProblem: true satisfies Exactly<
    Client.EvaluationPendingProblem,
    Out<typeof Problems.EvaluationPendingProblem>
  >,
  ConversationList: true satisfies Exactly<
    Client.ConversationList,
    Out<typeof Responses.ConversationListResponse>
  >,
  Timeline: true satisfies Exactly<Client.Timeline, Out<typeof Responses.TimelineResponse>>,
  TimelineTurn: true satisfies Exactly<Client.TimelineTurn, Out<typeof Responses.TimelineTurn>>,
  CompactionDryRun: true satisfies Exactly<
    Client.CompactionDryRun,
    Out<typeof Responses.DryRunResponse>
  >,
  NotificationEndpoint: true satisfies Exactly<
    Client.NotificationEndpoint,
    Out<typeof Responses.NotificationEndpointResponse>
  >,
  RegisteredNotificationEndpoint: true satisfies Exactly<
    Client.RegisteredNotificationEndpoint,
    Out<typeof Responses.RegisteredEndpointResponse>
  >,
  TenantModels: true satisfies Exactly<
    Client.TenantModels,
    Out<typeof Responses.TenantModelsResponse>
  >,
  GatewayMessage: true satisfies Exactly<
    Client.GatewayMessage,
    Out<typeof Problems.GatewayMessage>
  >,
  // The local runtime's admin route answers the queue module's type.
  DeadLetterEntry: true satisfies Exactly<Client.DeadLetterEntry, DeadLetterEntry>,
};

// Requests: the bodies the routes take.
const requests = {
  CompactionRequest: true satisfies Exactly<
    Client.CompactionRequest,
    Out<typeof Requests.CompactionBody>
  >,
  NotificationRequest: true satisfies Exactly<
    Client.NotificationRequest,
    Out<typeof Requests.NotificationBody>
  >,
  ConfigTree: true satisfies Exactly<Client.ConfigTree, Out<typeof Requests.ConfigBody>>,
  ModelInfo: true satisfies Exactly<Client.ModelInfo, Out<typeof Requests.ModelInfoSchema>>,
  // Every JP turn the documented schema takes is a client TurnRequest (whose
  // events are looser: the service checks each entry and locates every problem).
  // Turns in a provider format are not checked here: their messages are the
  // providers' types, which the client leaves generic.
  TurnRequest: true satisfies Covers<
    Client.TurnRequest,
    Extract<z.input<typeof Requests.TurnRequest>, { events: unknown }>
  >,
  // ...and what the client sends passes the body's first check (events are unknown there).
  TurnBody: true satisfies Covers<z.input<typeof Requests.TurnBody>, Client.TurnRequest>,
  ResetSource: true satisfies Exactly<
    Exclude<Extract<Client.ResetRequest, { source?: unknown }>["source"], undefined>,
    Exclude<Out<typeof Requests.ResetQuery>["source"], undefined>
  >,
};

// The checks above fail to compile when `Same` is false; this one proves that they would.
const driftIsCaught = {
  missingField: false satisfies Exactly<Omit<Client.AppendOutcome, "turn">, Client.AppendOutcome>,
  extraOptionalField: false satisfies Exactly<
    Client.AppendOutcome & { extra?: number },
    Client.AppendOutcome
  >,
  // biome-ignore lint/suspicious/noExplicitAny: the case under test
  anything: false satisfies Exactly<Client.AppendOutcome, any>,
  nothing: false satisfies Covers<Client.TurnRequest, never>,
  nullability: false satisfies Exactly<
    Client.ConversationSummary & { evaluated_through: number },
    Client.ConversationSummary
  >,
};

describe("client/types.ts", () => {
  it("matches the API's schemas (checked by the compiler)", () => {
    expect(Object.values({ ...responses, ...requests }).every(Boolean)).toBe(true);
    expect(Object.values(driftIsCaught).some(Boolean)).toBe(false);
  });
});

describe("client/index.ts", () => {
  it("loads nothing of hono, the AWS SDK or Powertools", async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL("../../client/index.ts", import.meta.url))],
      bundle: true,
      metafile: true,
      write: false,
      format: "esm",
      platform: "node",
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((path) => /node_modules/.test(path))).toEqual([]);
    // Its whole runtime: the client, its paging, paths, tenant settings, held views, warnings' hook, its error, the error base class it extends and the splice its views apply.
    expect(inputs.map((path) => path.replace(/^.*?(client|core)\//, "$1/")).sort()).toEqual([
      "client/errors.ts",
      "client/index.ts",
      "client/pages.ts",
      "client/paths.ts",
      "client/tenant.ts",
      "client/views.ts",
      "client/warnings.ts",
      "core/errors.ts",
      "core/splice.ts",
    ]);
  });
});
