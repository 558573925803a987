/**
 * End to end with the official provider SDKs (issue 11): docs/integrate.md's agent
 * loops ("Agent loops"), extracted by their `<!-- snippet: … -->`
 * markers, type-checked and run as written in a child process. Each
 * talks to the local runtime (DynamoDB Local, HTTP, in-process queue,
 * compactor) through `autocompact/client` and to a stub model server that
 * answers like the provider's API: for every user question a tool call
 * (`read_file` of package.json, a large result) and then a final text, the
 * Anthropic stub with a signed thinking block in each reply. The stubs
 * record every request body, so the test sees exactly what the model would
 * have received: automatic compaction fires, later calls carry the compacted
 * turns in the provider's terms (docs/architecture.md §15) and are valid requests for
 * the provider, and recent turns come back as posted, signatures included.
 * The loops read the projection with `afterTurn` (issue 12), so each call
 * compacts exactly the turns of the bands fired through the previous turn:
 * a band fired after turn k is in turn k + 1's requests. The harness is
 * test/helpers/agent-loops.ts; the Responses API and AI SDK loops are in
 * agent-loops-more.test.ts.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentLoopRuntime,
  answerText,
  bandedThrough,
  COMPACTED_RESULT,
  distinctSorted,
  inAutoBand,
  QUESTIONS,
  runAgentLoop,
  startAgentLoopRuntime,
  TOOL,
} from "../helpers/agent-loops.ts";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import {
  anthropicMessageReply,
  chatCompletionReply,
  type StubReply,
  type StubRequest,
} from "../helpers/model-stub.ts";
import { openaiChatMessageErrors } from "../helpers/openai-schema.ts";

let runtime: AgentLoopRuntime;
let packageJson: string;

beforeAll(async () => {
  runtime = await startAgentLoopRuntime(["gpt-4.1", "claude-sonnet-4-5"]);
  packageJson = runtime.packageJson;
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

type Json = Record<string, unknown>;

function bodyOf(request: StubRequest): Json {
  return request.body as Json;
}

// ---------------------------------------------------------------------------
// OpenAI Chat Completions

interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
  readonly tool_calls?: {
    id: string;
    type: string;
    function: { name: string; arguments: string };
  }[];
}

/** A tool call the stub issued, for the turn it answered. */
interface IssuedCall {
  readonly turn: number;
  readonly id: string;
}

/** A Chat Completions stub: a `read_file` call for each new question, then the answer. */
function openaiModel(issued: IssuedCall[]): (request: StubRequest) => StubReply {
  let n = 0;
  return (request) => {
    if (request.method !== "POST" || request.path !== "/v1/chat/completions") {
      return { status: 404, json: { error: { message: `no route ${request.path}` } } };
    }
    n += 1;
    const messages = bodyOf(request).messages as ChatMessage[];
    const turn = messages.filter((m) => m.role === "user").length - 1;
    const asking = messages.at(-1)?.role === "user";
    const id = `call_${randomBytes(12).toString("base64url")}`;
    if (asking) issued.push({ turn, id });
    const message = asking
      ? {
          role: "assistant",
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [
            {
              id,
              type: "function",
              function: { name: TOOL, arguments: JSON.stringify({ path: "package.json" }) },
            },
          ],
        }
      : {
          role: "assistant",
          content: answerText(turn),
          refusal: null,
          annotations: [],
        };
    return chatCompletionReply(n, message);
  };
}

// ---------------------------------------------------------------------------
// Anthropic Messages

interface Block {
  readonly type: string;
  readonly [key: string]: unknown;
}

interface AnthropicMessage {
  readonly role: string;
  readonly content: string | Block[];
}

/** A thinking block the stub issued, for the turn it answered. */
interface IssuedThinking {
  readonly turn: number;
  readonly block: { type: "thinking"; thinking: string; signature: string };
  /** The id of the tool_use beside it, or the text of the answer beside it. */
  readonly with: { tool_use: string } | { text: string };
}

/** A Messages stub: thinking + a `read_file` tool_use for each new question, then thinking + the answer. */
function anthropicModel(issued: IssuedThinking[]): (request: StubRequest) => StubReply {
  let n = 0;
  return (request) => {
    if (request.method !== "POST" || request.path !== "/v1/messages") {
      return {
        status: 404,
        json: { type: "error", error: { type: "not_found_error", message: request.path } },
      };
    }
    n += 1;
    const messages = bodyOf(request).messages as AnthropicMessage[];
    const turn =
      messages.filter((m) => m.role === "user" && typeof m.content === "string").length - 1;
    const last = messages.at(-1);
    const asking = last?.role === "user" && typeof last.content === "string";
    const thinking = {
      type: "thinking" as const,
      thinking: `Turn ${turn}, step ${asking ? 1 : 2}: ${asking ? "read package.json" : "answer from it"}.`,
      signature: randomBytes(96).toString("base64"),
    };
    let content: Block[];
    if (asking) {
      const id = `toolu_${randomBytes(12).toString("base64url")}`;
      issued.push({ turn, block: thinking, with: { tool_use: id } });
      content = [
        thinking,
        {
          type: "tool_use",
          id,
          name: TOOL,
          input: { path: "package.json" },
          caller: { type: "direct" },
        },
      ];
    } else {
      const text = answerText(turn);
      issued.push({ turn, block: thinking, with: { text } });
      content = [thinking, { type: "text", text, citations: null }];
    }
    return anthropicMessageReply(n, content);
  };
}

/** A tool result's text: its string content, or its text blocks joined. */
function resultText(block: Block): string {
  const content = block.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return (content as Block[]).map((part) => String(part.text)).join("\n");
  return "";
}

function blocksOf(message: AnthropicMessage): Block[] {
  return typeof message.content === "string" ? [] : message.content;
}

// ---------------------------------------------------------------------------

describe("docs/integrate.md's agent loops against the local runtime and stub models", () => {
  it("openai-chat: the official openai client's loop gets the compacted view", async () => {
    const issued: IssuedCall[] = [];
    // One tool call and one answer per question (runAgentLoop counts them).
    const { id, client, requests, compactions } = await runAgentLoop(runtime, {
      snippet: "openai-chat-loop",
      format: "openai-chat",
      model: "gpt-4.1",
      stub: openaiModel(issued),
      env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: "sk-stub" }),
    });

    // Each request a valid Chat Completions body.
    for (const body of requests) {
      const messages = body.messages as ChatMessage[];
      expect(body.model).toBe("gpt-4.1");
      expect(openaiChatMessageErrors(messages)).toEqual([]);
      // The system prompt goes with each call, once, first.
      expect(messages.filter((m) => m.role === "system")).toHaveLength(1);
      expect(messages[0]?.role).toBe("system");
    }

    // The model received compacted turns: a stripped result keeps its place, its call's arguments are "{}".
    const compacted = requests.flatMap((body) => {
      const messages = body.messages as ChatMessage[];
      return messages.flatMap((m) => {
        if (m.role !== "tool" || m.content !== COMPACTED_RESULT) return [];
        const call = messages
          .flatMap((a) => a.tool_calls ?? [])
          .find((c) => c.id === m.tool_call_id);
        return [{ id: m.tool_call_id, arguments: call?.function.arguments }];
      });
    });
    expect(compacted.length).toBeGreaterThan(0);
    for (const call of compacted) expect(call.arguments).toBe("{}");
    // Each compacted turn lies in an automatic band, and the first turn (keep_first) is never one.
    const compactedTurns = new Set(
      compacted.map((call) => issued.find((c) => c.id === call.id)?.turn ?? -1),
    );
    for (const turn of compactedTurns) {
      expect(turn).toBeGreaterThan(0);
      expect(inAutoBand(compactions, turn)).toBe(true);
    }
    // Each call of turn t compacts exactly what the bands fired through turn t - 1 cover:
    // the view it was built from was read with `afterTurn: t - 1`.
    for (const body of requests) {
      const messages = body.messages as ChatMessage[];
      const turn = messages.filter((m) => m.role === "user").length - 1;
      const compactedHere = messages
        .filter((m) => m.role === "tool" && m.content === COMPACTED_RESULT)
        .map((m) => issued.find((c) => c.id === m.tool_call_id)?.turn ?? -1);
      expect(distinctSorted(compactedHere), `the compacted turns in turn ${turn}'s calls`).toEqual(
        bandedThrough(compactions, turn - 1),
      );
    }

    // The first call of each turn: turn 0 (keep_first) and the previous turn (keep_last) as posted.
    const firstCalls = requests
      .map((body) => body.messages as ChatMessage[])
      .filter((messages) => messages.at(-1)?.role === "user");
    expect(firstCalls).toHaveLength(QUESTIONS.length);
    firstCalls.forEach((messages, turn) => {
      expect(messages.at(-1)?.content).toBe(QUESTIONS[turn]);
      const results = messages.filter((m) => m.role === "tool");
      expect(results).toHaveLength(turn);
      if (turn >= 1) expect(results[0]?.content).toBe(packageJson);
      if (turn >= 2) expect(results.at(-1)?.content).toBe(packageJson);
    });
    // Nothing was lost: the raw stream still has every result in full, and no system prompt.
    const raw = await client.events<ChatMessage>(id, { format: "openai-chat" });
    expect(raw.messages.filter((m) => m.role === "system")).toEqual([]);
    expect(raw.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(
      QUESTIONS.map(() => packageJson),
    );
  }, 60_000);

  it("anthropic-messages: the official @anthropic-ai/sdk loop gets the compacted view, signatures kept", async () => {
    const issued: IssuedThinking[] = [];
    const { id, client, requests, compactions } = await runAgentLoop(runtime, {
      snippet: "anthropic-messages-loop",
      format: "anthropic-messages",
      model: "claude-sonnet-4-5",
      stub: anthropicModel(issued),
      env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-ant-stub" }),
    });

    for (const body of requests) {
      expect(body.model).toBe("claude-sonnet-4-5");
      expect(typeof body.system).toBe("string");
      expect(anthropicRuleViolations(body.messages as AnthropicMessage[])).toEqual([]);
    }

    // Every thinking block the model received is one it issued, with the signature it issued.
    const signatures = new Map(issued.map(({ block }) => [block.thinking, block.signature]));
    for (const body of requests) {
      for (const message of body.messages as AnthropicMessage[]) {
        for (const block of blocksOf(message)) {
          if (block.type !== "thinking") continue;
          expect(signatures.get(String(block.thinking))).toBe(block.signature);
        }
      }
    }

    // The model received compacted turns: a stripped result keeps its place, its tool_use has input {}
    // and its assistant message no thinking.
    const compactedTurns = new Set<number>();
    for (const body of requests) {
      const messages = body.messages as AnthropicMessage[];
      messages.forEach((message, i) => {
        for (const block of blocksOf(message)) {
          if (block.type !== "tool_result" || resultText(block) !== COMPACTED_RESULT) continue;
          compactedTurns.add(
            issued.find((t) => "tool_use" in t.with && t.with.tool_use === block.tool_use_id)
              ?.turn ?? -1,
          );
          const call = messages[i - 1];
          const use = call && blocksOf(call).find((b) => b.id === block.tool_use_id);
          expect(use?.input).toEqual({});
          expect(blocksOf(call as AnthropicMessage).some((b) => b.type === "thinking")).toBe(false);
        }
      });
    }
    expect(compactedTurns.size).toBeGreaterThan(0);
    // Each compacted turn lies in an automatic band, and the first turn (keep_first) is never one.
    for (const turn of compactedTurns) {
      expect(turn).toBeGreaterThan(0);
      expect(inAutoBand(compactions, turn)).toBe(true);
    }
    // Each call of turn t compacts exactly what the bands fired through turn t - 1 cover:
    // the view it was built from was read with `afterTurn: t - 1`.
    for (const body of requests) {
      const messages = body.messages as AnthropicMessage[];
      const turn =
        messages.filter((m) => m.role === "user" && typeof m.content === "string").length - 1;
      const compactedHere = messages
        .flatMap(blocksOf)
        .filter((b) => b.type === "tool_result" && resultText(b) === COMPACTED_RESULT)
        .map(
          (b) =>
            issued.find((t) => "tool_use" in t.with && t.with.tool_use === b.tool_use_id)?.turn ??
            -1,
        );
      expect(distinctSorted(compactedHere), `the compacted turns in turn ${turn}'s calls`).toEqual(
        bandedThrough(compactions, turn - 1),
      );
    }

    // The first call of each turn carries turn 0 (keep_first) and the previous turn (keep_last)
    // as posted: full results, and each thinking block, signature included, where it was.
    const firstCalls = requests
      .map((body) => body.messages as AnthropicMessage[])
      .filter((messages) => typeof messages.at(-1)?.content === "string");
    expect(firstCalls).toHaveLength(QUESTIONS.length);
    firstCalls.forEach((messages, turn) => {
      expect(messages.at(-1)?.content).toBe(QUESTIONS[turn]);
      const kept = [...new Set([0, turn - 1])].filter((t) => t >= 0 && t < turn);
      for (const keptTurn of kept) {
        const thinking = issued.filter((t) => t.turn === keptTurn);
        expect(thinking).toHaveLength(2);
        for (const { block, with: beside } of thinking) {
          const holder = messages.find((m) =>
            blocksOf(m).some((b) =>
              "tool_use" in beside
                ? b.id === beside.tool_use
                : b.type === "text" && b.text === beside.text,
            ),
          );
          expect(
            holder,
            `turn ${keptTurn}'s assistant message in turn ${turn}'s call`,
          ).toBeDefined();
          expect(blocksOf(holder as AnthropicMessage)).toContainEqual(block);
          if ("tool_use" in beside) {
            const results = messages
              .flatMap(blocksOf)
              .filter((b) => b.tool_use_id === beside.tool_use);
            expect(results.map(resultText)).toEqual([packageJson]);
          }
        }
      }
    });
    // Nothing was lost: the raw stream still has every result in full, and every thinking block.
    const raw = await client.events<AnthropicMessage>(id, { format: "anthropic-messages" });
    const rawBlocks = raw.messages.flatMap(blocksOf);
    expect(rawBlocks.filter((b) => b.type === "tool_result").map(resultText)).toEqual(
      QUESTIONS.map(() => packageJson),
    );
    expect(rawBlocks.filter((b) => b.type === "thinking")).toEqual(issued.map((t) => t.block));
  }, 60_000);
});
