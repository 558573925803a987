/**
 * The OpenAI-compatible summarizer: one chat-completions call per summary, to
 * OpenAI or any server speaking its API (llama.cpp's `llama-server`, Ollama,
 * vLLM, LiteLLM, …). Uses the global `fetch`; no SDK.
 *
 * The base URL is the API root that `/chat/completions` is appended to, as in
 * OpenAI's clients: `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`
 * (llama.cpp), `http://127.0.0.1:11434/v1` (Ollama). The key is optional
 * (local servers take none). Without a model (neither the rule's
 * `summary.model.id` nor a default) the request names none and the server
 * uses its own (llama.cpp serves the model it loaded; others answer 400).
 */
import * as z from "zod";
import { issueLines } from "../../core/issues.ts";
import { SummarizerError } from "../errors.ts";
import type { SummarizeOptions, Summarizer, SummaryRequest, SummaryResult } from "../ports.ts";
import { bandName, ModelCaller, requireText, type SummarizerOptions } from "./common.ts";

/** Options of {@link OpenAiCompatibleSummarizer}. */
export interface OpenAiCompatibleOptions extends SummarizerOptions {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <key>` when set. */
  readonly apiKey?: string;
  /** The model used when the rule names none. */
  readonly defaultModelId?: string;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof fetch;
}

const Completion = z.looseObject({
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({ content: z.string().nullable().optional() }).optional(),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1, "has no choices"),
  usage: z
    .looseObject({
      prompt_tokens: z.number().int().nonnegative().optional(),
      completion_tokens: z.number().int().nonnegative().optional(),
    })
    .nullable()
    .optional(),
});

/** The most useful line of an error body: OpenAI's and llama.cpp's `error.message`, Ollama's `error`. */
function errorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const error = parsed.error;
    if (typeof error === "string" && error !== "") return error;
    if (error && typeof error === "object") {
      const message = (error as { message?: unknown }).message;
      if (typeof message === "string" && message !== "") return message;
    }
    if (typeof parsed.message === "string" && parsed.message !== "") return parsed.message;
  } catch {
    // not JSON: the body itself
  }
  const text = body.replace(/\s+/g, " ").trim();
  if (text === "") return "(empty body)";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Some local reasoning models put their thinking inline before the answer; it is not the summary. */
function withoutThinking(text: string): string {
  return text.replace(/^\s*<think>[\s\S]*?<\/think>/, "");
}

/** Summarizes through an OpenAI-compatible `/chat/completions` endpoint. */
export class OpenAiCompatibleSummarizer implements Summarizer {
  readonly #url: string;
  readonly #apiKey: string | undefined;
  readonly #defaultModelId: string | undefined;
  readonly #caller: ModelCaller;
  readonly #fetch: typeof fetch;

  constructor(options: OpenAiCompatibleOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch (error) {
      throw new RangeError(`baseUrl must be an http(s) URL (got "${options.baseUrl}")`, {
        cause: error,
      });
    }
    if (base.protocol !== "http:" && base.protocol !== "https:") {
      throw new RangeError(`baseUrl must be an http(s) URL (got "${options.baseUrl}")`);
    }
    this.#url = `${base.href.replace(/\/+$/, "")}/chat/completions`;
    this.#apiKey = options.apiKey || undefined;
    this.#defaultModelId = options.defaultModelId || undefined;
    this.#caller = new ModelCaller(options);
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async summarize(request: SummaryRequest, options?: SummarizeOptions): Promise<SummaryResult> {
    const model = request.model ?? this.#defaultModelId;
    const shown = model ?? "the server's default model";
    const what = `${this.#url} (${shown}) summarizing ${bandName(request)}`;
    const { system, user } = this.#caller.prompt(request);
    const body = JSON.stringify({
      ...(model === undefined ? {} : { model }),
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
      max_tokens: this.#caller.maxOutputTokens,
    });
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
      ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}),
    };
    const {
      answer: { status, text: answer },
      latencyMs: latency,
    } = await this.#caller.call(
      { what, model: shown },
      async (signal) => {
        const response = await this.#fetch(this.#url, { method: "POST", headers, body, signal });
        return { status: response.status, text: await response.text() };
      },
      (error) => {
        const reason = error instanceof Error ? error.message : String(error);
        const cause = (error as { cause?: { code?: unknown } }).cause?.code;
        return new SummarizerError(
          `${what} failed: ${reason}${typeof cause === "string" ? ` (${cause})` : ""}`,
          { cause: error, ...(model === undefined ? {} : { model }) },
        );
      },
      options?.signal,
    );
    if (status < 200 || status > 299) {
      throw new SummarizerError(`${what}: HTTP ${status}: ${errorMessage(answer)}`, {
        upstreamStatus: status,
        ...(model === undefined ? {} : { model }),
      });
    }
    let parsed: z.infer<typeof Completion>;
    try {
      parsed = Completion.parse(JSON.parse(answer));
    } catch (error) {
      const reason =
        error instanceof z.ZodError
          ? issueLines(error.issues, { root: "answer" }).join("; ")
          : "not JSON";
      throw new SummarizerError(`${what}: unexpected answer: ${reason}`, {
        cause: error,
        upstreamStatus: status,
        ...(model === undefined ? {} : { model }),
      });
    }
    const choice = parsed.choices[0];
    if (choice?.finish_reason === "content_filter") {
      throw new SummarizerError(`${what}: the model refused (finish reason content_filter)`, {
        upstreamStatus: status,
        ...(model === undefined ? {} : { model }),
      });
    }
    const text = requireText(withoutThinking(choice?.message?.content ?? ""), what);
    const usage = parsed.usage ?? undefined;
    return {
      text,
      model: model ?? parsed.model ?? "unknown",
      ...(usage?.prompt_tokens === undefined ? {} : { input_tokens: usage.prompt_tokens }),
      ...(usage?.completion_tokens === undefined ? {} : { output_tokens: usage.completion_tokens }),
      latency_ms: latency,
    };
  }
}
