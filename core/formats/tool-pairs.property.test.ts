/**
 * The invariant of docs/architecture.md §5 "Tool pairs" and §15: for
 * conversations with tool rounds, calls left pending across turns (a tool
 * approval spanning two turns) and hosted tools of each format (§15 "Hosted
 * tools"), under random bands of every policy, auto and
 * manual, the view in each format keeps the providers' structural rules, and
 * so does the view of the conversation cut after any turn (a request prefix:
 * the platform then appends the pending calls' results). The rules are
 * checked by test/helpers/tool-pair-rules.ts and anthropic-rules.ts, which
 * share no code with the formats or the projection; the view itself equals
 * the independent reference projection's, and the per-turn sizes its size.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anthropicRuleViolations } from "../../test/helpers/anthropic-rules.ts";
import { at, compaction } from "../../test/helpers/builders.ts";
import {
  openaiChatMessageErrors,
  openaiResponsesInputErrors,
} from "../../test/helpers/openai-schema.ts";
import { propertyRuns } from "../../test/helpers/property.ts";
import { referenceProject } from "../../test/helpers/reference-projection.ts";
import {
  aiSdkPairViolations,
  chatPairViolations,
  responsesPairViolations,
} from "../../test/helpers/tool-pair-rules.ts";
import { estimateStream } from "../estimate.ts";
import type { Compaction, Entry } from "../events.ts";
import { compactionsOf, project } from "../projection.ts";
import { measureStream, projectedCharsFromSizes } from "../sizes.ts";
import { checkTurnShape } from "../turn-validation.ts";
import { aiSdk } from "./ai-sdk.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import type { ProviderFormat } from "./format.ts";
import { openaiChat } from "./openai-chat.ts";
import { openaiResponses } from "./openai-responses.ts";
import { projectedView } from "./view.ts";

type Json = Record<string, unknown>;

interface Round {
  /** A hosted tool run before the round's calls: the index of its kit in {@link HOSTED_KITS}. */
  readonly hosted: number | undefined;
  readonly text: string | undefined;
  readonly reasoning: string | undefined;
  readonly calls: number;
  /** Which of the calls the round answers, when it ends its turn with calls pending. */
  readonly answered: readonly boolean[];
}

interface TurnPlan {
  readonly user: string | undefined;
  readonly rounds: readonly Round[];
  /** The turn ends with its last round's calls (some) unanswered. */
  readonly pending: boolean;
  readonly answer: string;
}

/**
 * Hosted tools as each format posts them (docs/architecture.md §15 "Hosted
 * tools"), `#` standing for a unique id: a kit's events are its posted
 * messages' events after the turn_start and the user message.
 */
const HOSTED_KITS: readonly { readonly format: ProviderFormat; readonly messages: Json[] }[] = [
  {
    format: anthropicMessages,
    messages: [
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "srvtoolu_#", name: "web_search", input: { query: "q" } },
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_#",
            content: [
              {
                type: "web_search_result",
                url: "https://a.example",
                title: "A",
                encrypted_content: "e",
              },
            ],
          },
        ],
      },
    ],
  },
  {
    format: openaiResponses,
    messages: [
      {
        type: "web_search_call",
        id: "ws_#",
        status: "completed",
        action: { type: "search", query: "q" },
      },
    ],
  },
  {
    format: openaiResponses,
    messages: [
      {
        type: "computer_call",
        id: "cu_#",
        call_id: "call_cu_#",
        status: "completed",
        pending_safety_checks: [],
        action: { type: "screenshot" },
      },
      {
        type: "computer_call_output",
        call_id: "call_cu_#",
        output: { type: "computer_screenshot", image_url: "https://a.example/s.png" },
      },
    ],
  },
  {
    format: openaiResponses,
    messages: [
      { type: "mcp_approval_request", id: "mcpr_#", server_label: "s", name: "t", arguments: "{}" },
      {
        type: "mcp_approval_response",
        approval_request_id: "mcpr_#",
        request_id: "mcpr_#",
        approve: true,
      },
    ],
  },
  {
    format: aiSdk,
    messages: [
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "pe_#",
            toolName: "web_search",
            input: { q: "q" },
            providerExecuted: true,
          },
          {
            type: "tool-result",
            toolCallId: "pe_#",
            toolName: "web_search",
            output: { type: "text", value: "r" },
          },
        ],
      },
    ],
  },
];

/** The JP events of hosted kit `kit`, its ids made unique by `n`. */
function hostedEvents(kit: number, n: number, timestamp: string): Entry[] {
  const { format, messages } = HOSTED_KITS[kit] as (typeof HOSTED_KITS)[number];
  const posted = JSON.parse(JSON.stringify(messages).replaceAll("#", String(n))) as Json[];
  const { events } = format.toEvents([{ role: "user", content: "u" }, ...posted], {
    timestamp,
    dropSystem: false,
  });
  return events.slice(2);
}

const textArb = fc.constantFrom("a", "ok", "ünï", "a longer piece of text");
const roundArb: fc.Arbitrary<Round> = fc.record({
  hosted: fc.option(fc.nat(HOSTED_KITS.length - 1), { freq: 2, nil: undefined }),
  text: fc.option(textArb, { nil: undefined }),
  reasoning: fc.option(textArb, { nil: undefined }),
  calls: fc.integer({ min: 1, max: 3 }),
  answered: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
});
const turnArb: fc.Arbitrary<TurnPlan> = fc.record({
  user: fc.option(textArb, { freq: 6, nil: undefined }),
  rounds: fc.array(roundArb, { maxLength: 3 }),
  pending: fc.boolean(),
  answer: textArb,
});

/**
 * A conversation's JP events as the formats post them: every call id unique
 * (as providers make them), a turn ending with pending calls followed by one
 * that begins with their results.
 */
function streamOf(plans: readonly TurnPlan[]): Entry[] {
  const ts = at(0);
  let next = 0;
  let carried: string[] = [];
  const turns: Entry[][] = plans.map((plan, k) => {
    const events: Entry[] = [{ type: "turn_start", timestamp: ts }];
    for (const id of carried) {
      events.push({
        type: "tool_call_response",
        timestamp: ts,
        id,
        content: `ok ${id}`,
        is_error: false,
      });
    }
    carried = [];
    if (plan.user !== undefined || (k === 0 && plan.rounds.length === 0)) {
      events.push({ type: "chat_request", timestamp: ts, content: plan.user ?? "hi" });
    }
    const pending = plan.pending && plan.rounds.length > 0;
    plan.rounds.forEach((round, r) => {
      if (round.reasoning !== undefined) {
        events.push({ type: "chat_response", timestamp: ts, reasoning: round.reasoning });
      }
      if (round.text !== undefined) {
        events.push({ type: "chat_response", timestamp: ts, message: round.text });
      }
      if (round.hosted !== undefined) events.push(...hostedEvents(round.hosted, next++, ts));
      const ids = Array.from({ length: round.calls }, () => `call_${next++}`);
      for (const id of ids) {
        events.push({
          type: "tool_call_request",
          timestamp: ts,
          id,
          name: "fs_read",
          arguments: { id },
        });
      }
      const last = r === plan.rounds.length - 1;
      ids.forEach((id, i) => {
        // A pending round leaves at least its first call for the next turn.
        if (last && pending && (i === 0 || round.answered[i] === false)) carried.push(id);
        else
          events.push({
            type: "tool_call_response",
            timestamp: ts,
            id,
            content: "x".repeat(i + 1),
            is_error: i === 2,
          });
      });
    });
    if (!pending) events.push({ type: "chat_response", timestamp: ts, message: plan.answer });
    return events;
  });
  return turns.flat();
}

const policiesArb = fc.oneof(
  fc.constant({ tool_calls: { policy: "omit" as const } }),
  fc
    .record({ request: fc.boolean(), response: fc.boolean() })
    .filter(({ request, response }) => request || response)
    .map((flags) => ({ tool_calls: { policy: "strip" as const, ...flags } })),
  fc.constant({ reasoning: "strip" as const }),
  fc.constant({ reasoning: "strip" as const, tool_calls: { policy: "omit" as const } }),
  fc.constant({ summary: { summary: "the story so far" } }),
);

const bandArb = fc.record({
  a: fc.nat(7),
  b: fc.nat(7),
  seconds: fc.nat(1_000),
  policies: policiesArb,
  source: fc.constantFrom("auto" as const, "manual" as const),
});

const conversationArb = fc.record({
  plans: fc.array(turnArb, { minLength: 1, maxLength: 7 }),
  bands: fc.array(bandArb, { maxLength: 3 }),
});

type BandPlan = typeof bandArb extends fc.Arbitrary<infer B> ? B : never;

function bandsOf(bands: readonly BandPlan[]): Compaction[] {
  return bands.map(({ a, b, seconds, policies, source }) =>
    compaction(Math.min(a, b), Math.max(a, b), seconds, { ...policies, source }),
  );
}

/** Every rule the view of `stream` breaks in each format. */
function violations(stream: readonly Entry[]): string[] {
  const view = projectedView(stream);
  const chat = openaiChat.fromView(view) as unknown as Json[];
  const responses = openaiResponses.fromView(view) as unknown as Json[];
  const anthropic = anthropicMessages.fromView(view);
  const sdk = aiSdk.fromView(view) as unknown as Json[];
  const next = { role: "user", content: "next" };
  return [
    ...chatPairViolations(chat).map((v) => `openai-chat ${v}`),
    ...openaiChatMessageErrors([...chat, next]).map((v) => `openai-chat schema ${v}`),
    ...responsesPairViolations(responses).map((v) => `openai-responses ${v}`),
    ...openaiResponsesInputErrors([...responses, next]).map((v) => `openai-responses schema ${v}`),
    ...(anthropic.length === 0
      ? []
      : anthropicRuleViolations(anthropic as never).map((v) => `anthropic-messages ${v}`)),
    ...aiSdkPairViolations(sdk).map((v) => `ai-sdk ${v}`),
  ];
}

/** The stream of turns `0..k` with the bands that start in them. */
function cutAfter(turns: readonly Entry[][], bands: readonly Compaction[], k: number): Entry[] {
  return [...turns.slice(0, k + 1).flat(), ...bands.filter((band) => band.from_turn <= k)];
}

function splitByTurnStart(events: readonly Entry[]): Entry[][] {
  const turns: Entry[][] = [];
  for (const event of events) {
    if (event.type === "turn_start") turns.push([]);
    turns.at(-1)?.push(event);
  }
  return turns;
}

describe("tool pairs in every format's view (docs/architecture.md §5)", () => {
  it("posts as valid turns: pending calls end a turn, their results begin the next", () => {
    fc.assert(
      fc.property(conversationArb, ({ plans }) => {
        splitByTurnStart(streamOf(plans)).forEach((turn, k) => {
          expect(() => checkTurnShape(k, turn)).not.toThrow();
        });
      }),
      propertyRuns(50),
    );
  });

  it("gives a valid request in every format, cut after any turn, under bands of every policy", () => {
    let views = 0;
    fc.assert(
      fc.property(conversationArb, ({ plans, bands }) => {
        const turns = splitByTurnStart(streamOf(plans));
        const compactions = bandsOf(bands);
        for (let k = 0; k < turns.length; k++) {
          const stream = cutAfter(turns, compactions, k);
          expect(violations(stream)).toEqual([]);
          expect(project(stream).entries).toEqual(referenceProject(stream));
          // One home for the rule: the per-turn sizes give the projection's size.
          expect(projectedCharsFromSizes(measureStream(stream), compactionsOf(stream))).toBe(
            estimateStream(stream).chars,
          );
          views++;
        }
      }),
      propertyRuns(80),
    );
    // The count a longer run (`npm run fuzz`) reports: every view checked, 0 invalid.
    if (process.env.AUTOCOMPACT_PROPERTY_SCALE)
      console.info(`tool pairs: ${views} views checked, 0 invalid`);
    expect(views).toBeGreaterThan(0);
  });
});
