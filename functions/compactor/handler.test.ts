import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FireDecision, SkipDecision } from "../../core/auto-compaction.ts";
import type { Compaction } from "../../core/events.ts";
import { SummarizerError } from "../errors.ts";
import type { EvaluationMessage } from "../ports.ts";
import type { EvaluationOutcome } from "./evaluate-turn.ts";
import { type CompactorHandlerDeps, createCompactorHandler, policyOf } from "./handler.ts";

// Powertools Logger and Metrics write JSON lines through their own console
// (stdout; warnings and errors to stderr); the tests read those lines back.
let lines: string[] = [];
beforeEach(() => {
  lines = [];
  const capture = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split("\n").filter(Boolean));
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(capture);
  vi.spyOn(process.stderr, "write").mockImplementation(capture);
});
afterEach(() => {
  vi.restoreAllMocks();
});

type Json = Record<string, unknown>;
const parsed = (): Json[] => lines.map((line) => JSON.parse(line) as Json);
const logs = (): Json[] => parsed().filter((line) => !("_aws" in line));
const emf = (): Json[] => parsed().filter((line) => "_aws" in line);
const emfMetricNames = (blob: Json): string[] =>
  (
    (blob._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0]
      ?.Metrics ?? []
  ).map((m) => m.Name);

function record(id: string, body: unknown, group = "g1"): SQSRecord {
  return {
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: typeof body === "string" ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: "1795000000000",
      SenderId: "test",
      ApproximateFirstReceiveTimestamp: "1795000000000",
      MessageGroupId: group,
      MessageDeduplicationId: `d-${id}`,
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:evaluations.fifo",
    awsRegion: "eu-west-1",
  };
}

const event = (...records: SQSRecord[]): SQSEvent => ({ Records: records });
const msg = (turn: number, conversation = "c1"): EvaluationMessage => ({
  tenant: "alice",
  conversation,
  turn,
});

const band: Compaction = {
  type: "compaction",
  timestamp: "2026-11-29T12:00:00.000000Z",
  from_turn: 1,
  to_turn: 8,
  source: "auto",
  reasoning: "strip",
  tool_calls: { policy: "strip", request: true, response: true },
};

type Fired = Extract<EvaluationOutcome, { outcome: "fired" }>;

/** A firing of `compaction` that leaves `after` estimated tokens. */
function fired(after: number, compaction: Compaction = band): Fired {
  const decision: FireDecision = {
    fire: true,
    reason: "over_threshold",
    turn_count: 12,
    range: { from_turn: compaction.from_turn, to_turn: compaction.to_turn },
    estimated_tokens: 160_000.25,
    threshold: 150_000,
    context_window: 200_000,
  };
  return { outcome: "fired", decision, band: { compaction, estimated_tokens_after: after } };
}

const skippedDecision: SkipDecision = {
  fire: false,
  reason: "under_threshold",
  turn_count: 7,
  range: { from_turn: 1, to_turn: 3 },
  estimated_tokens: 1200.5,
  threshold: 150_000,
  context_window: 200_000,
};

/** A clock that advances 12.5 ms per reading: every evaluation takes 12.5 ms. */
function steppingClock() {
  let t = 1000;
  return () => {
    const now = t;
    t += 12.5;
    return now;
  };
}

function setup(evaluate: CompactorHandlerDeps["evaluate"]) {
  const logger = new Logger({ serviceName: "compactor-test", logLevel: "DEBUG" });
  const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
  const evaluateSpy = vi.fn(evaluate);
  const handler = createCompactorHandler({
    evaluate: evaluateSpy,
    logger,
    metrics,
    now: steppingClock(),
  });
  return { handler, evaluate: evaluateSpy, metrics };
}

const logBase = {
  timestamp: expect.any(String),
  service: "compactor-test",
  sampling_rate: 0,
};

describe("compactor handler: logs", () => {
  it("logs a firing with every field, and nothing else", async () => {
    const { handler } = setup(async () => fired(40_210));

    const response = await handler(event(record("m1", msg(11))));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(logs()).toEqual([
      {
        ...logBase,
        level: "INFO",
        message: "auto_compaction.fired",
        tenant: "alice",
        conversation: "c1",
        turn: 11,
        from_turn: 1,
        to_turn: 8,
        policy: "reasoning+tool_calls",
        estimated_tokens: 160_000.25,
        estimated_tokens_after: 40_210,
        threshold: 150_000,
        context_window: 200_000,
        duration_ms: 12.5,
      },
    ]);
  });

  it("adds the summary's model, tokens and latency when the band was summarized", async () => {
    const summaryBand: Compaction = {
      type: "compaction",
      timestamp: "2026-11-29T12:00:00.000000Z",
      from_turn: 1,
      to_turn: 8,
      source: "auto",
      summary: { summary: "the story so far" },
    };
    const { handler } = setup(async () => ({
      ...fired(30_000, summaryBand),
      summary: {
        text: "the story so far",
        model: "anthropic.claude-haiku",
        input_tokens: 90_000,
        output_tokens: 800,
        latency_ms: 2345,
      },
    }));

    await handler(event(record("m1", msg(11))));

    expect(logs()).toEqual([
      expect.objectContaining({
        level: "INFO",
        message: "auto_compaction.fired",
        policy: "summary",
        summary_model: "anthropic.claude-haiku",
        summary_input_tokens: 90_000,
        summary_output_tokens: 800,
        summary_latency_ms: 2345,
      }),
    ]);
  });

  it("warns when the view is still over the threshold after the firing", async () => {
    const { handler } = setup(async () => fired(155_000));

    await handler(event(record("m1", msg(11))));

    const [firing, warning] = logs();
    expect(firing).toMatchObject({ level: "INFO", message: "auto_compaction.fired" });
    expect(warning).toEqual({
      ...logBase,
      level: "WARN",
      message: "auto_compaction.still_over_threshold",
      tenant: "alice",
      conversation: "c1",
      turn: 11,
      from_turn: 1,
      to_turn: 8,
      policy: "reasoning+tool_calls",
      estimated_tokens: 160_000.25,
      estimated_tokens_after: 155_000,
      threshold: 150_000,
      context_window: 200_000,
    });
  });

  it("logs skips with their reason (trigger reasons and delivery reasons)", async () => {
    const { handler } = setup(async (message) =>
      message.turn === 6
        ? { outcome: "skipped", reason: "under_threshold", decision: skippedDecision }
        : { outcome: "skipped", reason: "stale" },
    );

    await handler(event(record("m1", msg(6)), record("m2", msg(5, "c2"), "g2")));

    expect(logs()).toEqual([
      {
        ...logBase,
        level: "INFO",
        message: "auto_compaction.skipped",
        tenant: "alice",
        conversation: "c1",
        turn: 6,
        reason: "under_threshold",
        duration_ms: 12.5,
        turn_count: 7,
        estimated_tokens: 1200.5,
        threshold: 150_000,
        context_window: 200_000,
      },
      {
        ...logBase,
        level: "INFO",
        message: "auto_compaction.skipped",
        tenant: "alice",
        conversation: "c2",
        turn: 5,
        reason: "stale",
        duration_ms: 12.5,
      },
    ]);
  });

  it("logs skips at INFO, the default level, so the saved query finds them (docs/architecture.md §10)", async () => {
    const logger = new Logger({ serviceName: "compactor-test", logLevel: "INFO" });
    const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
    const handler = createCompactorHandler({
      evaluate: async () => ({ outcome: "skipped", reason: "stale" }),
      logger,
      metrics,
    });
    await handler(event(record("m1", msg(1))));
    expect(logs().map((line) => [line.level, line.message, line.reason])).toEqual([
      ["INFO", "auto_compaction.skipped", "stale"],
    ]);
  });
});

describe("compactor handler: the last failure", () => {
  const newHandler = (
    evaluate: CompactorHandlerDeps["evaluate"],
    recordFailure: NonNullable<CompactorHandlerDeps["recordFailure"]>,
  ) =>
    createCompactorHandler({
      evaluate,
      logger: new Logger({ serviceName: "compactor-test", logLevel: "INFO" }),
      metrics: new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" }),
      recordFailure,
      clock: { nowMillis: () => Date.parse("2026-12-01T08:00:00.000Z") },
    });

  it("records a failed evaluation on its conversation: turn, error class, message, time", async () => {
    const recordFailure = vi.fn(async () => undefined);
    const handler = newHandler(async (message) => {
      if (message.conversation === "c1") {
        throw new SummarizerError("no summary before the deadline", { timeoutMs: 900 });
      }
      return { outcome: "skipped", reason: "stale" };
    }, recordFailure);

    const response = await handler(
      event(record("m1", msg(3)), record("m2", msg(0, "other"), "g2")),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m1" }] });
    expect(recordFailure.mock.calls).toEqual([
      [
        { tenant: "alice", conversation: "c1", turn: 3 },
        {
          turn: 3,
          error: "SummarizerError",
          message: "no summary before the deadline",
          at: "2026-12-01T08:00:00.000Z",
        },
      ],
    ]);
  });

  it("keeps at most 1 KB of the message, and fails the record even when recording fails", async () => {
    const recordFailure = vi.fn(async () => {
      throw new Error("DynamoDB is down");
    });
    const handler = newHandler(async () => {
      throw new Error("x".repeat(5000));
    }, recordFailure);

    const response = await handler(event(record("m1", msg(7))));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m1" }] });
    const failure = (recordFailure.mock.calls[0] as unknown[])[1] as { message: string };
    expect(failure.message).toBe(`${"x".repeat(1023)}…`);
    expect(
      logs()
        .filter((line) => line.message !== "auto_compaction.failed")
        .map((line) => [line.level, line.message, line.turn, (line.error as Json).message]),
    ).toEqual([["WARN", "auto_compaction.failure_not_recorded", 7, "DynamoDB is down"]]);
  });
});

describe("compactor handler: partial batch responses", () => {
  it("fails only the failing record: [A/1 poison, A/2, A/3, B/1] reports A/1 and evaluates A/2, A/3, B/1", async () => {
    const { handler, evaluate } = setup(async (message) => {
      if (message.conversation === "a" && message.turn === 1) throw new Error("poison");
      return { outcome: "skipped", reason: "stale" };
    });

    const response = await handler(
      event(
        record("a-1", msg(1, "a"), "group-a"),
        record("a-2", msg(2, "a"), "group-a"),
        record("a-3", msg(3, "a"), "group-a"),
        record("b-1", msg(1, "b"), "group-b"),
      ),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "a-1" }] });
    // One at a time, in the batch's order, the poison's group mates included.
    expect(evaluate.mock.calls.map(([m]) => [m.conversation, m.turn])).toEqual([
      ["a", 1],
      ["a", 2],
      ["a", 3],
      ["b", 1],
    ]);
    expect(logs().map((line) => [line.level, line.message, line.conversation, line.turn])).toEqual([
      ["ERROR", "auto_compaction.failed", "a", 1],
      ["INFO", "auto_compaction.skipped", "a", 2],
      ["INFO", "auto_compaction.skipped", "a", 3],
      ["INFO", "auto_compaction.skipped", "b", 1],
    ]);
    const failure = logs().find((line) => line.message === "auto_compaction.failed");
    expect(failure).toMatchObject({
      level: "ERROR",
      tenant: "alice",
      message_id: "a-1",
      receive_count: 1,
      duration_ms: 12.5,
      error: { name: "Error", message: "poison" },
    });
  });

  it("fails a record whose body is not an evaluation message, without evaluating it", async () => {
    const { handler, evaluate } = setup(async () => ({ outcome: "skipped", reason: "stale" }));

    const response = await handler(event(record("bad-json", "{not json")));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "bad-json" }] });
    expect(evaluate).not.toHaveBeenCalled();
    expect(logs()).toEqual([
      {
        ...logBase,
        level: "ERROR",
        message: "auto_compaction.invalid_message",
        message_id: "bad-json",
        receive_count: 1,
        reason: expect.stringMatching(/^the body is not JSON/),
        body: "{not json",
      },
    ]);
  });

  it("names the invalid fields of a JSON body that is not an evaluation message", async () => {
    const { handler } = setup(async () => ({ outcome: "skipped", reason: "stale" }));

    const response = await handler(
      event(record("bad", { tenant: "alice", conversation: "", turn: -1 })),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "bad" }] });
    expect(logs()[0]?.reason).toBe(
      "the body is not an evaluation message: conversation: must not be empty; turn: must be 0 or more",
    );
  });

  it("a body that is not a message fails itself alone, not its group mates nor another conversation's records", async () => {
    const { handler, evaluate } = setup(async () => ({ outcome: "skipped", reason: "stale" }));

    const response = await handler(
      event(
        record("a-poison", "{not json", "group-a"),
        record("a-1", msg(1, "a"), "group-a"),
        record("b-1", msg(1, "b"), "group-b"),
        record("a-2", msg(2, "a"), "group-a"),
        record("b-2", msg(2, "b"), "group-b"),
      ),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "a-poison" }] });
    expect(evaluate.mock.calls.map(([m]) => [m.conversation, m.turn])).toEqual([
      ["a", 1],
      ["b", 1],
      ["a", 2],
      ["b", 2],
    ]);
    expect(logs().map((line) => [line.level, line.message, line.message_id])).toEqual([
      ["ERROR", "auto_compaction.invalid_message", "a-poison"],
      ["INFO", "auto_compaction.skipped", undefined],
      ["INFO", "auto_compaction.skipped", undefined],
      ["INFO", "auto_compaction.skipped", undefined],
      ["INFO", "auto_compaction.skipped", undefined],
    ]);
  });

  it("answers a batch that failed entirely with a response (no throw)", async () => {
    const { handler } = setup(async () => {
      throw new Error("boom");
    });
    await expect(handler(event(record("m1", msg(1)), record("m2", msg(2))))).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: "m1" }, { itemIdentifier: "m2" }],
    });
  });

  it("processes every record of a batch without failures, in order", async () => {
    const { handler, evaluate } = setup(async () => ({ outcome: "skipped", reason: "stale" }));
    const response = await handler(
      event(record("a", msg(1)), record("b", msg(0, "c2"), "g2"), record("c", msg(2))),
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(evaluate.mock.calls.map(([m]) => [m.conversation, m.turn])).toEqual([
      ["c1", 1],
      ["c2", 0],
      ["c1", 2],
    ]);
  });
});

describe("compactor handler: deadlines", () => {
  /** Rejects when `signal` aborts (as a summary aborted at the deadline does); never settles without one. */
  const hangUntilAborted = (signal: AbortSignal | undefined) =>
    new Promise<never>((_, reject) => {
      signal?.addEventListener("abort", () =>
        reject(new SummarizerError("no summary before the deadline", { timeoutMs: 1 })),
      );
    });

  it("aborts a hanging record at its share of the remaining time; the others go on and the batch answers before the invocation times out", async () => {
    const { handler, evaluate } = setup(async (message, options) =>
      message.conversation === "slow"
        ? hangUntilAborted(options?.signal)
        : { outcome: "skipped", reason: "under_threshold", decision: skippedDecision },
    );
    // 3,000 ms left throughout: margin 300 ms (10%), so the first of three
    // records may take (3000 - 300) / 3 = 900 ms.
    const context = { getRemainingTimeInMillis: () => 3_000 };
    let timer: NodeJS.Timeout | undefined;
    const lambdaTimeout = new Promise<"timed out">((resolve) => {
      timer = setTimeout(() => resolve("timed out"), 3_000);
    });
    const response = await Promise.race([
      handler(
        event(
          record("s", msg(4, "slow"), "g-slow"),
          record("a", msg(1, "a"), "g-a"),
          record("b", msg(2, "b"), "g-b"),
        ),
        context,
      ),
      lambdaTimeout,
    ]);
    clearTimeout(timer);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "s" }] });
    expect(evaluate.mock.calls.map(([m]) => m.conversation)).toEqual(["slow", "a", "b"]);
    expect(evaluate.mock.calls.every(([, options]) => options?.signal instanceof AbortSignal)).toBe(
      true,
    );
    const failure = logs().find((line) => line.message === "auto_compaction.failed");
    expect(failure).toMatchObject({
      conversation: "slow",
      message_id: "s",
      deadline_ms: 900,
      error: { name: "SummarizerError", message: "no summary before the deadline" },
    });
    expect(logs().filter((line) => line.message === "auto_compaction.skipped")).toHaveLength(2);
  });

  it("shares the time left among the records not yet started, keeping back at most 5 s", async () => {
    const { handler } = setup(async (_message, options) => hangUntilAborted(options?.signal));
    // The invocation starts with 100 s left (10% would be 10 s: the margin is
    // capped at 5 s); when the records start, 5.2 s are left.
    let left = 100_000;
    const context = {
      getRemainingTimeInMillis: () => {
        const now = left;
        left = 5_200;
        return now;
      },
    };
    const response = await handler(
      event(record("m1", msg(1, "a"), "g-a"), record("m2", msg(1, "b"), "g-b")),
      context,
    );
    expect(response).toEqual({
      batchItemFailures: [{ itemIdentifier: "m1" }, { itemIdentifier: "m2" }],
    });
    // (5200 - 5000) / 2 records left, then / 1.
    expect(
      logs()
        .filter((line) => line.message === "auto_compaction.failed")
        .map((line) => line.deadline_ms),
    ).toEqual([100, 200]);
  });

  it("gives no deadline without a context", async () => {
    const { handler, evaluate } = setup(async () => ({ outcome: "skipped", reason: "stale" }));
    await handler(event(record("m1", msg(1))));
    expect(evaluate.mock.calls[0]?.[1]).toEqual({});
  });
});

describe("compactor handler: metrics", () => {
  it("emits Fired, TokensRemoved, EvaluationMs and StillOverThreshold as EMF, flushed per invocation", async () => {
    const { handler, metrics } = setup(async () => fired(155_000));

    await handler(event(record("m1", msg(11))));

    expect(metrics.hasStoredMetrics()).toBe(false);
    const blobs = emf();
    expect(blobs).toHaveLength(1);
    const [blob] = blobs as [Json];
    expect(emfMetricNames(blob).sort()).toEqual(
      ["EvaluationMs", "Fired", "StillOverThreshold", "TokensRemoved"].sort(),
    );
    expect(blob).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Namespace: "Autocompact", Dimensions: [["service"]] }] },
      service: "compactor-test",
      Fired: 1,
      StillOverThreshold: 1,
      TokensRemoved: 5_000.25,
      EvaluationMs: 12.5,
    });
  });

  it("counts skips by reason, as a Skipped metric with a reason dimension", async () => {
    const { handler } = setup(async (message) =>
      message.turn === 6
        ? { outcome: "skipped", reason: "under_threshold", decision: skippedDecision }
        : { outcome: "skipped", reason: "stale" },
    );

    await handler(event(record("m1", msg(6)), record("m2", msg(5, "c2"), "g2")));

    const skipped = emf().filter((blob) => emfMetricNames(blob).includes("Skipped"));
    expect(skipped.map((blob) => [blob.reason, blob.Skipped])).toEqual([
      ["under_threshold", 1],
      ["stale", 1],
    ]);
    for (const blob of skipped) {
      expect(blob).toMatchObject({
        _aws: {
          CloudWatchMetrics: [{ Namespace: "Autocompact", Dimensions: [["service", "reason"]] }],
        },
      });
    }
    const timing = emf().find((blob) => emfMetricNames(blob).includes("EvaluationMs"));
    expect(timing?.EvaluationMs).toEqual([12.5, 12.5]);
  });

  it("emits EvaluationLagMs, from the turn's post to the decision, for a firing and a trigger skip", async () => {
    const wall = { now: 1_795_000_060_000 };
    const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
    const handler = createCompactorHandler({
      evaluate: async (message) => {
        // The evaluation itself takes 250 ms of wall-clock time: the lag ends at the decision.
        wall.now += 250;
        return message.turn === 11
          ? fired(40_210)
          : { outcome: "skipped", reason: "under_threshold", decision: skippedDecision };
      },
      logger: new Logger({ serviceName: "compactor-test", logLevel: "DEBUG" }),
      metrics,
      now: steppingClock(),
      clock: { nowMillis: () => wall.now },
    });

    await handler(
      event(
        record("m1", { ...msg(11), posted_at_ms: 1_795_000_000_000 }),
        record("m2", { ...msg(6, "c2"), posted_at_ms: 1_795_000_059_000 }, "g2"),
      ),
    );

    const blob = emf().find((b) => emfMetricNames(b).includes("EvaluationLagMs"));
    expect(blob).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Namespace: "Autocompact", Dimensions: [["service"]] }] },
      service: "compactor-test",
      // 60 s + 250 ms, then 1 s + 500 ms (the clock moved 250 ms per evaluation).
      EvaluationLagMs: [60_250, 1_500],
    });
    const definitions = (
      blob as { _aws: { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] } }
    )._aws.CloudWatchMetrics[0]?.Metrics;
    const metricDefinition = definitions?.find((m) => m.Name === "EvaluationLagMs");
    expect(metricDefinition?.Unit).toBe("Milliseconds");
    // The log lines carry it too (the saved query's evaluation_lag_ms).
    expect(logs().map((line) => [line.message, line.turn, line.evaluation_lag_ms])).toEqual([
      ["auto_compaction.fired", 11, 60_250],
      ["auto_compaction.skipped", 6, 1_500],
    ]);
  });

  it("emits no lag for a delivery skip (stale, already evaluated, unknown turn) nor for a message without posted_at_ms", async () => {
    const wall = { now: 1_795_000_060_000 };
    const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
    const reasons = ["stale", "already_evaluated", "unknown_turn"] as const;
    const handler = createCompactorHandler({
      evaluate: async (message) =>
        message.turn < reasons.length
          ? { outcome: "skipped", reason: reasons[message.turn] as (typeof reasons)[number] }
          : fired(40_210),
      logger: new Logger({ serviceName: "compactor-test", logLevel: "DEBUG" }),
      metrics,
      now: steppingClock(),
      clock: { nowMillis: () => wall.now },
    });

    await handler(
      event(
        ...reasons.map((_, turn) =>
          record(
            `m${turn}`,
            { ...msg(turn, `c${turn}`), posted_at_ms: 1_795_000_000_000 },
            `g${turn}`,
          ),
        ),
        // Queued before posted_at_ms existed: evaluated as before, no lag.
        record("m9", msg(9, "c9"), "g9"),
      ),
    );

    expect(emf().flatMap(emfMetricNames)).not.toContain("EvaluationLagMs");
    expect(logs().filter((line) => "evaluation_lag_ms" in line)).toEqual([]);
    expect(logs().map((line) => line.message)).toContain("auto_compaction.fired");
  });

  it("reports a lag of 0, not a negative one, when the API's clock is ahead of the compactor's", async () => {
    const metrics = new Metrics({ namespace: "Autocompact", serviceName: "compactor-test" });
    const handler = createCompactorHandler({
      evaluate: async () => fired(40_210),
      logger: new Logger({ serviceName: "compactor-test", logLevel: "DEBUG" }),
      metrics,
      now: steppingClock(),
      clock: { nowMillis: () => 1_795_000_000_000 },
    });

    await handler(event(record("m1", { ...msg(11), posted_at_ms: 1_795_000_000_400 })));

    const blob = emf().find((b) => emfMetricNames(b).includes("EvaluationLagMs"));
    expect(blob?.EvaluationLagMs).toBe(0);
  });

  it("counts failures, and emits nothing more for an invocation without metrics", async () => {
    const { handler } = setup(async () => {
      throw new Error("boom");
    });
    await handler(event(record("m1", msg(1))));
    expect(emf().map((blob) => blob.Failed)).toEqual([1]);

    lines = [];
    await handler(event());
    expect(lines).toEqual([]);
  });
});

describe("policyOf", () => {
  it("names the policies a band applies", () => {
    expect(policyOf(band)).toBe("reasoning+tool_calls");
    expect(policyOf({ ...band, reasoning: undefined })).toBe("tool_calls");
    expect(policyOf({ ...band, tool_calls: { policy: "omit" }, reasoning: undefined })).toBe(
      "tool_calls",
    );
    expect(policyOf(undefined)).toBe("none");
  });
});
