/**
 * docs/integrate.md's four agent loops, run as written once more (issue 27),
 * now through a tool approval that spans two turns and a hosted tool: the
 * model answers one question with a hosted web search (Anthropic
 * `server_tool_use` + `web_search_tool_result`, a Responses
 * `web_search_call`, the AI SDK's provider-executed `web_search`; Chat
 * Completions has no hosted tool item, so its search answer carries
 * `url_citation` annotations), and another with a `write_file` call the loop
 * leaves unanswered until the user's next line says yes: turn 2 ends with
 * the call, turn 3 begins with its result. The stub models
 * (test/helpers/approval-models.ts) refuse any request the provider would
 * (schema, pairing with nothing pending, alternation, ids, signatures,
 * hosted items as issued), so a loop that completes got only valid views;
 * the test checks that it completed, that a band covered both the approval
 * pair and the hosted tool before the model's last calls (compacted as
 * docs/architecture.md §15 writes them: the result `[compacted] write_file:
 * success`, the hosted pair as `[hosted tool call …]` / `[hosted tool result
 * …]` text), and that before that band the hosted items came back as issued.
 * The four snippets run at once, each in its own child process.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentLoopRun,
  type AgentLoopRuntime,
  bandedThrough,
  runAgentLoop,
  startAgentLoopRuntime,
} from "../helpers/agent-loops.ts";
import {
  APPROVAL_CALLS,
  APPROVAL_LINES,
  APPROVED_TOOL,
  anthropicApprovalModel,
  chatApprovalModel,
  HOSTED_TOOL,
  NOTES_TEXT,
  responsesApprovalModel,
  SOURCE,
  type StubLog,
} from "../helpers/approval-models.ts";
import type { StubHandler } from "../helpers/model-stub.ts";

type Json = Record<string, unknown>;

let runtime: AgentLoopRuntime;
let notesDir: string;

beforeAll(async () => {
  runtime = await startAgentLoopRuntime(["gpt-4.1", "claude-sonnet-4-5", "gpt-5"]);
  notesDir = await mkdtemp(join(tmpdir(), "autocompact-notes-"));
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  if (notesDir) await rm(notesDir, { recursive: true, force: true });
});

/** The turn of each model call: two for a question that reads a file, one for the others. */
const TURN_OF_CALL = [0, 0, 1, 2, 3, 4, 4, 5, 5];
/** The turns of the search, of the approval's call and of its result. */
const SEARCHED = 1;
const ASKED = 2;
const APPROVED = 3;

/** Every string in a request body. */
function strings(node: unknown): string[] {
  if (typeof node === "string") return [node];
  if (Array.isArray(node)) return node.flatMap(strings);
  if (typeof node === "object" && node !== null) return Object.values(node).flatMap(strings);
  return [];
}

/** Runs `snippet` on the approval script against `stub`: the run, and the file `write_file` wrote to. */
async function runApproval(
  snippet: string,
  format: string,
  model: string,
  stub: (log: StubLog, notes: string) => StubHandler,
  env: (url: string) => Record<string, string>,
) {
  const log: StubLog = { issued: [], violations: [] };
  const notes = join(notesDir, `${format}.txt`);
  const run = await runAgentLoop(runtime, {
    snippet,
    format,
    model,
    stub: stub(log, notes),
    env,
    lines: APPROVAL_LINES,
    calls: APPROVAL_CALLS,
  });
  // Every request was one the provider takes: the stub refused none.
  expect(log.violations).toEqual([]);
  // The user's "yes" ran the call: its result began turn 3.
  expect(await readFile(notes, "utf8")).toBe(NOTES_TEXT);
  await expectApprovalSpansTurns(run);
  return { ...run, log };
}

/** The stored turns: turn 2 ends with the `write_file` call, turn 3 begins with its result. */
async function expectApprovalSpansTurns(run: AgentLoopRun): Promise<void> {
  const { events } = await run.client.events(run.id);
  const turns: Json[][] = [];
  for (const event of events as unknown as Json[]) {
    if (event.type === "turn_start") turns.push([]);
    else if (event.type !== "compaction") turns.at(-1)?.push(event);
  }
  expect(turns).toHaveLength(APPROVAL_LINES.length);
  const call = turns[ASKED]?.at(-1);
  expect(call).toMatchObject({ type: "tool_call_request", name: APPROVED_TOOL });
  // The AI SDK's turn begins with the user's answer, which rides on the call it answers.
  const result = turns[APPROVED]?.find((event) => event.type === "tool_call_response");
  expect(turns[APPROVED]?.indexOf(result as Json)).toBe(0);
  expect(result).toMatchObject({ id: call?.id });
}

/**
 * The calls made after a band covered the search and the approval: at least
 * one, the last of the loop; in each the approved call's result is
 * compacted, and `hostedText` (when given) is somewhere in the body. The
 * calls before such a band pass `intact`.
 */
function expectCompacted(
  run: AgentLoopRun,
  hosted: { readonly compacted?: string; readonly intact: (body: Json) => void },
): void {
  const covered = run.requests.filter((_, n) => {
    const banded = bandedThrough(run.compactions, (TURN_OF_CALL[n] ?? 0) - 1);
    return banded.includes(SEARCHED) && banded.includes(ASKED) && banded.includes(APPROVED);
  });
  expect(covered.length).toBeGreaterThan(0);
  expect(covered.at(-1)).toBe(run.requests.at(-1));
  for (const body of covered) {
    expect(strings(body)).toContain(`[compacted] ${APPROVED_TOOL}: success`);
    if (hosted.compacted) expect(strings(body).join("\n")).toContain(hosted.compacted);
  }
  run.requests.forEach((body, n) => {
    const turn = TURN_OF_CALL[n] ?? 0;
    if (turn > SEARCHED && !bandedThrough(run.compactions, turn - 1).includes(SEARCHED))
      hosted.intact(body);
  });
}

/** How docs/architecture.md §15 writes a stripped hosted result. */
function compactedHosted(id: unknown): string {
  return `[hosted tool result ${String(id)}] [compacted] ${HOSTED_TOOL}: success`;
}

const openaiEnv = (url: string) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: "sk-stub" });

describe.concurrent("docs/integrate.md's agent loops through a tool approval across two turns and a hosted tool", () => {
  it("openai-chat: the pending call's result begins the next turn; the search answer's annotations come back", async () => {
    const run = await runApproval(
      "openai-chat-loop",
      "openai-chat",
      "gpt-4.1",
      chatApprovalModel,
      openaiEnv,
    );
    const cited = run.log.issued.find(
      (item) => Array.isArray(item.annotations) && item.annotations.length > 0,
    );
    expect(cited).toMatchObject({ annotations: [{ url_citation: { url: SOURCE } }] });
    expectCompacted(run, {
      intact: (body) => {
        const messages = body.messages as Json[];
        expect(messages.find((m) => m.content === cited?.content)?.annotations).toEqual(
          cited?.annotations,
        );
      },
    });
  }, 90_000);

  it("anthropic-messages: server tool blocks as issued until a band strips them to text", async () => {
    const run = await runApproval(
      "anthropic-messages-loop",
      "anthropic-messages",
      "claude-sonnet-4-5",
      anthropicApprovalModel,
      (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-ant-stub" }),
    );
    const hosted = run.log.issued.filter((block) =>
      ["server_tool_use", "web_search_tool_result"].includes(String(block.type)),
    );
    expect(hosted).toHaveLength(2);
    expectCompacted(run, {
      compacted: compactedHosted(hosted[0]?.id),
      intact: (body) => {
        const blocks = (body.messages as { content: string | Json[] }[]).flatMap((m) =>
          typeof m.content === "string" ? [] : m.content,
        );
        expect(blocks.filter((b) => hosted.some((h) => h.type === b.type))).toEqual(hosted);
      },
    });
  }, 90_000);

  it("openai-responses: the web_search_call item as issued until a band strips it to text", async () => {
    const run = await runApproval(
      "openai-responses-loop",
      "openai-responses",
      "gpt-5",
      responsesApprovalModel,
      openaiEnv,
    );
    const searches = run.log.issued.filter((item) => item.type === "web_search_call");
    expect(searches).toHaveLength(1);
    expectCompacted(run, {
      compacted: compactedHosted(searches[0]?.id),
      intact: (body) => {
        const input = body.input as Json[];
        expect(input.filter((item) => item.type === "web_search_call")).toEqual(searches);
      },
    });
  }, 90_000);

  it("ai-sdk: a needsApproval tool answered by the next turn; the provider-executed search resent as its item", async () => {
    // @ai-sdk/openai sends id-less assistant text as output_text parts (agent-loops-more.test.ts).
    const schemaChecked = (input: Json[]) =>
      input.filter((item) => item.role !== "assistant" || item.id !== undefined);
    const run = await runApproval(
      "ai-sdk-loop",
      "ai-sdk",
      "gpt-5",
      (log, notes) => responsesApprovalModel(log, notes, schemaChecked),
      openaiEnv,
    );
    const searches = run.log.issued.filter((item) => item.type === "web_search_call");
    expect(searches).toHaveLength(1);
    expectCompacted(run, {
      compacted: compactedHosted(searches[0]?.id),
      intact: (body) => {
        // Stateless, @ai-sdk/openai rebuilds the item from the tool result it kept.
        const input = body.input as Json[];
        expect(input.filter((item) => item.type === "web_search_call")).toEqual(searches);
      },
    });
  }, 90_000);
});
