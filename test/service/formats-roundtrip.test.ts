/**
 * Round trips through the service (docs/architecture.md §15): any valid conversation
 * posted turn by turn in a provider format through the HTTP API comes back
 * from `GET …/projection?format=X` (no compaction) and `GET …/events?format=X`
 * as the same messages, in the format's own field (`messages`, or `input` for
 * Responses), up to §15's normalizations only (the ones the core property
 * tests use, from the arbitraries' helpers). The projection is also a valid
 * request for its provider: OpenAI's published schemas for Chat and
 * Responses, the Messages API's structural rules for Anthropic, the `ai`
 * package's own `modelMessageSchema` for the AI SDK.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AiSdkMessage } from "../../core/formats/ai-sdk.schema.ts";
import type { AnthropicMessage } from "../../core/formats/anthropic-messages.schema.ts";
import { PROVIDER_FORMATS, type ProviderFormatName } from "../../core/formats/index.ts";
import type { ChatMessage } from "../../core/formats/openai-chat.schema.ts";
import type { ResponsesItem } from "../../core/formats/openai-responses.schema.ts";
import {
  aiSdkConversationArb,
  aiSdkSchemaIssues,
  normalizeAiSdkMessages,
} from "../helpers/ai-sdk-arbitraries.ts";
import {
  anthropicConversationArb,
  normalizeAnthropicMessages,
} from "../helpers/anthropic-arbitraries.ts";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import { chatConversationArb, normalizeChatMessages } from "../helpers/openai-chat-arbitraries.ts";
import {
  normalizeResponsesItems,
  responsesConversationArb,
} from "../helpers/openai-responses-arbitraries.ts";
import { openaiChatMessageErrors, openaiResponsesInputErrors } from "../helpers/openai-schema.ts";
import { propertyRuns } from "../helpers/property.ts";
import { harness } from "../helpers/service.ts";

const RUNS = propertyRuns(30, 20261201);
const CONVERSATION = "/v1/conversations/round-trip";

/** What a platform actually sends: the messages as JSON (no `undefined`, `-0` as `0`). */
const asPosted = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A format's conversations, its §15 normalization, and why a body is no valid request (empty: valid). */
interface Subject<M> {
  readonly format: ProviderFormatName;
  readonly conversation: fc.Arbitrary<M[][]>;
  readonly normalize: (messages: M[]) => unknown[];
  readonly violations: (messages: M[]) => string[] | Promise<string[]>;
}

/** A subject with its message type checked where it is written, erased for the table. */
const subject = <M>(s: Subject<M>) => [s.format, s as unknown as Subject<unknown>] as const;

const SUBJECTS = [
  subject<ChatMessage>({
    format: "openai-chat",
    conversation: chatConversationArb(6),
    normalize: normalizeChatMessages,
    violations: openaiChatMessageErrors,
  }),
  subject<ResponsesItem>({
    format: "openai-responses",
    conversation: responsesConversationArb(6),
    normalize: normalizeResponsesItems,
    violations: openaiResponsesInputErrors,
  }),
  subject<AnthropicMessage>({
    format: "anthropic-messages",
    conversation: anthropicConversationArb(6),
    normalize: normalizeAnthropicMessages,
    violations: anthropicRuleViolations,
  }),
  subject<AiSdkMessage>({
    format: "ai-sdk",
    conversation: aiSdkConversationArb(6),
    normalize: normalizeAiSdkMessages,
    violations: aiSdkSchemaIssues,
  }),
];

/** Posts every turn in `format`, then reads the projection and the raw events in it. */
async function roundTrip(format: ProviderFormatName, turns: readonly unknown[][]) {
  const { field } = PROVIDER_FORMATS[format];
  const h = harness();
  for (const [turn, messages] of turns.entries()) {
    const body = { turn, format, [field]: messages };
    const answer = await h.request("POST", `${CONVERSATION}/turns`, body);
    expect(answer.status, await answer.clone().text()).toBe(202);
  }
  const projection = await h.request("GET", `${CONVERSATION}/projection?format=${format}`);
  expect(projection.status).toBe(200);
  const events = await h.request("GET", `${CONVERSATION}/events?format=${format}`);
  expect(events.status).toBe(200);
  type Answer = Record<string, unknown> & { format: string; turns?: unknown[] };
  const [projected, raw] = [(await projection.json()) as Answer, (await events.json()) as Answer];
  return { projection: projected, events: raw, field };
}

describe("a conversation posted through the API comes back in its format", () => {
  it.each(SUBJECTS)(
    "%s: the projection and the events, up to §15's normalizations, and a valid request",
    async (format, { conversation, normalize, violations }) => {
      await fc.assert(
        fc.asyncProperty(conversation, async (turns) => {
          const { projection, events, field } = await roundTrip(format, turns);
          const expected = normalize(asPosted(turns).flat());
          expect(projection.format).toBe(format);
          expect(events.format).toBe(format);
          expect(projection.turns).toEqual(turns.map((_, kept) => ({ kept })));
          const projected = projection[field] as unknown[];
          expect(normalize(projected)).toEqual(expected);
          expect(normalize(events[field] as unknown[])).toEqual(expected);
          expect(await violations(projected)).toEqual([]);
        }),
        RUNS,
      );
    },
  );
});
