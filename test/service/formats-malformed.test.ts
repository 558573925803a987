/**
 * Malformed turns in each provider format (docs/architecture.md §15, §8): 100
 * seeded payloads per format, one mutation of a valid turn each (see
 * test/helpers/malformed.ts and test/helpers/malformed/<format>.ts for the
 * catalogues and where each expectation comes from). Every one gets its 4xx problem with a detail that locates the
 * message and says what to change, and nothing is stored: a fresh
 * conversation stays absent, one with two valid turns keeps them unchanged,
 * and no evaluation is enqueued.
 */
import { describe, expect, it } from "vitest";
import { PROVIDER_FORMATS } from "../../core/formats/index.ts";
import {
  type MalformedFormat,
  type MalformedPayload,
  malformedKinds,
  malformedPayloads,
} from "../helpers/malformed.ts";
import { harness } from "../helpers/service.ts";

/** Small enough that a payload with huge arguments is over it; every other payload fits. */
const BODY_LIMIT = 32_768;
const PAYLOADS = 100;
const SEED = 20261201;

/** Two valid turns per format, stored before each malformed turn 2; every format is covered. */
const PRIOR_TURNS: Record<MalformedFormat, { earlierCallId: string; turns: unknown[][] }> = {
  "openai-chat": {
    earlierCallId: "call_prev_1",
    turns: [
      [
        { role: "user", content: "What is in README.md?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_prev_1",
              type: "function",
              function: { name: "read_file", arguments: '{"path":"README.md"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_prev_1", content: "# autocompact" },
        { role: "assistant", content: "It is the autocompact readme." },
      ],
      [
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
    ],
  },
  "anthropic-messages": {
    earlierCallId: "toolu_prev_1",
    turns: [
      [
        { role: "user", content: "List the files." },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I should call ls.", signature: "sig-abc" },
            { type: "tool_use", id: "toolu_prev_1", name: "ls", input: { dir: "." } },
          ],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_prev_1", content: "a.txt b.txt" }],
        },
        { role: "assistant", content: "Two files: a.txt and b.txt." },
      ],
      [
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
    ],
  },
  "openai-responses": {
    earlierCallId: "call_prev_1",
    turns: [
      [
        { role: "user", content: "What is in README.md?" },
        {
          type: "reasoning",
          id: "rs_prev_1",
          summary: [{ type: "summary_text", text: "Read the file." }],
          encrypted_content: "gAAAA==",
        },
        {
          type: "function_call",
          id: "fc_prev_1",
          call_id: "call_prev_1",
          name: "read_file",
          arguments: '{"path":"README.md"}',
        },
        { type: "function_call_output", call_id: "call_prev_1", output: "# autocompact" },
        { role: "assistant", content: "It is the autocompact readme." },
      ],
      [
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
    ],
  },
  "ai-sdk": {
    earlierCallId: "call_prev_1",
    turns: [
      [
        { role: "user", content: "What is in README.md?" },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "Read the file." },
            {
              type: "tool-call",
              toolCallId: "call_prev_1",
              toolName: "read_file",
              input: { path: "README.md" },
            },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_prev_1",
              toolName: "read_file",
              output: { type: "text", value: "# autocompact" },
            },
          ],
        },
        { role: "assistant", content: "It is the autocompact readme." },
      ],
      [
        { role: "user", content: "Thanks!" },
        { role: "assistant", content: "You're welcome." },
      ],
    ],
  },
};

const FORMATS = Object.keys(PRIOR_TURNS) as MalformedFormat[];

async function expectProblem(answer: Response, payload: MalformedPayload): Promise<void> {
  // A case that found a bug fails with its description, not just a status mismatch.
  const why = payload.bug ?? payload.name;
  const text = await answer.text();
  expect(answer.status, `${why}\nanswer: ${text.slice(0, 300)}`).toBe(payload.status);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  const problem = JSON.parse(text) as { type: string; status: number; detail: string };
  expect(problem.status).toBe(payload.status);
  expect(problem.type, why).toBe(payload.type);
  expect(problem.detail, why).toMatch(payload.detail);
}

describe.each(FORMATS)("100 malformed %s turns", (format) => {
  const prior = PRIOR_TURNS[format];
  const payloads = malformedPayloads(format, {
    seed: SEED,
    count: PAYLOADS,
    bodyLimitBytes: BODY_LIMIT,
    earlierCallId: prior.earlierCallId,
  });
  const h = harness({ bodyLimitBytes: BODY_LIMIT });

  it("are exactly 100, deterministic for the seed, and cover every kind of the catalogue", () => {
    expect(payloads).toHaveLength(PAYLOADS);
    const kinds = malformedKinds(format);
    expect(kinds.length).toBeGreaterThanOrEqual(10);
    expect(new Set(payloads.map((payload) => payload.kind))).toEqual(new Set(kinds));
    for (const status of [400, 413, 422]) {
      expect(payloads.some((payload) => payload.status === status)).toBe(true);
    }
    const again = malformedPayloads(format, {
      seed: SEED,
      count: PAYLOADS,
      bodyLimitBytes: BODY_LIMIT,
      earlierCallId: prior.earlierCallId,
    });
    expect(JSON.stringify(again.map((payload) => payload.body))).toBe(
      JSON.stringify(payloads.map((payload) => payload.body)),
    );
  });

  // Cases with `bug` set found one, each fixed since: "message not an object" (anthropic-messages)
  // was answered `role must be "user" or "assistant"`, which names no fix; "arguments nested too
  // deep" (openai-chat) was stored (202) or answered a 500 at 8f900d2; "annotation in Chat's
  // shape" and a `phase` outside OpenAI's enum (openai-responses) were stored and re-emitted, so
  // the projection was no valid Responses input (the schemas in
  // core/formats/openai-responses.schema.ts).
  it.each(payloads)("$name", async (payload) => {
    const n = payload.name.slice(0, 2);
    h.queue.take();

    // A fresh conversation: refused, and it still does not exist.
    const fresh = `/v1/conversations/fresh-${n}`;
    await expectProblem(
      await h.request("POST", `${fresh}/turns`, { turn: 0, ...payload.body }),
      payload,
    );
    expect((await h.request("GET", fresh)).status).toBe(404);
    expect(h.queue.take()).toEqual([]);

    // A conversation with two valid turns: refused as turn 2, the two turns unchanged.
    const stored = `/v1/conversations/prior-${n}`;
    for (const [turn, messages] of prior.turns.entries()) {
      const answer = await h.request("POST", `${stored}/turns`, {
        turn,
        format,
        [PROVIDER_FORMATS[format].field]: messages,
      });
      expect(answer.status).toBe(202);
    }
    h.queue.take();
    const before = await (await h.request("GET", `${stored}/events`)).json();
    await expectProblem(
      await h.request("POST", `${stored}/turns`, { turn: 2, ...payload.body }),
      payload,
    );
    const summary = (await (await h.request("GET", stored)).json()) as { turn_count: number };
    expect(summary.turn_count).toBe(2);
    expect(await (await h.request("GET", `${stored}/events`)).json()).toEqual(before);
    expect(h.queue.take()).toEqual([]);
  });
});
