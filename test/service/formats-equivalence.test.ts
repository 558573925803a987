/**
 * The D50 decisions do not depend on the format (docs/architecture.md §15: every
 * rule runs on the JP view). For each provider format (openai-chat,
 * openai-responses, anthropic-messages, ai-sdk), a long, tool-heavy
 * conversation is posted in the format to one conversation and as the JP
 * events of each turn to another, with the same auto compaction config and
 * the same model; each queued evaluation is delivered after each post. Both
 * fire at the same turns with the same ranges and estimates, every firing is
 * the rolling range §5 defines (computed here from the config), and the
 * compacted projection reads the same in the format and is valid for its
 * provider.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../core/events.ts";
import { aiSdk } from "../../core/formats/ai-sdk.ts";
import { anthropicMessages } from "../../core/formats/anthropic-messages.ts";
import type { ProviderFormat } from "../../core/formats/format.ts";
import { openaiChat } from "../../core/formats/openai-chat.ts";
import { openaiResponses } from "../../core/formats/openai-responses.ts";
import { aiSdkSchemaIssues, aiSdkTurnArb } from "../helpers/ai-sdk-arbitraries.ts";
import { anthropicTurnArb } from "../helpers/anthropic-arbitraries.ts";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import { chatTurnArb } from "../helpers/openai-chat-arbitraries.ts";
import { responsesTurnArb } from "../helpers/openai-responses-arbitraries.ts";
import { openaiChatMessageErrors, openaiResponsesInputErrors } from "../helpers/openai-schema.ts";
import { propertyRuns } from "../helpers/property.ts";
import { harness } from "../helpers/service.ts";

const RUNS = propertyRuns(5, 20261201);
/** How many times over the raw conversation fills the context window. */
const SHARE = fc.constantFrom(1.2, 1.6, 2, 3);
const KEEP_FIRST = 1;
const KEEP_LAST = 2;
const TRIGGER_RATIO = 0.5;
/** The default `min_turns` (§6): no firing while turn_count <= 5. */
const MIN_TURNS = 5;
const CONFIG = {
  conversation: {
    compaction: {
      auto: {
        enabled: true,
        trigger_ratio: TRIGGER_RATIO,
        rule: {
          keep_first: KEEP_FIRST,
          keep_last: KEEP_LAST,
          tool_calls: "strip",
          reasoning: "strip",
        },
      },
    },
  },
};
/** The time the harness's clock shows: what the service stamps a format post with. */
const STAMP = "2026-11-29T12:00:00.000000Z";

/** 12 to 20 turns, `turnArb(t)` the arbitrary of turn `t`. */
const turnsOf = (turnArb: (turn: number) => fc.Arbitrary<unknown[]>) =>
  fc
    .integer({ min: 12, max: 20 })
    .chain((count) => fc.tuple(...Array.from({ length: count }, (_, t) => turnArb(t))));

/**
 * Each format, how its long conversations are drawn, and why a body is no
 * valid request for its provider (empty: valid).
 */
const SUBJECTS: readonly {
  format: ProviderFormat;
  turns: fc.Arbitrary<unknown[][]>;
  violations: (body: unknown[]) => string[] | Promise<string[]>;
}[] = [
  { format: openaiChat, turns: turnsOf(() => chatTurnArb), violations: openaiChatMessageErrors },
  {
    format: openaiResponses,
    turns: turnsOf(() => responsesTurnArb),
    violations: openaiResponsesInputErrors,
  },
  {
    format: anthropicMessages,
    turns: turnsOf(anthropicTurnArb),
    violations: (body) =>
      anthropicRuleViolations(body as Parameters<typeof anthropicRuleViolations>[0]),
  },
  { format: aiSdk, turns: turnsOf(aiSdkTurnArb), violations: aiSdkSchemaIssues },
];

/** The turn's events, as the service converts it at {@link STAMP}. */
const eventsOf = (format: ProviderFormat, messages: unknown[]): Entry[] =>
  format.toEvents(messages, { timestamp: STAMP, dropSystem: false }).events;

/** Most turns call tools: stripping then changes what the estimate counts. */
const mostlyTools = (format: ProviderFormat, turns: readonly unknown[][]): boolean =>
  turns.filter((messages) =>
    eventsOf(format, messages).some((event) => event.type === "tool_call_request"),
  ).length *
    2 >
  turns.length;

interface Listed {
  position: number;
  source: string;
  from_turn: number;
  to_turn: number;
  tool_calls?: unknown;
  reasoning?: unknown;
  trigger?: {
    turn: number;
    estimated_tokens: number;
    threshold: number;
    context_window: number;
    estimated_tokens_after: number;
  };
}

/**
 * Posts `turns` in `format` to one conversation and as JP events to another,
 * delivering the evaluations after each post; answers what each saw.
 */
async function postBoth(
  format: ProviderFormat,
  turns: readonly unknown[][],
  contextWindow: number,
) {
  const h = harness();
  const asFormat = "/v1/conversations/as-format";
  const asEvents = "/v1/conversations/as-events";
  const model = { id: "equivalence-model", context_window: contextWindow };
  const outcomes: { format: unknown[]; events: unknown[] } = { format: [], events: [] };
  const summaries: { format: unknown[]; events: unknown[] } = { format: [], events: [] };
  for (const [turn, messages] of turns.entries()) {
    const events = eventsOf(format, messages);
    const posts = [
      ["format", asFormat, { turn, model, format: format.name, [format.field]: messages }],
      ["events", asEvents, { turn, model, events }],
    ] as const;
    for (const [which, path, body] of posts) {
      const answer = await h.request("POST", `${path}/turns`, body);
      expect(answer.status, await answer.clone().text()).toBe(202);
      if (turn === 0) expect((await h.request("PUT", `${path}/config`, CONFIG)).status).toBe(200);
      for (const message of h.queue.take()) outcomes[which].push(await h.evaluate(message));
      summaries[which].push(await (await h.request("GET", path)).json());
    }
  }
  const compactions = async (path: string) =>
    ((await (await h.request("GET", `${path}/compactions`)).json()) as { compactions: Listed[] })
      .compactions;
  const projection = async (path: string) => {
    const answer = await h.request("GET", `${path}/projection?format=${format.name}`);
    return ((await answer.json()) as Record<string, unknown[]>)[format.field] as unknown[];
  };
  return {
    outcomes,
    summaries,
    format: await compactions(asFormat),
    events: await compactions(asEvents),
    projections: { format: await projection(asFormat), events: await projection(asEvents) },
  };
}

/** The firings of one conversation, as the D50 decision they are (no timestamps). */
const decisions = (compactions: readonly Listed[]) =>
  compactions.map(({ source, from_turn, to_turn, trigger, tool_calls, reasoning }) => ({
    source,
    from_turn,
    to_turn,
    trigger,
    tool_calls,
    reasoning,
  }));

/** §5's rolling range, firing after firing: every band starts after the last one, keeps the last turns. */
function expectRollingRanges(compactions: readonly Listed[], contextWindow: number): void {
  let afterLast = 0;
  for (const band of compactions) {
    const turn = band.trigger?.turn as number;
    expect(band.source).toBe("auto");
    expect(turn + 1).toBeGreaterThan(MIN_TURNS);
    expect(band.from_turn).toBe(Math.max(KEEP_FIRST, afterLast));
    expect(band.to_turn).toBe(turn - KEEP_LAST);
    expect(band.trigger?.context_window).toBe(contextWindow);
    expect(band.trigger?.threshold).toBe(contextWindow * TRIGGER_RATIO);
    expect(band.trigger?.estimated_tokens).toBeGreaterThan(contextWindow * TRIGGER_RATIO);
    expect(band.tool_calls).toEqual({ policy: "strip", request: true, response: true });
    expect(band.reasoning).toBe("strip");
    afterLast = band.to_turn + 1;
  }
}

/**
 * §5's size estimate of raw JP events, counted here: UTF-8 bytes of the
 * request content, the response message or reasoning, the call's name and
 * JSON arguments, the result content; divided by 4.
 */
function rawTokens(events: readonly Entry[]): number {
  let chars = 0;
  for (const event of events) {
    const e = event as Record<string, unknown>;
    const texts =
      event.type === "chat_request"
        ? [e.content]
        : event.type === "chat_response"
          ? [e.message ?? e.reasoning ?? JSON.stringify(e.data)]
          : event.type === "tool_call_request"
            ? [e.name, JSON.stringify(e.arguments)]
            : event.type === "tool_call_response"
              ? [e.content]
              : [];
    for (const text of texts) chars += Buffer.byteLength(String(text), "utf8");
  }
  return chars / 4;
}

async function expectSameDecisions(
  { format, violations }: (typeof SUBJECTS)[number],
  turns: readonly unknown[][],
  share: number,
): Promise<void> {
  // A window that the whole raw conversation fills `share` times over: the trigger (at half of
  // it) fires for some turns and skips others, depending on what stripping leaves.
  const events = turns.flatMap((messages) => eventsOf(format, messages));
  const contextWindow = Math.max(1, Math.round(rawTokens(events) / share));
  const seen = await postBoth(format, turns, contextWindow);
  // Not vacuous: the conversation fires.
  expect(seen.events.length).toBeGreaterThanOrEqual(1);
  expect(decisions(seen.format)).toEqual(decisions(seen.events));
  expect(seen.outcomes.format).toEqual(seen.outcomes.events);
  expect(seen.summaries.format).toEqual(seen.summaries.events);
  expectRollingRanges(seen.format, contextWindow);
  // The compacted conversation reads the same in the format, and is a request its provider takes.
  expect(seen.projections.format).toEqual(seen.projections.events);
  expect(await violations(seen.projections.format)).toEqual([]);
}

describe("the D50 decisions are the same whatever the format a conversation is posted in", () => {
  it.each(SUBJECTS.map((subject) => [subject.format.name, subject] as const))(
    "%s and its JP events fire at the same turns with the same ranges and estimates",
    async (_name, subject) => {
      const conversations = subject.turns.filter((turns) => mostlyTools(subject.format, turns));
      await fc.assert(
        fc.asyncProperty(conversations, SHARE, (turns, share) =>
          expectSameDecisions(subject, turns, share),
        ),
        RUNS,
      );
    },
  );
});
