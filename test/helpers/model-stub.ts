/**
 * A stub model server on 127.0.0.1 (a free port) for the summarizer tests:
 * records every request and answers with what the test's handler says, so the
 * real clients are driven over real HTTP: HTTP/1.1 for `fetch`, cleartext
 * HTTP/2 for the Bedrock Runtime client (its default handler is the SDK's
 * HTTP/2 one, as in Lambda). Also the models of the README's agent loops
 * that several loops share (test/e2e/agent-loops*.test.ts).
 */
import { randomBytes } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import type { AddressInfo } from "node:net";

/** A request the stub received. */
export interface StubRequest {
  readonly method: string;
  /** The decoded path (e.g. `/model/anthropic.claude:0/converse`). */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  /** The body parsed as JSON (`undefined` when it is not JSON). */
  readonly body: unknown;
}

/** What the stub answers: a JSON body with a status, a raw body, or never (`"hang"`). */
export type StubReply =
  | {
      readonly status?: number;
      readonly json?: unknown;
      readonly body?: string;
      readonly headers?: Record<string, string>;
    }
  | "hang";

export type StubHandler = (request: StubRequest) => StubReply | Promise<StubReply>;

/** A running stub. */
export interface ModelStub {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: StubRequest[];
  /** Replaces the handler (e.g. a failing model that recovers). */
  reply(handler: StubHandler): void;
  close(): Promise<void>;
}

/** Starts a stub answering with `handler`, over HTTP/1.1 or (`http2`) cleartext HTTP/2. */
export async function startModelStub(
  handler: StubHandler,
  options: { readonly http2?: boolean } = {},
): Promise<ModelStub> {
  let current = handler;
  const requests: StubRequest[] = [];
  const serve = (
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
  ) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const request: StubRequest = {
        method: req.method ?? "",
        path: decodeURIComponent(req.url ?? ""),
        headers: req.headers,
        raw,
        body,
      };
      requests.push(request);
      Promise.resolve(current(request)).then(
        (reply) => {
          if (reply === "hang") return;
          const text = reply.json === undefined ? (reply.body ?? "") : JSON.stringify(reply.json);
          res.writeHead(reply.status ?? 200, {
            "content-type": reply.json === undefined ? "text/plain" : "application/json",
            ...reply.headers,
          });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(599, { "content-type": "text/plain" });
          res.end(String(error));
        },
      );
    });
  };
  const sessions = new Set<Http2Session>();
  const server = options.http2 ? createHttp2Server(serve) : createServer(serve);
  if (options.http2) {
    server.on("session", (session: Http2Session) => {
      sessions.add(session);
      session.on("close", () => sessions.delete(session));
    });
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply(next) {
      current = next;
    },
    close() {
      if ("closeAllConnections" in server) server.closeAllConnections();
      for (const session of sessions) session.destroy();
      return new Promise((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/** A Bedrock Converse answer. */
export function converseAnswer(text: string, inputTokens = 1234, outputTokens = 56) {
  return {
    json: {
      output: { message: { role: "assistant", content: [{ text }] } },
      stopReason: "end_turn",
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      metrics: { latencyMs: 42 },
    },
  };
}

/** An OpenAI chat-completions answer. */
export function chatCompletion(text: string | null, promptTokens = 1234, completionTokens = 56) {
  return {
    json: {
      id: "chatcmpl-stub",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "stub-served-model",
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    },
  };
}

/** What a {@link responsesAgentModel} put in one reply's `output`, for the turn it answered. */
export interface IssuedOutput {
  readonly turn: number;
  /** A reasoning item, then a `function_call` (`fc_` id) or the answer's `message`. */
  readonly output: readonly Record<string, unknown>[];
}

/**
 * An OpenAI Responses API model on `POST /v1/responses` running an agent
 * loop: when the request's last `input` item is a user message, a reasoning
 * item and a `function_call` of `tool` with `args`; after its output, a
 * reasoning item and the final `message` `answer(turn)`, the turn being the
 * count of user messages in `input` minus one. Items have the API's ids
 * (`rs_`, `fc_` with its `call_`, `msg_`); reasoning carries
 * `encrypted_content` only when `include` asks for it, as the API does. The
 * reply is the API's Response object, which both the `openai` client and
 * `@ai-sdk/openai` parse.
 */
export function responsesAgentModel(options: {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly answer: (turn: number) => string;
  readonly issued: IssuedOutput[];
}): StubHandler {
  const id = (prefix: string) => `${prefix}_${randomBytes(24).toString("hex")}`;
  let n = 0;
  return (request) => {
    if (request.method !== "POST" || request.path !== "/v1/responses") {
      return {
        status: 404,
        json: { error: { message: `no route ${request.path}`, type: "invalid_request_error" } },
      };
    }
    n += 1;
    const body = request.body as {
      model?: string;
      input?: { type?: string; role?: string }[];
      include?: string[];
      instructions?: string;
      store?: boolean;
      tools?: unknown[];
    };
    const input = body.input ?? [];
    const isUser = (item: { type?: string; role?: string } | undefined) =>
      item?.role === "user" && (item.type ?? "message") === "message";
    const turn = input.filter(isUser).length - 1;
    const asking = isUser(input.at(-1));
    const reasoning = {
      id: id("rs"),
      type: "reasoning",
      summary: [
        {
          type: "summary_text",
          text: `Turn ${turn}, step ${asking ? 1 : 2}: ${asking ? "read the file" : "answer from it"}.`,
        },
      ],
      ...(body.include?.includes("reasoning.encrypted_content")
        ? { encrypted_content: randomBytes(120).toString("base64") }
        : {}),
    };
    const step = asking
      ? {
          id: id("fc"),
          type: "function_call",
          status: "completed",
          arguments: JSON.stringify(options.args),
          call_id: `call_${randomBytes(12).toString("base64url")}`,
          name: options.tool,
        }
      : {
          id: id("msg"),
          type: "message",
          status: "completed",
          content: [
            { type: "output_text", annotations: [], logprobs: [], text: options.answer(turn) },
          ],
          role: "assistant",
        };
    const output = [reasoning, step];
    options.issued.push({ turn, output });
    return responsesReply(body, output, n);
  };
}

/** The Responses API's Response object of reply `n` to `body`, holding `output`. */
export function responsesReply(
  body: { instructions?: string; store?: boolean; tools?: unknown[] },
  output: readonly Record<string, unknown>[],
  n: number,
): StubReply {
  return {
    json: {
      id: `resp_${randomBytes(24).toString("hex")}`,
      object: "response",
      created_at: 1_764_576_000 + n,
      status: "completed",
      background: false,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: null,
      model: "gpt-5-2025-08-07",
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: "medium", summary: null },
      service_tier: "default",
      store: body.store ?? true,
      temperature: 1,
      text: { format: { type: "text" }, verbosity: "medium" },
      tool_choice: "auto",
      tools: body.tools ?? [],
      top_p: 1,
      truncation: "disabled",
      usage: {
        input_tokens: 1000,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 60,
        output_tokens_details: { reasoning_tokens: 40 },
        total_tokens: 1060,
      },
      user: null,
      metadata: {},
    },
  };
}

/** The Chat Completions answer of call `n`: `message`, finished by `tool_calls` when it has some. */
export function chatCompletionReply(
  n: number,
  message: { readonly role: string; readonly tool_calls?: unknown },
): StubReply {
  return {
    json: {
      id: `chatcmpl-${n}`,
      object: "chat.completion",
      created: 1_764_576_000 + n,
      model: "gpt-4.1-2025-04-14",
      choices: [
        {
          index: 0,
          message,
          logprobs: null,
          finish_reason: message.tool_calls ? "tool_calls" : "stop",
        },
      ],
      usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 },
      service_tier: "default",
      system_fingerprint: "fp_stub",
    },
  };
}

/** The Messages API's Message of call `n`: `content`, stopped for `tool_use` when it calls a tool. */
export function anthropicMessageReply(n: number, content: readonly { type: string }[]): StubReply {
  return {
    json: {
      id: `msg_stub_${n}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content,
      stop_reason: content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 1000,
        output_tokens: 40,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  };
}
