/**
 * The summarizer adapters driving their real clients (the Bedrock Runtime SDK
 * client, the global `fetch`) against a stub model server on 127.0.0.1: what
 * the model receives (the raw events of the band, the prompt or the rule's
 * instructions, truncation of huge items, the model id), what comes back, and
 * every failure being thrown, never turned into a summary.
 */
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import { DEFAULT_SUMMARY_PROMPT } from "../../core/transcript.ts";
import { readEnvironment } from "../../functions/env.ts";
import { EmptySummaryError, SummarizerError } from "../../functions/errors.ts";
import type { Summarizer, SummaryRequest } from "../../functions/ports.ts";
import { BedrockSummarizer } from "../../functions/summarizers/bedrock.ts";
import { summarizerFromEnvironment } from "../../functions/summarizers/from-env.ts";
import { OpenAiCompatibleSummarizer } from "../../functions/summarizers/openai.ts";
import { message, request, toolCall, toolResult, turnStart } from "../helpers/builders.ts";
import {
  chatCompletion,
  converseAnswer,
  type ModelStub,
  type StubRequest,
  startModelStub,
} from "../helpers/model-stub.ts";

const HUGE = `LOG-START ${"0123456789".repeat(90_000)} LOG-END`;

/** Turns 4..5 of a conversation: requests, reasoning, a tool call with a 900 KB result. */
function bandEvents(): Entry[] {
  return [
    turnStart(40),
    request("read the build log and fix the failing test", 40),
    { type: "chat_response", timestamp: message("", 40).timestamp, reasoning: "the log is long" },
    toolCall("call-1", "read_file", { path: "build/output.log" }, 41),
    toolResult("call-1", HUGE, false, 41),
    message("The test in src/parse.test.ts fails on empty input.", 42),
    turnStart(50),
    request("fix it", 50),
    toolCall("call-2", "edit_file", { path: "src/parse.ts", line: 12 }, 51),
    toolResult("call-2", "TypeError: cannot read 'length' of undefined", true, 51),
    message("Guarded the empty case; all tests pass.", 52),
  ];
}

const summaryRequest = (extra: Partial<SummaryRequest> = {}): SummaryRequest => ({
  from_turn: 4,
  to_turn: 5,
  events: bandEvents(),
  ...extra,
});

/** The checks on what the model got, shared by both adapters. */
function expectTranscript(system: string, user: string, instructions?: string): void {
  expect(system).toBe(instructions ?? DEFAULT_SUMMARY_PROMPT);
  expect(user).toContain("turns 4–5");
  expect(user).toContain("## Turn 4");
  expect(user).toContain("## Turn 5");
  expect(user).not.toContain("## Turn 6");
  expect(user).toContain("[user]\nread the build log and fix the failing test");
  expect(user).toContain("[assistant reasoning]\nthe log is long");
  expect(user).toContain('[tool call read_file id=call-1]\n{"path":"build/output.log"}');
  expect(user).toContain("[tool result read_file id=call-1]\nLOG-START 0123");
  expect(user).toMatch(/\[… 89\d{4} chars omitted …\]\n[0-9]+ LOG-END/);
  expect(user).toContain(
    "[tool result edit_file id=call-2 error]\nTypeError: cannot read 'length' of undefined",
  );
  expect(user).toContain("[assistant]\nGuarded the empty case; all tests pass.");
  expect(user.length).toBeLessThan(20_000);
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the summary to fail");
}

let stub: ModelStub;
beforeAll(async () => {
  stub = await startModelStub(() => ({ status: 500, body: "no handler" }));
});
afterEach(() => {
  stub.requests.length = 0;
});
afterAll(async () => {
  await stub.close();
});

describe("BedrockSummarizer (Converse through the real SDK client)", () => {
  // The client's default request handler speaks HTTP/2, so this stub does too.
  let stub: ModelStub;
  beforeAll(async () => {
    stub = await startModelStub(() => ({ status: 500, body: "no handler" }), { http2: true });
  });
  afterEach(() => {
    stub.requests.length = 0;
  });
  afterAll(async () => {
    await stub.close();
  });
  const client = () =>
    new BedrockRuntimeClient({
      endpoint: stub.url,
      region: "us-east-1",
      credentials: { accessKeyId: "AKIDSTUB", secretAccessKey: "stub-secret" },
      maxAttempts: 1,
    });
  const summarizer = (timeoutMs?: number) =>
    new BedrockSummarizer(client(), {
      defaultModelId: "anthropic.claude-3-5-haiku-20241022-v1:0",
      maxOutputTokens: 1_000,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });

  const converse = (r: StubRequest) => {
    const body = r.body as {
      system: { text: string }[];
      messages: { role: string; content: { text: string }[] }[];
      inferenceConfig: { maxTokens: number };
    };
    return {
      system: body.system.map((b) => b.text).join(""),
      user: body.messages[0]?.content.map((b) => b.text).join("") ?? "",
      roles: body.messages.map((m) => m.role),
      maxTokens: body.inferenceConfig.maxTokens,
    };
  };

  it("sends the raw band with the default prompt to the default model and returns text, usage and latency", async () => {
    stub.reply(() => converseAnswer("  Fixed src/parse.ts: empty input guarded.  ", 2_000, 30));
    const result = await summarizer().summarize(summaryRequest());
    expect(result).toEqual({
      text: "Fixed src/parse.ts: empty input guarded.",
      model: "anthropic.claude-3-5-haiku-20241022-v1:0",
      input_tokens: 2_000,
      output_tokens: 30,
      latency_ms: expect.any(Number),
    });
    expect(stub.requests).toHaveLength(1);
    const [received] = stub.requests as [StubRequest];
    expect(received.method).toBe("POST");
    expect(received.path).toBe("/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse");
    expect(received.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSTUB\//);
    const sent = converse(received);
    expect(sent.roles).toEqual(["user"]);
    expect(sent.maxTokens).toBe(1_000);
    expectTranscript(sent.system, sent.user);
  });

  it("uses the rule's model and replaces the prompt with its instructions", async () => {
    stub.reply(() => converseAnswer("three bullets"));
    const result = await summarizer().summarize(
      summaryRequest({ model: "us.amazon.nova-lite-v1:0", instructions: "Three bullets only." }),
    );
    expect(result.model).toBe("us.amazon.nova-lite-v1:0");
    const [received] = stub.requests as [StubRequest];
    expect(received.path).toBe("/model/us.amazon.nova-lite-v1:0/converse");
    const sent = converse(received);
    expectTranscript(sent.system, sent.user, "Three bullets only.");
  });

  it("wraps a service failure (500) in a SummarizerError with the status and the cause", async () => {
    stub.reply(() => ({
      status: 500,
      json: { message: "the model is overloaded" },
      headers: { "x-amzn-errortype": "InternalServerException" },
    }));
    const error = await rejection(summarizer().summarize(summaryRequest()));
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ status: 502, type: "/problems/summarizer-failed" });
    expect(error.message).toMatch(/InternalServerException: the model is overloaded \(HTTP 500\)/);
    expect((error as SummarizerError).upstreamStatus).toBe(500);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("aborts after the timeout with a summary-timeout SummarizerError (504) when the model never answers", async () => {
    stub.reply(() => "hang");
    const started = Date.now();
    const error = await rejection(summarizer(300).summarize(summaryRequest()));
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ status: 504, type: "/problems/summary-timeout", timeoutMs: 300 });
    expect(error.message).toContain("no answer within 300 ms");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("aborts at the caller's deadline, long before its own timeout, as a summary-timeout SummarizerError", async () => {
    stub.reply(() => "hang");
    const started = Date.now();
    const error = await rejection(
      summarizer(60_000).summarize(summaryRequest(), { signal: AbortSignal.timeout(200) }),
    );
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ status: 504, type: "/problems/summary-timeout" });
    expect((error as SummarizerError).timeoutMs).toBeGreaterThan(0);
    expect((error as SummarizerError).timeoutMs).toBeLessThan(60_000);
    expect(error.message).toContain("no answer before the caller's deadline");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("throws EmptySummaryError on an empty or blank answer", async () => {
    for (const text of ["", "  \n "]) {
      stub.reply(() => converseAnswer(text));
      expect(await rejection(summarizer().summarize(summaryRequest()))).toBeInstanceOf(
        EmptySummaryError,
      );
    }
    stub.reply(() => ({
      json: {
        ...converseAnswer("x").json,
        output: { message: { role: "assistant", content: [] } },
      },
    }));
    expect(await rejection(summarizer().summarize(summaryRequest()))).toBeInstanceOf(
      EmptySummaryError,
    );
  });

  it("refuses a guardrail's answer as a summary", async () => {
    stub.reply(() => ({
      json: { ...converseAnswer("Sorry, I can't help.").json, stopReason: "guardrail_intervened" },
    }));
    const error = await rejection(summarizer().summarize(summaryRequest()));
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error.message).toContain("guardrail_intervened");
  });
});

describe("OpenAiCompatibleSummarizer (chat completions through fetch)", () => {
  const summarizer = (
    options: { apiKey?: string; defaultModelId?: string; timeoutMs?: number } = {},
  ) =>
    new OpenAiCompatibleSummarizer({
      baseUrl: `${stub.url}/v1/`,
      maxOutputTokens: 800,
      ...options,
    });

  const chat = (r: StubRequest) =>
    r.body as {
      model?: string;
      max_tokens: number;
      messages: { role: string; content: string }[];
    };

  it("posts system and user messages with the model and max_tokens, and parses content and usage", async () => {
    stub.reply(() => chatCompletion("Guarded empty input in src/parse.ts.", 3_000, 40));
    const result = await summarizer({ apiKey: "sk-test", defaultModelId: "gpt-4o-mini" }).summarize(
      summaryRequest(),
    );
    expect(result).toEqual({
      text: "Guarded empty input in src/parse.ts.",
      model: "gpt-4o-mini",
      input_tokens: 3_000,
      output_tokens: 40,
      latency_ms: expect.any(Number),
    });
    const [received] = stub.requests as [StubRequest];
    expect(received.method).toBe("POST");
    expect(received.path).toBe("/v1/chat/completions");
    expect(received.headers.authorization).toBe("Bearer sk-test");
    expect(received.headers["content-type"]).toBe("application/json");
    const body = chat(received);
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.max_tokens).toBe(800);
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expectTranscript(body.messages[0]?.content ?? "", body.messages[1]?.content ?? "");
  });

  it("works without a key (llama.cpp, Ollama), with the rule's model and instructions", async () => {
    stub.reply(() => chatCompletion("short"));
    const result = await summarizer({ defaultModelId: "llama3.2" }).summarize(
      summaryRequest({ model: "qwen2.5:7b", instructions: "Be brief." }),
    );
    expect(result.model).toBe("qwen2.5:7b");
    const [received] = stub.requests as [StubRequest];
    expect(received.headers.authorization).toBeUndefined();
    const body = chat(received);
    expect(body.model).toBe("qwen2.5:7b");
    expectTranscript(body.messages[0]?.content ?? "", body.messages[1]?.content ?? "", "Be brief.");
  });

  it("names no model when none is known, reporting the one the server used", async () => {
    stub.reply(() => chatCompletion("<think>\nlet me see\n</think>\n\nThe summary."));
    const result = await summarizer().summarize(summaryRequest());
    expect(chat(stub.requests[0] as StubRequest)).not.toHaveProperty("model");
    expect(result.model).toBe("stub-served-model");
    expect(result.text).toBe("The summary.");
  });

  it("turns a non-2xx answer into a SummarizerError with the status and the body's error message", async () => {
    const cases = [
      {
        json: { error: { message: "model overloaded", type: "server_error" } },
        expected: "model overloaded",
      },
      {
        json: { error: 'model "nope" not found, try pulling it first' },
        expected: 'model "nope" not found',
      },
      { body: "<html>Bad Gateway</html>", expected: "<html>Bad Gateway</html>" },
    ];
    for (const { expected, ...reply } of cases) {
      stub.reply(() => ({ status: 500, ...reply }));
      const error = await rejection(
        summarizer({ defaultModelId: "m" }).summarize(summaryRequest()),
      );
      expect(error).toBeInstanceOf(SummarizerError);
      expect(error.message).toContain("HTTP 500");
      expect(error.message).toContain(expected);
      expect((error as SummarizerError).upstreamStatus).toBe(500);
    }
    stub.reply(() => ({ status: 401, json: { error: { message: "Incorrect API key provided" } } }));
    const unauthorized = await rejection(
      summarizer({ apiKey: "sk-wrong" }).summarize(summaryRequest()),
    );
    expect((unauthorized as SummarizerError).upstreamStatus).toBe(401);
    expect(unauthorized.message).not.toContain("sk-wrong");
  });

  it("rejects an answer that is not a chat completion", async () => {
    for (const reply of [
      { body: "not json" },
      { json: { choices: [] } },
      { json: { result: "x" } },
    ]) {
      stub.reply(() => reply);
      const error = await rejection(summarizer().summarize(summaryRequest()));
      expect(error).toBeInstanceOf(SummarizerError);
      expect(error.message).toContain("unexpected answer");
    }
  });

  it("aborts after the timeout with a summary-timeout SummarizerError (504) when the server never answers", async () => {
    stub.reply(() => "hang");
    const started = Date.now();
    const error = await rejection(summarizer({ timeoutMs: 300 }).summarize(summaryRequest()));
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ status: 504, type: "/problems/summary-timeout", timeoutMs: 300 });
    expect(error.message).toContain("no answer within 300 ms");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("aborts at the caller's deadline, long before its own timeout, as a summary-timeout SummarizerError", async () => {
    stub.reply(() => "hang");
    const started = Date.now();
    const error = await rejection(
      summarizer({ timeoutMs: 60_000 }).summarize(summaryRequest(), {
        signal: AbortSignal.timeout(200),
      }),
    );
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ status: 504, type: "/problems/summary-timeout" });
    expect((error as SummarizerError).timeoutMs).toBeGreaterThan(0);
    expect((error as SummarizerError).timeoutMs).toBeLessThan(60_000);
    expect(error.message).toContain("no answer before the caller's deadline");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("sends nothing when the caller's deadline has already passed", async () => {
    stub.reply(() => chatCompletion("too late"));
    const error = await rejection(
      summarizer().summarize(summaryRequest(), { signal: AbortSignal.abort() }),
    );
    expect(error).toMatchObject({ status: 504, type: "/problems/summary-timeout", timeoutMs: 0 });
    expect(stub.requests).toHaveLength(0);
  });

  it("throws EmptySummaryError on an empty, blank or null answer", async () => {
    for (const text of ["", "   ", null, "<think>only thinking</think>"]) {
      stub.reply(() => chatCompletion(text));
      expect(await rejection(summarizer().summarize(summaryRequest()))).toBeInstanceOf(
        EmptySummaryError,
      );
    }
  });

  it("wraps a connection failure in a SummarizerError", async () => {
    const closed = await startModelStub(() => chatCompletion("x"));
    const url = closed.url;
    await closed.close();
    const error = await rejection(
      new OpenAiCompatibleSummarizer({ baseUrl: url }).summarize(summaryRequest()),
    );
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error.message).toContain("ECONNREFUSED");
  });
});

describe("summarizerFromEnvironment", () => {
  const env = (extra: Record<string, string>) => readEnvironment({ TABLE_NAME: "table", ...extra });

  it("builds none, Bedrock or the OpenAI-compatible adapter from the environment", async () => {
    expect(await summarizerFromEnvironment(env({}))).toBeUndefined();
    expect(
      await summarizerFromEnvironment(
        env({ SUMMARIZER: "bedrock", SUMMARY_MODEL_ID: "amazon.nova-lite-v1:0" }),
      ),
    ).toBeInstanceOf(BedrockSummarizer);
    const openai: Summarizer | undefined = await summarizerFromEnvironment(
      env({
        SUMMARIZER: "openai-compatible",
        OPENAI_BASE_URL: `${stub.url}/v1`,
        OPENAI_API_KEY: "sk-env",
        SUMMARY_MODEL_ID: "env-model",
      }),
    );
    expect(openai).toBeInstanceOf(OpenAiCompatibleSummarizer);
    stub.reply(() => chatCompletion("from env"));
    expect((await openai?.summarize(summaryRequest()))?.model).toBe("env-model");
    expect(stub.requests[0]?.headers.authorization).toBe("Bearer sk-env");
  });

  it("requires a model id for Bedrock", async () => {
    await expect(summarizerFromEnvironment(env({ SUMMARIZER: "bedrock" }))).rejects.toThrow(
      /SUMMARY_MODEL_ID: required when SUMMARIZER is bedrock/,
    );
  });

  it("reads the OpenAI-compatible key from Secrets Manager when given a secret id", async () => {
    const { mockClient } = await import("aws-sdk-client-mock");
    const { GetSecretValueCommand, SecretsManagerClient } = await import(
      "@aws-sdk/client-secrets-manager"
    );
    const secrets = mockClient(SecretsManagerClient);
    secrets
      .on(GetSecretValueCommand, { SecretId: "autocompact/openai" })
      .resolves({ SecretString: "sk-secret\n" });
    try {
      const openai = await summarizerFromEnvironment(
        env({
          SUMMARIZER: "openai-compatible",
          OPENAI_BASE_URL: `${stub.url}/v1`,
          OPENAI_API_KEY_SECRET_ID: "autocompact/openai",
        }),
      );
      stub.reply(() => chatCompletion("with the secret"));
      await openai?.summarize(summaryRequest());
      expect(stub.requests.at(-1)?.headers.authorization).toBe("Bearer sk-secret");
    } finally {
      secrets.restore();
    }
  });
});
