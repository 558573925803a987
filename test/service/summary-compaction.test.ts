/**
 * Summary compaction end to end on the in-memory service: the OpenAI-compatible
 * adapter (real `fetch`) against a stub model server. An auto rule with a
 * `summary` block summarizes the RAW events of the band before the
 * conditional write; a failed, timed-out or empty summary commits nothing and
 * fails the message (so SQS retries it); a manual summary is extended over
 * the summaries it intersects and summarizes the whole extended range.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { SQSEvent } from "aws-lambda";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { estimateView } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import { project, SUMMARY_REQUEST_CONTENT } from "../../core/projection.ts";
import { DEFAULT_SUMMARY_PROMPT } from "../../core/transcript.ts";
import { utf8Length } from "../../core/utf8.ts";
import { createCompactorHandler } from "../../functions/compactor/handler.ts";
import { EmptySummaryError, SummarizerError } from "../../functions/errors.ts";
import type { EvaluationMessage, Tenant } from "../../functions/ports.ts";
import { OpenAiCompatibleSummarizer } from "../../functions/summarizers/openai.ts";
import { message, request, toolCall, toolResult, turnStart } from "../helpers/builders.ts";
import {
  chatCompletion,
  type ModelStub,
  type StubReply,
  type StubRequest,
  startModelStub,
} from "../helpers/model-stub.ts";
import { harness } from "../helpers/service.ts";

const ALICE: Tenant = { id: "alice" };
const CONVERSATION = "c";
const INSTRUCTIONS = "Summarize for the integration test: keep every file path.";
/** 8,000 tokens: the default ratio 0.75 puts the threshold at 6,000 tokens (24,000 chars). */
const MODEL = { id: "stub-agent-model", context_window: 8_000 };

/** Turn `t`: a question, a tool call reading a file (~3 KB), its result, an answer (~3.1 KB in all). */
function turnEvents(t: number): Entry[] {
  const s = t * 60;
  return [
    turnStart(s),
    request(`question ${t}: look at src/file${t}.ts`, s),
    toolCall(`call-${t}`, "read_file", { path: `src/file${t}.ts` }, s + 1),
    toolResult(
      `call-${t}`,
      `contents of src/file${t}.ts ${"x".repeat(3_000)} end of file ${t}`,
      false,
      s + 2,
    ),
    message(`answer ${t}: src/file${t}.ts is fine`, s + 3),
  ];
}

const SUMMARY_TEXT = "Turns 1–4 read src/file1.ts to src/file4.ts; all were fine.";

interface Chat {
  model?: string;
  messages: { role: string; content: string }[];
}
const chatOf = (r: StubRequest | undefined) => r?.body as Chat;
const userText = (r: StubRequest | undefined) => chatOf(r).messages[1]?.content ?? "";

/** Checks that the model got exactly the raw events of turns `from..to`. */
function expectRawTurns(user: string, from: number, to: number, total: number): void {
  for (let t = 0; t < total; t++) {
    const inBand = t >= from && t <= to;
    const checks = [
      `## Turn ${t}\n`,
      `[user]\nquestion ${t}: look at src/file${t}.ts`,
      `[tool call read_file id=call-${t}]\n{"path":"src/file${t}.ts"}`,
      `[tool result read_file id=call-${t}]\ncontents of src/file${t}.ts xxx`,
      ` end of file ${t}\n`,
      `[assistant]\nanswer ${t}: src/file${t}.ts is fine`,
    ];
    for (const check of checks) {
      if (inBand) expect(user).toContain(check);
      else expect(user).not.toContain(check);
    }
  }
}

let stub: ModelStub;
beforeAll(async () => {
  stub = await startModelStub(() => chatCompletion(SUMMARY_TEXT, 5_000, 60));
});
afterEach(() => {
  stub.requests.length = 0;
  stub.reply(() => chatCompletion(SUMMARY_TEXT, 5_000, 60));
});
afterAll(async () => {
  await stub.close();
});

const summarizer = (timeoutMs = 5_000) =>
  new OpenAiCompatibleSummarizer({
    baseUrl: `${stub.url}/v1`,
    defaultModelId: "stub-summary-model",
    timeoutMs,
  });

function autoHarness(timeoutMs?: number) {
  return harness({
    settings: { config: { enabled: true, rule: { summary: { instructions: INSTRUCTIONS } } } },
    summarizer: summarizer(timeoutMs),
  });
}

type Harness = ReturnType<typeof harness>;

/** Posts turns `from..to`, delivering each evaluation message right after its turn. */
async function postAndEvaluate(h: Harness, from: number, to: number) {
  const outcomes = [];
  for (let t = from; t <= to; t++) {
    await h.service.appendTurn(ALICE, CONVERSATION, {
      turn: t,
      model: MODEL,
      events: turnEvents(t),
    });
    for (const m of h.queue.take()) outcomes.push({ turn: m.turn, ...(await h.evaluate(m)) });
  }
  return outcomes;
}

const rawStream = (turns: number) => Array.from({ length: turns }, (_, t) => turnEvents(t)).flat();

describe("auto compaction with a summary rule", () => {
  it("summarizes the raw band, stores a summary-only band with the summary's audit, and projects as core does", async () => {
    const h = autoHarness();
    const outcomes = await postAndEvaluate(h, 0, 7);
    expect(outcomes.map((o) => o.outcome)).toEqual([...Array(7).fill("skipped"), "fired"]);

    // The model got the rule's instructions and the raw events of turns 1..4, nothing else.
    expect(stub.requests).toHaveLength(1);
    const chat = chatOf(stub.requests[0]);
    expect(chat.model).toBe("stub-summary-model");
    expect(chat.messages[0]).toEqual({ role: "system", content: INSTRUCTIONS });
    expect(userText(stub.requests[0])).toContain("turns 1–4");
    expectRawTurns(userText(stub.requests[0]), 1, 4, 8);

    // The stored band: only `summary` set, and the trigger carries the summary's model, tokens, latency.
    const stored = await h.store.listCompactions({ tenant: "alice", conversation: CONVERSATION });
    expect(stored).toHaveLength(1);
    const [{ key, compaction }] = stored as [(typeof stored)[number]];
    expect(key).toBe("AUTO#000007");
    // Written with its form, built from the turns its summary read (no view read yet).
    const forms = await h.store.listMaterialized({ tenant: "alice", conversation: CONVERSATION });
    expect(forms.map((f) => [f.key, f.from_turn, f.to_turn])).toEqual([["AUTO#000007", 1, 4]]);
    expect(Object.keys(compaction).sort()).toEqual(
      ["from_turn", "source", "summary", "timestamp", "to_turn", "trigger", "type"].sort(),
    );
    expect(compaction).toMatchObject({
      type: "compaction",
      source: "auto",
      from_turn: 1,
      to_turn: 4,
      summary: { summary: SUMMARY_TEXT },
    });
    const trigger = compaction.trigger as Record<string, unknown> & {
      estimated_tokens: number;
      estimated_tokens_after: number;
    };
    expect(trigger).toEqual({
      turn: 7,
      estimated_tokens: expect.any(Number),
      threshold: 6_000,
      context_window: 8_000,
      estimated_tokens_after: expect.any(Number),
      summary_model: "stub-summary-model",
      summary_input_tokens: 5_000,
      summary_output_tokens: 60,
      summary_latency_ms: expect.any(Number),
    });
    expect(trigger.summary_latency_ms).toBeGreaterThanOrEqual(0);

    // The projected view is core's projection of the stored stream with that band.
    const { events } = await h.service.events(ALICE, CONVERSATION);
    expect(events).toEqual([...rawStream(8), compaction]);
    const expected = project(events);
    const view = await h.service.projection(ALICE, CONVERSATION);
    expect(view.events).toEqual(expected.entries);
    expect(view.turns).toEqual(expected.turns);
    expect(view.turns[1]).toEqual({ summary: { from: 1, to: 4 } });
    const summaryTurn = view.events.filter((e) => e.type !== "turn_start").slice(4, 6);
    expect(summaryTurn).toMatchObject([
      { type: "chat_request", content: SUMMARY_REQUEST_CONTENT },
      { type: "chat_response", message: SUMMARY_TEXT },
    ]);

    // Its size drops by the band's raw characters, plus the summary turn's.
    const before = estimateView(rawStream(8)).chars;
    const band = estimateView([1, 2, 3, 4].flatMap(turnEvents)).chars;
    const after = before - band + utf8Length(SUMMARY_REQUEST_CONTENT) + utf8Length(SUMMARY_TEXT);
    expect(trigger.estimated_tokens).toBe(before / 4);
    expect(view.estimated_tokens).toBe(after / 4);
    expect(trigger.estimated_tokens_after).toBe(after / 4);
    expect(view.estimated_tokens).toBeLessThan(6_000);
    const status = await h.service.summary(ALICE, CONVERSATION);
    expect(status).toMatchObject({ evaluated_through: 7, estimated_tokens: after / 4 });
  });

  const failures: [string, StubReply, abstract new (...args: never[]) => Error, string][] = [
    [
      "an error (500)",
      { status: 500, json: { error: { message: "model overloaded" } } },
      SummarizerError,
      "/problems/summarizer-failed",
    ],
    ["a timeout", "hang", SummarizerError, "/problems/summary-timeout"],
    ["an empty answer", chatCompletion(""), EmptySummaryError, "/problems/empty-summary"],
  ];

  for (const [name, reply, errorClass, type] of failures) {
    it(`commits nothing on ${name}: the evaluation throws and a retry after recovery fires`, async () => {
      const h = autoHarness(300);
      await postAndEvaluate(h, 0, 6);
      await h.service.appendTurn(ALICE, CONVERSATION, {
        turn: 7,
        model: MODEL,
        events: turnEvents(7),
      });
      const [m] = h.queue.take() as [EvaluationMessage];
      const before = await h.service.summary(ALICE, CONVERSATION);
      expect(before).toMatchObject({ turn_count: 8, evaluated_through: 6, compactions: [] });

      stub.reply(() => reply);
      for (let receive = 1; receive <= 2; receive++) {
        const failure = h.evaluate(m);
        await expect(failure).rejects.toBeInstanceOf(errorClass);
        await expect(failure).rejects.toMatchObject({ type });
        expect(await h.service.summary(ALICE, CONVERSATION)).toEqual(before);
        expect(await h.service.events(ALICE, CONVERSATION)).toEqual({ events: rawStream(8) });
      }
      expect(stub.requests).toHaveLength(2);

      stub.reply(() => chatCompletion(SUMMARY_TEXT, 5_000, 60));
      const retried = await h.evaluate(m);
      expect(retried.outcome).toBe("fired");
      expect(await h.service.summary(ALICE, CONVERSATION)).toMatchObject({
        evaluated_through: 7,
        compactions: [{ from_turn: 1, to_turn: 4, summary: { summary: SUMMARY_TEXT } }],
      });
    });
  }

  it("fails a summary at the record's deadline even from a summarizer that ignores it, and commits nothing", async () => {
    // A summarizer that never answers and never looks at the signal.
    const h = harness({
      settings: { config: { enabled: true, rule: { summary: {} } } },
      summarizer: { summarize: () => new Promise(() => {}) },
    });
    for (let t = 0; t <= 7; t++) {
      await h.service.appendTurn(ALICE, CONVERSATION, {
        turn: t,
        model: MODEL,
        events: turnEvents(t),
      });
    }
    const last = h.queue.take().at(-1) as EvaluationMessage;
    const before = await h.service.summary(ALICE, CONVERSATION);
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), 5_000);
    });
    const outcome = await Promise.race([
      h.evaluate(last, { signal: AbortSignal.timeout(100) }).catch((error: unknown) => error),
      hung,
    ]);
    clearTimeout(timer);
    expect(outcome).toBeInstanceOf(SummarizerError);
    expect(outcome).toMatchObject({ status: 504, type: "/problems/summary-timeout" });
    expect((outcome as Error).message).toContain("turns 1..4: no summary before the deadline");
    expect(await h.service.summary(ALICE, CONVERSATION)).toEqual(before);
    expect(await h.service.events(ALICE, CONVERSATION)).toEqual({ events: rawStream(8) });
  });

  it("reports the failed record to SQS as a batch item failure (so it is received again)", async () => {
    const h = autoHarness(300);
    await postAndEvaluate(h, 0, 6);
    await h.service.appendTurn(ALICE, CONVERSATION, {
      turn: 7,
      model: MODEL,
      events: turnEvents(7),
    });
    const [m] = h.queue.take() as [EvaluationMessage];
    stub.reply(() => ({ status: 503, json: { error: { message: "loading model" } } }));
    const silence = () => true;
    vi.spyOn(process.stdout, "write").mockImplementation(silence);
    vi.spyOn(process.stderr, "write").mockImplementation(silence);
    try {
      const handler = createCompactorHandler({
        evaluate: h.evaluate,
        logger: new Logger({ serviceName: "compactor" }),
        metrics: new Metrics({ namespace: "AutocompactTest", serviceName: "compactor" }),
      });
      const event: SQSEvent = {
        Records: [
          {
            messageId: "m-7",
            receiptHandle: "rh-7",
            body: JSON.stringify(m),
            attributes: {
              ApproximateReceiveCount: "1",
              SentTimestamp: "1795000000000",
              SenderId: "test",
              ApproximateFirstReceiveTimestamp: "1795000000000",
              MessageGroupId: "alice#c",
              MessageDeduplicationId: "d-7",
            },
            messageAttributes: {},
            md5OfBody: "",
            eventSource: "aws:sqs",
            eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:evaluations.fifo",
            awsRegion: "eu-west-1",
          },
        ],
      };
      expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: "m-7" }] });
    } finally {
      vi.restoreAllMocks();
    }
    expect(await h.service.summary(ALICE, CONVERSATION)).toMatchObject({
      evaluated_through: 6,
      compactions: [],
    });
  });
});

describe("manual summary compaction", () => {
  async function tenTurns() {
    const h = harness({ summarizer: summarizer() });
    for (let t = 0; t < 10; t++) {
      await h.service.appendTurn(ALICE, CONVERSATION, {
        turn: t,
        model: MODEL,
        events: turnEvents(t),
      });
    }
    h.queue.take();
    return h;
  }

  it("extends over an intersecting summary and summarizes the raw events of the whole extended range", async () => {
    const h = await tenTurns();
    stub.reply(() => chatCompletion("FIRST SUMMARY of turns 2..5"));
    const first = await h.request("POST", `/v1/conversations/${CONVERSATION}/compactions`, {
      spec: "s:2..5",
    });
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({
      position: 1,
      from_turn: 2,
      to_turn: 5,
      source: "manual",
    });

    stub.reply(() => chatCompletion("SECOND SUMMARY of turns 2..8"));
    const second = await h.request("POST", `/v1/conversations/${CONVERSATION}/compactions`, {
      spec: "s:3..8",
    });
    expect(second.status).toBe(201);
    const body = (await second.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      position: 2,
      from_turn: 2,
      to_turn: 8,
      source: "manual",
      summary: { summary: "SECOND SUMMARY of turns 2..8" },
    });
    expect(body).not.toHaveProperty("reasoning");
    expect(body).not.toHaveProperty("tool_calls");
    expect(body).not.toHaveProperty("trigger");

    expect(stub.requests).toHaveLength(2);
    // A spec has no instructions: the default prompt.
    expect(chatOf(stub.requests[1]).messages[0]?.content).toBe(DEFAULT_SUMMARY_PROMPT);
    const user = userText(stub.requests[1]);
    expect(user).toContain("turns 2–8");
    expectRawTurns(user, 2, 8, 10);
    expect(user).not.toContain("FIRST SUMMARY");
    expect(user).not.toContain(SUMMARY_REQUEST_CONTENT);

    const view = await h.service.projection(ALICE, CONVERSATION);
    expect(view.events).toEqual(
      project((await h.service.events(ALICE, CONVERSATION)).events).entries,
    );
    expect(view.turns).toEqual([
      { kept: 0 },
      { kept: 1 },
      { summary: { from: 2, to: 8 } },
      { kept: 9 },
    ]);
    expect(JSON.stringify(view.events)).not.toContain("FIRST SUMMARY");
  });

  it("uses a manual rule's instructions and model, and commits nothing when the summary fails", async () => {
    const h = await tenTurns();
    stub.reply(() => chatCompletion("RULE SUMMARY"));
    const made = await h.request("POST", `/v1/conversations/${CONVERSATION}/compactions`, {
      rule: {
        keep_first: 1,
        keep_last: 2,
        summary: { instructions: "Two lines.", model: { id: "rule-model" } },
      },
    });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({
      from_turn: 1,
      to_turn: 7,
      summary: { summary: "RULE SUMMARY" },
    });
    const chat = chatOf(stub.requests[0]);
    expect(chat.model).toBe("rule-model");
    expect(chat.messages[0]?.content).toBe("Two lines.");
    expectRawTurns(userText(stub.requests[0]), 1, 7, 10);

    const listed = await h.service.compactions(ALICE, CONVERSATION);
    for (const [reply, status, type] of [
      [{ status: 500, json: { error: { message: "boom" } } }, 502, "/problems/summarizer-failed"],
      [chatCompletion("   "), 502, "/problems/empty-summary"],
    ] satisfies [StubReply, number, string][]) {
      stub.reply(() => reply);
      const failed = await h.request("POST", `/v1/conversations/${CONVERSATION}/compactions`, {
        spec: "s:..-1",
      });
      expect(failed.status).toBe(status);
      expect(((await failed.json()) as { type: string }).type).toBe(type);
      expect(await h.service.compactions(ALICE, CONVERSATION)).toEqual(listed);
    }
  });
});
