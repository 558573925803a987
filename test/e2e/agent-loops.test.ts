/**
 * End to end with the official provider SDKs (issue 11): the README's agent
 * loops ("Use it from an agent loop"), extracted by their `<!-- snippet: … -->`
 * markers, type-checked and run as written under tsx in a child process. Each
 * talks to the local runtime (DynamoDB Local, HTTP, in-process queue,
 * compactor) through `autocompact/client` and to a stub model server that
 * answers like the provider's API: for every user question a tool call
 * (`read_file` of package.json, a large result) and then a final text, the
 * Anthropic stub with a signed thinking block in each reply. The stubs
 * record every request body, so the test sees exactly what the model would
 * have received: automatic compaction fires, later calls carry the compacted
 * turns in the provider's terms (ARCHITECTURE §15) and are valid requests for
 * the provider, and recent turns come back as posted, signatures included.
 * The loops read the projection with `afterTurn` (issue 12), so each call
 * compacts exactly the turns of the bands fired through the previous turn:
 * a band fired after turn k is in turn k + 1's requests.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AutocompactClient, type ListedCompaction } from "../../client/index.ts";
import { type LocalService, startLocalService } from "../../functions/local/runtime.ts";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import {
  type ModelStub,
  type StubReply,
  type StubRequest,
  startModelStub,
} from "../helpers/model-stub.ts";
import { openaiChatMessageErrors } from "../helpers/openai-schema.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const KEY = "agent-loops-key";
/** The window the runtime's catalog gives the snippets' models, so a few turns fill it. */
const WINDOW = 3_000;
const AUTO = {
  enabled: true,
  trigger_ratio: 0.5,
  min_turns: 2,
  rule: { keep_first: 1, keep_last: 1, tool_calls: "strip", reasoning: "strip" },
} as const;
/** The user's questions, one a line on the snippet's stdin: one turn each. */
const QUESTIONS = [
  "Which test runner does this project use?",
  "Which linter?",
  "Which Node version does it need?",
  "Which web framework serves the API?",
  "Which AWS SDK clients does it use?",
  "What does npm start run?",
];
const TOOL = "read_file";
const COMPACTED_RESULT = `[compacted] ${TOOL}: success`;

let service: LocalService;
let dataDir: string;
/** Inside the repository, so the snippets' `autocompact/client` resolves (package self-reference). */
let snippetDir: string;
let packageJson: string;

beforeAll(async () => {
  packageJson = await readFile(join(ROOT, "package.json"), "utf8");
  dataDir = await mkdtemp(join(tmpdir(), "autocompact-agent-loops-"));
  snippetDir = await mkdtemp(join(ROOT, ".agent-loops-"));
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  service = await startLocalService({
    port: 0,
    host: "127.0.0.1",
    dataDir,
    inMemory: true,
    devKey: KEY,
    logLevel: "ERROR",
    // The snippets post the model ids a platform would; here those models have a small window.
    catalog: { "gpt-4.1": WINDOW, "claude-sonnet-4-5": WINDOW },
  });
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await service?.stop();
  await rm(dataDir, { recursive: true, force: true });
  if (snippetDir) await rm(snippetDir, { recursive: true, force: true });
});

/** The body of the ```ts block right after `<!-- snippet: name -->` in README.md. */
async function readmeSnippet(name: string): Promise<string> {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const marker = `<!-- snippet: ${name} -->\n\`\`\`ts\n`;
  const start = readme.indexOf(marker);
  expect(start, `README.md has the snippet ${name}`).toBeGreaterThanOrEqual(0);
  const body = readme.slice(start + marker.length);
  const end = body.indexOf("\n```\n");
  expect(end, `the snippet ${name} ends`).toBeGreaterThan(0);
  return `${body.slice(0, end)}\n`;
}

/** The conversation id, format and model a snippet declares (`const id = "…"`, …). */
function declared(source: string): { id: string; format: string; model: string } {
  const value = (name: string) => {
    const match = new RegExp(`^const ${name} = "([^"]+)";`, "m").exec(source);
    if (!match?.[1]) throw new Error(`the snippet declares no ${name}`);
    return match[1];
  };
  return { id: value("id"), format: value("format"), model: value("model") };
}

async function writeSnippet(name: string): Promise<{ file: string; source: string }> {
  const source = await readmeSnippet(name);
  const file = join(snippetDir, `${name}.ts`);
  await writeFile(file, source);
  return { file, source };
}

/** Runs a snippet as a platform would: `npx tsx`, the questions on stdin, the SDKs' own env. */
async function runSnippet(file: string, env: Record<string, string>): Promise<string> {
  const pending = run("npx", ["tsx", file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: 45_000,
  });
  pending.child.stdin?.end(`${QUESTIONS.join("\n")}\n`);
  try {
    return (await pending).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`the snippet failed: ${String(error)}\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
}

function client(): AutocompactClient {
  return new AutocompactClient({ url: service.url, key: KEY });
}

/**
 * The conversation's end state, once the last turn's evaluation has decided
 * (the loop reads no view after it): its bands, each fired after one turn,
 * since the loop posts a turn only after the view as evaluated after the
 * previous one (no evaluation of it is stale).
 */
async function settle(conversation: string) {
  const afterTurn = QUESTIONS.length - 1;
  const summary = await client().conversation(conversation, { afterTurn });
  expect(summary).toMatchObject({
    turn_count: QUESTIONS.length,
    evaluated_through: afterTurn,
    decided_through: afterTurn,
  });
  const { compactions } = await client().compactions(conversation);
  const auto = compactions.filter((c) => c.source === "auto");
  expect(auto.length).toBeGreaterThanOrEqual(1);
  // A band fired after some turn before the last, so a call shows it.
  expect(auto.some((c) => (c.trigger?.turn ?? afterTurn) < afterTurn)).toBe(true);
  return compactions;
}

/**
 * The turns that the automatic bands fired after turns up to `turn` cover,
 * in order: those the view read with `afterTurn: turn` compacts.
 */
function bandedThrough(compactions: readonly ListedCompaction[], turn: number): number[] {
  const turns = new Set<number>();
  for (const band of compactions) {
    if (band.source !== "auto" || band.trigger === undefined || band.trigger.turn > turn) continue;
    for (let t = band.from_turn; t <= band.to_turn; t++) turns.add(t);
  }
  return [...turns].sort((a, b) => a - b);
}

/** `turns` without repeats, in order. */
function distinctSorted(turns: readonly number[]): number[] {
  return [...new Set(turns)].sort((a, b) => a - b);
}

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
          content: `Answer ${turn}: see package.json.`,
          refusal: null,
          annotations: [],
        };
    return {
      json: {
        id: `chatcmpl-${n}`,
        object: "chat.completion",
        created: 1_764_576_000 + n,
        model: "gpt-4.1-2025-04-14",
        choices: [
          { index: 0, message, logprobs: null, finish_reason: asking ? "tool_calls" : "stop" },
        ],
        usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 },
        service_tier: "default",
        system_fingerprint: "fp_stub",
      },
    };
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
      const text = `Answer ${turn}: see package.json.`;
      issued.push({ turn, block: thinking, with: { text } });
      content = [thinking, { type: "text", text, citations: null }];
    }
    return {
      json: {
        id: `msg_stub_${n}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content,
        stop_reason: asking ? "tool_use" : "end_turn",
        stop_sequence: null,
        usage: {
          input_tokens: 1000,
          output_tokens: 40,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    };
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

describe("the README's agent loops against the local runtime and stub models", () => {
  let openaiStub: ModelStub | undefined;
  let anthropicStub: ModelStub | undefined;

  afterAll(async () => {
    await openaiStub?.close();
    await anthropicStub?.close();
  });

  it("type-check as written (strict, with the SDKs' and the client's types)", async () => {
    const files = await Promise.all(
      ["openai-chat-loop", "anthropic-messages-loop"].map(
        async (name) => (await writeSnippet(name)).file,
      ),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const options = [
      "--noEmit",
      "--strict",
      "--noUncheckedIndexedAccess",
      "--target",
      "ES2022",
      "--module",
      "NodeNext",
      "--moduleResolution",
      "NodeNext",
      "--lib",
      "ES2023",
      "--types",
      "node",
      "--allowImportingTsExtensions",
      "--skipLibCheck",
    ];
    const result = await run(process.execPath, [tsc, ...options, ...files], { cwd: ROOT }).catch(
      (error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout}` }),
    );
    expect(result.stdout).toBe("");
  }, 60_000);

  it("openai-chat: the official openai client's loop gets the compacted view", async () => {
    const issued: IssuedCall[] = [];
    openaiStub = await startModelStub(openaiModel(issued));
    const { file, source } = await writeSnippet("openai-chat-loop");
    const { id, format, model } = declared(source);
    expect([format, model]).toEqual(["openai-chat", "gpt-4.1"]);
    await client().putConfig(id, { conversation: { compaction: { auto: AUTO } } });

    const stdout = await runSnippet(file, {
      AUTOCOMPACT_URL: service.url,
      AUTOCOMPACT_KEY: KEY,
      OPENAI_BASE_URL: `${openaiStub.url}/v1`,
      OPENAI_API_KEY: "sk-stub",
    });
    expect(stdout).toContain(`Answer ${QUESTIONS.length - 1}: see package.json.`);
    const compactions = await settle(id);

    // One tool call and one answer per question, each request a valid Chat Completions body.
    const requests = openaiStub.requests.map(bodyOf);
    expect(requests).toHaveLength(2 * QUESTIONS.length);
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
      expect(
        compactions.some((c) => c.source === "auto" && c.from_turn <= turn && turn <= c.to_turn),
      ).toBe(true);
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
    const raw = await client().events<ChatMessage>(id, { format: "openai-chat" });
    expect(raw.messages.filter((m) => m.role === "system")).toEqual([]);
    expect(raw.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(
      QUESTIONS.map(() => packageJson),
    );
  }, 60_000);

  it("anthropic-messages: the official @anthropic-ai/sdk loop gets the compacted view, signatures kept", async () => {
    const issued: IssuedThinking[] = [];
    anthropicStub = await startModelStub(anthropicModel(issued));
    const { file, source } = await writeSnippet("anthropic-messages-loop");
    const { id, format, model } = declared(source);
    expect([format, model]).toEqual(["anthropic-messages", "claude-sonnet-4-5"]);
    await client().putConfig(id, { conversation: { compaction: { auto: AUTO } } });

    const stdout = await runSnippet(file, {
      AUTOCOMPACT_URL: service.url,
      AUTOCOMPACT_KEY: KEY,
      ANTHROPIC_BASE_URL: anthropicStub.url,
      ANTHROPIC_API_KEY: "sk-ant-stub",
    });
    expect(stdout).toContain(`Answer ${QUESTIONS.length - 1}: see package.json.`);
    const compactions = await settle(id);

    const requests = anthropicStub.requests.map(bodyOf);
    expect(requests).toHaveLength(2 * QUESTIONS.length);
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
      expect(
        compactions.some((c) => c.source === "auto" && c.from_turn <= turn && turn <= c.to_turn),
      ).toBe(true);
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
    const raw = await client().events<AnthropicMessage>(id, { format: "anthropic-messages" });
    const rawBlocks = raw.messages.flatMap(blocksOf);
    expect(rawBlocks.filter((b) => b.type === "tool_result").map(resultText)).toEqual(
      QUESTIONS.map(() => packageJson),
    );
    expect(rawBlocks.filter((b) => b.type === "thinking")).toEqual(issued.map((t) => t.block));
  }, 60_000);
});
