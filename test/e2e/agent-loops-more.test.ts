/**
 * End to end with the official SDKs, part 2 (issue 14): docs/integrate.md's agent
 * loops over the OpenAI Responses API, with the `openai` client
 * (`openai-responses-loop`, posting `input` items as `openai-responses`) and
 * with the `ai` package's `generateText` and `@ai-sdk/openai`
 * (`ai-sdk-loop`, posting `response.messages` as `ai-sdk`), run as
 * agent-loops.test.ts runs the first two (the harness is
 * test/helpers/agent-loops.ts). Both talk to the same Responses stub
 * (`responsesAgentModel`): a reasoning item with `encrypted_content` and a
 * `function_call` for each question, then reasoning and the answer. The
 * stub records every request, so the test sees what the model received:
 * valid `input` by OpenAI's published schema; the turns the bands fired
 * through the previous turn compacted in Responses terms (the result
 * `[compacted] read_file: success`, arguments `"{}"`, no reasoning and, the
 * turn's reasoning being stripped, no item ids: docs/architecture.md §15); the other
 * turns as the model issued them, encrypted reasoning and ids included. For
 * the AI SDK loop, what it read from autocompact passes the `ai` package's
 * own `modelMessageSchema`, and the raw stream keeps each part's
 * `providerOptions` (the provider's item ids and encrypted reasoning).
 */
import { modelMessageSchema } from "ai";
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
import { type IssuedOutput, responsesAgentModel } from "../helpers/model-stub.ts";
import { openaiResponsesInputErrors } from "../helpers/openai-schema.ts";

const MODEL = "gpt-5";
const ARGS = { path: "package.json" };

let runtime: AgentLoopRuntime;

beforeAll(async () => {
  runtime = await startAgentLoopRuntime([MODEL]);
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

type Item = Record<string, unknown>;

function isUserMessage(item: Item): boolean {
  return item.role === "user" && (item.type ?? "message") === "message";
}

/**
 * A request's `input` cut at its user messages: the items of turn k are
 * those from the k-th user message to the next (what comes before the first,
 * e.g. a developer message, is left out).
 */
function turnsOf(input: readonly Item[]): Item[][] {
  const turns: Item[][] = [];
  for (const item of input) {
    if (isUserMessage(item)) turns.push([item]);
    else turns.at(-1)?.push(item);
  }
  return turns;
}

/** Runs a snippet against a new Responses stub: what the stub issued and received. */
async function runLoop(snippet: string, format: string) {
  const issued: IssuedOutput[] = [];
  // Two requests a question (runAgentLoop counts them).
  const run = await runAgentLoop(runtime, {
    snippet,
    format,
    model: MODEL,
    stub: responsesAgentModel({ tool: TOOL, args: ARGS, answer: answerText, issued }),
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: "sk-stub" }),
  });
  // One function call and one answer per question, each with its reasoning, encrypted: the
  // loop asked for it (`include`, which @ai-sdk/openai adds for `store: false`).
  expect(issued.map((reply) => reply.turn)).toEqual(QUESTIONS.flatMap((_, turn) => [turn, turn]));
  for (const { output } of issued) expect(output[0]).toHaveProperty("encrypted_content");
  return { ...run, issued };
}

/** The items the stub issued for `turn`: its reasoning and call, then its reasoning and answer. */
function issuedFor(issued: readonly IssuedOutput[], turn: number) {
  const [first, second] = issued.filter((reply) => reply.turn === turn);
  const [reasoning, call] = first?.output ?? [];
  const [answerReasoning, message] = second?.output ?? [];
  if (!reasoning || !call || !answerReasoning || !message) throw new Error(`turn ${turn} missing`);
  return { reasoning, call, answerReasoning, message };
}

/**
 * What both loops' requests show, in Responses terms: each is valid by
 * OpenAI's `InputItem` schema; each call of turn t carries turns 0..t - 1,
 * then the current turn; the turns the bands fired through turn t - 1 cover
 * are compacted (the result's text, arguments `"{}"`, no reasoning, no item
 * ids), `compacted` saying how each item of such a turn reads; the others
 * carry the issued reasoning (id and `encrypted_content`), the call and the
 * full result, `kept` saying how each item of such a turn reads.
 */
function expectCompactedView(
  run: Awaited<ReturnType<typeof runLoop>>,
  view: {
    /** The items of a compacted turn, in order. */
    compacted: (turn: number, call: Item) => Item[];
    /** The items of a turn as the loop posted it and the model gets it back. */
    kept: (turn: number) => Item[];
    /** The items checked against OpenAI's schema (default: all). */
    schemaChecked?: (input: Item[]) => Item[];
  },
) {
  const { issued, requests, compactions } = run;
  const turnOfCall = new Map(
    QUESTIONS.map((_, turn) => [issuedFor(issued, turn).call.call_id, turn]),
  );
  const compactedSeen = new Set<number>();
  requests.forEach((body, n) => {
    const input = body.input as Item[];
    expect(body.model).toBe(MODEL);
    const checked = view.schemaChecked?.(input) ?? input;
    expect(openaiResponsesInputErrors(checked), `request ${n}`).toEqual([]);
    const turns = turnsOf(input);
    // Two calls a turn: the question, then the same with the call and its result.
    const current = Math.floor(n / 2);
    expect(turns).toHaveLength(current + 1);

    // The compacted turns are exactly those of the bands fired through the previous turn.
    const compactedHere = input
      .filter((item) => item.type === "function_call_output" && item.output === COMPACTED_RESULT)
      .map((item) => turnOfCall.get(String(item.call_id)) ?? -1);
    const banded = bandedThrough(compactions, current - 1);
    expect(distinctSorted(compactedHere), `the compacted turns in turn ${current}'s calls`).toEqual(
      banded,
    );
    for (const turn of banded) compactedSeen.add(turn);

    turns.slice(0, current).forEach((items, turn) => {
      const { call } = issuedFor(issued, turn);
      if (banded.includes(turn)) {
        // Its reasoning stripped, no item of the turn keeps its id (docs/architecture.md §15).
        expect(items.filter((item) => "id" in item)).toEqual([]);
        expect(items, `turn ${turn} in request ${n}`).toEqual(view.compacted(turn, call));
      } else {
        expect(items, `turn ${turn} in request ${n}`).toEqual(view.kept(turn));
      }
    });
    // The current turn: the question, then (second call) the reasoning, the call and its result.
    expect(turns[current], `turn ${current} in request ${n}`).toEqual(
      view.kept(current).slice(0, n % 2 === 0 ? 1 : 4),
    );
  });
  // A band fired and the model received it; the first turn (keep_first) is never compacted.
  expect(compactedSeen.size).toBeGreaterThan(0);
  for (const turn of compactedSeen) {
    expect(turn).toBeGreaterThan(0);
    expect(inAutoBand(compactions, turn)).toBe(true);
  }
}

describe("docs/integrate.md's Responses and AI SDK agent loops against the local runtime and a Responses stub", () => {
  it("openai-responses: the official openai client's loop gets the compacted view, encrypted reasoning and ids kept", async () => {
    const run = await runLoop("openai-responses-loop", "openai-responses");
    const { packageJson } = runtime;
    for (const body of run.requests) {
      expect(body.instructions).toBe("Answer from this repository.");
      expect(body.store).toBe(false);
      expect(body.include).toEqual(["reasoning.encrypted_content"]);
    }
    // As posted: the question, then the output items as the model issued them, and the result.
    const kept = (turn: number): Item[] => {
      const { reasoning, call, answerReasoning, message } = issuedFor(run.issued, turn);
      return [
        { role: "user", content: QUESTIONS[turn] },
        reasoning,
        call,
        { type: "function_call_output", call_id: call.call_id, output: packageJson },
        answerReasoning,
        message,
      ];
    };
    expectCompactedView(run, {
      kept,
      // Reasoning stripped, hence no ids; the assistant message in its input form.
      compacted: (turn, call) => [
        { role: "user", content: QUESTIONS[turn] },
        { type: "function_call", call_id: call.call_id, name: TOOL, arguments: "{}" },
        { type: "function_call_output", call_id: call.call_id, output: COMPACTED_RESULT },
        { type: "message", role: "assistant", content: answerText(turn) },
      ],
    });
    // Nothing was lost: the raw stream is every item as posted.
    const raw = await run.client.events<Item>(run.id, { format: "openai-responses" });
    expect(raw.input).toEqual(QUESTIONS.flatMap((_, turn) => kept(turn)));
  }, 60_000);

  it("ai-sdk: generateText with @ai-sdk/openai gets the compacted view, providerOptions kept", async () => {
    const run = await runLoop("ai-sdk-loop", "ai-sdk");
    const { packageJson } = runtime;
    for (const body of run.requests) {
      // The system prompt goes with each call, once, first (a developer message for a reasoning model).
      const input = body.input as Item[];
      expect(input.filter((item) => item.role === "developer" || item.role === "system")).toEqual([
        { role: "developer", content: "Answer from this repository." },
      ]);
      expect(input[0]?.role).toBe("developer");
      expect(body.store).toBe(false);
    }
    // What the provider sends for a turn of ModelMessages that kept their providerOptions:
    // reasoning by its id with its encrypted content, the message with its id (a function call
    // never with its `fc_` id).
    const reasoningItem = (item: Item) => ({
      type: "reasoning",
      id: item.id,
      encrypted_content: item.encrypted_content,
      summary: item.summary,
    });
    const question = (turn: number) => ({
      role: "user",
      content: [{ type: "input_text", text: QUESTIONS[turn] }],
    });
    expectCompactedView(run, {
      kept: (turn) => {
        const { reasoning, call, answerReasoning, message } = issuedFor(run.issued, turn);
        return [
          question(turn),
          reasoningItem(reasoning),
          { type: "function_call", call_id: call.call_id, name: TOOL, arguments: call.arguments },
          { type: "function_call_output", call_id: call.call_id, output: packageJson },
          reasoningItem(answerReasoning),
          {
            role: "assistant",
            content: [{ type: "output_text", text: answerText(turn) }],
            id: message.id,
          },
        ];
      },
      // @ai-sdk/openai sends assistant text without an item id (here: a compacted turn's answer,
      // its reasoning gone) as an EasyInputMessage with `output_text` parts. OpenAI's published
      // schema lists only input parts there, but the API takes exactly these (it refuses
      // `input_text` in an assistant message: "Supported values are: 'output_text' and
      // 'refusal'"), so those messages are left to the literal comparison below.
      schemaChecked: (input) =>
        input.filter((item) => item.role !== "assistant" || item.id !== undefined),
      compacted: (turn, call) => [
        question(turn),
        { type: "function_call", call_id: call.call_id, name: TOOL, arguments: "{}" },
        { type: "function_call_output", call_id: call.call_id, output: COMPACTED_RESULT },
        { role: "assistant", content: [{ type: "output_text", text: answerText(turn) }] },
      ],
    });

    // The compacted view and the raw stream pass the ai package's own ModelMessage schema.
    const view = await run.client.projection<Item>(run.id, { format: "ai-sdk" });
    const results = view.messages.flatMap((message) =>
      message.role === "tool" ? (message.content as Item[]) : [],
    );
    expect(results.map((part) => part.output)).toContainEqual({
      type: "text",
      value: COMPACTED_RESULT,
    });
    const raw = await run.client.events<Item>(run.id, { format: "ai-sdk" });
    for (const message of [...view.messages, ...raw.messages])
      expect(modelMessageSchema.safeParse(message).error).toBeUndefined();

    // Each part's providerOptions as the loop posted them: the provider's ids and encrypted reasoning.
    const postedOptions = (turn: number) => {
      const { reasoning, call, answerReasoning, message } = issuedFor(run.issued, turn);
      const encrypted = (item: Item) => ({
        openai: { itemId: item.id, reasoningEncryptedContent: item.encrypted_content },
      });
      return [
        { type: "reasoning", providerOptions: encrypted(reasoning) },
        { type: "tool-call", providerOptions: { openai: { itemId: call.id } } },
        // ai gives a result its call's provider metadata.
        { type: "tool-result", providerOptions: { openai: { itemId: call.id } } },
        { type: "reasoning", providerOptions: encrypted(answerReasoning) },
        { type: "text", providerOptions: { openai: { itemId: message.id } } },
      ];
    };
    const optionsOf = (messages: readonly Item[]) =>
      messages
        .flatMap((message) => (Array.isArray(message.content) ? (message.content as Item[]) : []))
        .map((part) => ({ type: part.type, providerOptions: part.providerOptions }));
    // The raw stream keeps them all; the view, in every turn no band covers.
    expect(optionsOf(raw.messages)).toEqual(QUESTIONS.flatMap((_, turn) => postedOptions(turn)));
    const banded = bandedThrough(run.compactions, QUESTIONS.length - 1);
    const viewTurns = turnsOf(view.messages);
    expect(viewTurns).toHaveLength(QUESTIONS.length);
    viewTurns.forEach((messages, turn) => {
      if (!banded.includes(turn)) expect(optionsOf(messages)).toEqual(postedOptions(turn));
    });
  }, 60_000);
});
