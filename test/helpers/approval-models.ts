/**
 * Stub models for the agent loops' second script (test/e2e/agent-loops-approval.test.ts,
 * issue 27): a question answered from a tool call, a question the model
 * answers with a hosted web search, a `write_file` call the loop leaves
 * unanswered for the user's approval (the turn ends there) and whose result
 * begins the next turn, then two more questions. Each stub answers like its
 * provider's API and checks every request first, as the API would: the
 * published request schema (OpenAI's, test/helpers/openai-schema.ts), the
 * pairing rules with nothing left pending (test/helpers/tool-pair-rules.ts),
 * Anthropic's alternation and placement (test/helpers/anthropic-rules.ts),
 * and that every id, signature and hosted item it receives is one it issued.
 * A request that breaks a rule is answered 400 with the rules it broke,
 * which fails the loop, and is kept in `violations` for the test to show.
 */
import { randomBytes } from "node:crypto";
import { answerText, QUESTIONS, TOOL } from "./agent-loops.ts";
import { anthropicRuleViolations } from "./anthropic-rules.ts";
import {
  anthropicMessageReply,
  chatCompletionReply,
  responsesReply,
  type StubHandler,
  type StubRequest,
} from "./model-stub.ts";
import { openaiChatMessageErrors, openaiResponsesInputErrors } from "./openai-schema.ts";
import { chatPairViolations, responsesPairViolations } from "./tool-pair-rules.ts";

type Json = Record<string, unknown>;

/** The question the model answers with a hosted web search. */
export const SEARCH = "Search the web: which vitest release is current?";
/** The question the model answers with a `write_file` call, which needs the user's approval. */
export const WRITE = "Write the answers so far to the notes file.";
/** The tool the loops run only once the user said yes. */
export const APPROVED_TOOL = "write_file";
/** The hosted tool's name in every format. */
export const HOSTED_TOOL = "web_search";
/** What `write_file` writes. */
export const NOTES_TEXT = "runner: vitest\nlinter: biome\n";
/** What the model answers once `write_file` ran. */
export const WROTE = "Wrote the notes.";

/**
 * The loop's stdin, one turn a line: turn 2 ends with the `write_file` call
 * unanswered, and turn 3 ("yes") begins with its result.
 */
export const APPROVAL_LINES = [QUESTIONS[0], SEARCH, WRITE, "yes", QUESTIONS[1], QUESTIONS[2]].map(
  String,
);

/** The model calls of the script: two for each question that reads a file, one for the others. */
export const APPROVAL_CALLS = 9;

/** The answer to the question on line `turn`. */
function answerOf(question: string): string {
  return answerText(APPROVAL_LINES.indexOf(question));
}

/** What a stub issued and what it refused. */
export interface StubLog {
  /** Every item or block the stub put in a reply, in order. */
  readonly issued: Json[];
  /** The rules each refused request broke (none when every request was valid). */
  readonly violations: string[][];
}

/** The step the script takes next, from the question being answered and whether a tool result came last. */
type Step = "read" | "search" | "write" | "answer";

function stepOf(question: string, afterResult: boolean): Step {
  if (afterResult) return "answer";
  if (question === SEARCH) return "search";
  return question === WRITE ? "write" : "read";
}

/** The arguments of the script's tool calls; `notes` is where `write_file` writes. */
function callArgs(step: "read" | "write", notes: string): Json {
  return step === "read" ? { path: "package.json" } : { path: notes, text: NOTES_TEXT };
}

/** Checks a request with `check`, answering 400 (`error`) when it breaks a rule. */
function validated(
  log: StubLog,
  path: string,
  check: (body: Json) => string[],
  answer: (body: Json, n: number) => ReturnType<StubHandler>,
  error: (message: string) => Json,
): StubHandler {
  let n = 0;
  return (request: StubRequest) => {
    if (request.method !== "POST" || request.path !== path) {
      return { status: 404, json: error(`no route ${request.path}`) };
    }
    const body = request.body as Json;
    const violations = check(body);
    if (violations.length > 0) {
      log.violations.push(violations);
      return { status: 400, json: error(violations.join("; ")) };
    }
    n += 1;
    return answer(body, n);
  };
}

const openaiError = (message: string) => ({ error: { message, type: "invalid_request_error" } });

/** Every id among `items` that the stub did not issue, or issued for an item of another type. */
function unknownIds(items: readonly Json[], issued: readonly Json[]): string[] {
  const byId = new Map(issued.map((item) => [item.id, item]));
  return items.flatMap((item) => {
    if (item.id === undefined) return [];
    const own = byId.get(item.id);
    if (own === undefined || (item.type !== undefined && own.type !== item.type))
      return [`${String(item.id)}: an id the model never issued`];
    return [];
  });
}

/**
 * The Chat Completions model of the script. Chat has no hosted tool items:
 * its built-in web search answers with `url_citation` annotations on the
 * assistant message, which is what the search question gets.
 */
export function chatApprovalModel(log: StubLog, notes: string): StubHandler {
  return validated(
    log,
    "/v1/chat/completions",
    (body) => {
      const messages = body.messages as Json[];
      const violations = [
        ...openaiChatMessageErrors(messages),
        ...chatPairViolations(messages, { complete: true }),
      ];
      if (
        messages.filter((m) => m.role === "system").length !== 1 ||
        messages[0]?.role !== "system"
      )
        violations.push("one system message, first");
      const ids = messages.flatMap((m) => ((m.tool_calls ?? []) as Json[]).map((call) => call.id));
      const issuedIds = new Set(log.issued.map((call) => call.id));
      for (const id of ids) if (!issuedIds.has(id)) violations.push(`${String(id)}: never issued`);
      return violations;
    },
    (body, n) => {
      const messages = body.messages as Json[];
      const question = String(messages.findLast((m) => m.role === "user")?.content);
      const step = stepOf(question, messages.at(-1)?.role === "tool");
      if (step === "read" || step === "write") {
        const call = {
          id: `call_${randomBytes(12).toString("base64url")}`,
          type: "function",
          function: {
            name: step === "read" ? TOOL : APPROVED_TOOL,
            arguments: JSON.stringify(callArgs(step, notes)),
          },
        };
        log.issued.push(call);
        const message = { role: "assistant", content: null, refusal: null, annotations: [] };
        return chatCompletionReply(n, { ...message, tool_calls: [call] });
      }
      const text = step === "answer" && question === WRITE ? WROTE : answerOf(question);
      const annotations =
        step === "search"
          ? [
              {
                type: "url_citation",
                url_citation: {
                  start_index: 0,
                  end_index: text.length,
                  url: SOURCE,
                  title: "Vitest",
                },
              },
            ]
          : [];
      const message = { role: "assistant", content: text, refusal: null, annotations };
      log.issued.push(message);
      return chatCompletionReply(n, message);
    },
    openaiError,
  );
}

/** The page the hosted searches cite. */
export const SOURCE = "https://vitest.dev/blog/";

/** A text's content: a string as it is, text blocks or parts joined. */
function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = (content as Json[]).filter((p) => p.type === "text" || p.type === "input_text");
  return texts.length > 0 ? texts.map((p) => String(p.text)).join("\n") : undefined;
}

/**
 * The Messages model of the script, with extended thinking: a signed
 * thinking block first in every reply; the search question gets a
 * `server_tool_use` and its `web_search_tool_result` beside the answer.
 */
export function anthropicApprovalModel(log: StubLog, notes: string): StubHandler {
  const issuedBlock = (block: Json) =>
    log.issued.some((own) => JSON.stringify(own) === JSON.stringify(block));
  return validated(
    log,
    "/v1/messages",
    (body) => {
      const messages = body.messages as { role: string; content: string | Json[] }[];
      const violations = anthropicRuleViolations(
        messages as Parameters<typeof anthropicRuleViolations>[0],
      );
      const last = messages.at(-1);
      if (last?.role !== "user") violations.push("the last message is not the user's");
      const blocks = messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
      // The API checks signatures and hosted payloads: only what the model issued comes back.
      for (const block of blocks) {
        const own = ["thinking", "server_tool_use", "web_search_tool_result"].includes(
          String(block.type),
        );
        if (own && !issuedBlock(block)) violations.push(`a ${block.type} block never issued`);
      }
      // With thinking on, the message whose tool calls the request answers starts with its thinking.
      const before = messages.at(-2);
      if (typeof last?.content !== "string" && typeof before?.content !== "string") {
        if (before?.content[0]?.type !== "thinking")
          violations.push("the assistant message before the tool results has no thinking first");
      }
      return violations;
    },
    (body, n) => {
      const messages = body.messages as { role: string; content: string | Json[] }[];
      const question = String(
        messages.findLast((m) => m.role === "user" && typeof m.content === "string")?.content,
      );
      const last = messages.at(-1)?.content;
      const step = stepOf(question, typeof last !== "string");
      const thinking = {
        type: "thinking",
        thinking: `${question} (${step})`,
        signature: randomBytes(96).toString("base64"),
      };
      const content: Json[] = [thinking];
      if (step === "read" || step === "write") {
        content.push({
          type: "tool_use",
          id: `toolu_${randomBytes(12).toString("base64url")}`,
          name: step === "read" ? TOOL : APPROVED_TOOL,
          input: callArgs(step, notes),
          caller: { type: "direct" },
        });
      } else {
        if (step === "search") {
          const id = `srvtoolu_${randomBytes(12).toString("base64url")}`;
          content.push(
            { type: "server_tool_use", id, name: HOSTED_TOOL, input: { query: "vitest release" } },
            {
              type: "web_search_tool_result",
              tool_use_id: id,
              content: [
                {
                  type: "web_search_result",
                  url: SOURCE,
                  title: "Vitest blog",
                  encrypted_content: randomBytes(48).toString("base64"),
                  page_age: null,
                },
              ],
            },
          );
        }
        const text = question === WRITE ? WROTE : answerOf(question);
        content.push({ type: "text", text, citations: null });
      }
      log.issued.push(...content);
      return anthropicMessageReply(n, content as { type: string }[]);
    },
    (message) => ({ type: "error", error: { type: "invalid_request_error", message } }),
  );
}

/**
 * The Responses model of the script, for the `openai` client's loop and the
 * AI SDK's: a reasoning item (with `encrypted_content` when `include` asks)
 * first in every reply; the search question gets a `web_search_call` item
 * before the answer. `schemaChecked` picks the items held against OpenAI's
 * schema (agent-loops-more.test.ts says why @ai-sdk/openai's id-less
 * assistant messages are left out).
 */
export function responsesApprovalModel(
  log: StubLog,
  notes: string,
  schemaChecked: (input: Json[]) => Json[] = (input) => input,
): StubHandler {
  const id = (prefix: string) => `${prefix}_${randomBytes(24).toString("hex")}`;
  const isUser = (item: Json | undefined) =>
    item?.role === "user" && (item.type ?? "message") === "message";
  /** The reasoning item each issued item came with. */
  const reasoningOf = new Map<unknown, unknown>();
  return validated(
    log,
    "/v1/responses",
    (body) => {
      const input = body.input as Json[];
      const violations = [
        ...openaiResponsesInputErrors(schemaChecked(input)),
        ...responsesPairViolations(input, { complete: true }),
        ...unknownIds(input, log.issued),
      ];
      const ids = input.flatMap((item) => (item.id === undefined ? [] : [item.id]));
      if (new Set(ids).size !== ids.length) violations.push("an item id twice");
      // The API refuses an item with its id without the reasoning item that produced it.
      for (const item of input) {
        const reasoning = reasoningOf.get(item.id);
        if (reasoning !== undefined && !ids.includes(reasoning))
          violations.push(`${String(item.id)} without its reasoning item ${String(reasoning)}`);
      }
      for (const item of input) {
        if (item.type !== "reasoning") continue;
        const own = log.issued.find((issued) => issued.id === item.id);
        if (own?.encrypted_content !== item.encrypted_content)
          violations.push(`${String(item.id)}: encrypted_content not as issued`);
      }
      return violations;
    },
    (body, n) => {
      const input = body.input as Json[];
      const question = String(textOf(input.findLast(isUser)?.content));
      const step = stepOf(question, input.at(-1)?.type === "function_call_output");
      const include = (body.include ?? []) as string[];
      const reasoning = {
        id: id("rs"),
        type: "reasoning",
        summary: [{ type: "summary_text", text: `${question} (${step})` }],
        ...(include.includes("reasoning.encrypted_content")
          ? { encrypted_content: randomBytes(120).toString("base64") }
          : {}),
      };
      const output: Json[] = [reasoning];
      if (step === "read" || step === "write") {
        output.push({
          id: id("fc"),
          type: "function_call",
          status: "completed",
          arguments: JSON.stringify(callArgs(step, notes)),
          call_id: `call_${randomBytes(12).toString("base64url")}`,
          name: step === "read" ? TOOL : APPROVED_TOOL,
        });
      } else {
        if (step === "search") {
          output.push({
            id: id("ws"),
            type: "web_search_call",
            status: "completed",
            action: {
              type: "search",
              query: "vitest release",
              sources: [{ type: "url", url: SOURCE }],
            },
          });
        }
        const text = question === WRITE ? WROTE : answerOf(question);
        output.push({
          id: id("msg"),
          type: "message",
          status: "completed",
          content: [{ type: "output_text", annotations: [], logprobs: [], text }],
          role: "assistant",
        });
      }
      for (const item of output.slice(1)) reasoningOf.set(item.id, reasoning.id);
      log.issued.push(...output);
      return responsesReply(body, output, n);
    },
    openaiError,
  );
}
