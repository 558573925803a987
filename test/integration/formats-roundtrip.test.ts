/**
 * Round trips through the service (ARCHITECTURE §15): any valid conversation
 * posted turn by turn in a provider format through the HTTP API comes back
 * from `GET …/projection?format=X` (no compaction) and `GET …/events?format=X`
 * as the same messages, up to §15's normalizations only (the ones the core
 * property tests use, from the arbitraries' helpers). The projection is also
 * a valid request for its provider: OpenAI's published schema for Chat, the
 * Messages API's structural rules for Anthropic.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AnthropicMessage } from "../../core/formats/anthropic-messages.ts";
import type { ChatMessage } from "../../core/formats/openai-chat.ts";
import {
  anthropicConversationArb,
  normalizeAnthropicMessages,
} from "../helpers/anthropic-arbitraries.ts";
import { anthropicRuleViolations } from "../helpers/anthropic-rules.ts";
import { chatConversationArb, normalizeChatMessages } from "../helpers/openai-chat-arbitraries.ts";
import { openaiChatMessageErrors } from "../helpers/openai-schema.ts";
import { harness } from "../helpers/service.ts";

const RUNS = { numRuns: 30, seed: 20261201 };
const CONVERSATION = "/v1/conversations/round-trip";

/** What a platform actually sends: the messages as JSON (no `undefined`, `-0` as `0`). */
const asPosted = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Posts every turn in `format`, then reads the projection and the raw events in it. */
async function roundTrip(format: string, turns: readonly unknown[][]) {
  const h = harness();
  for (const [turn, messages] of turns.entries()) {
    const answer = await h.request("POST", `${CONVERSATION}/turns`, { turn, format, messages });
    expect(answer.status, await answer.clone().text()).toBe(202);
  }
  const projection = await h.request("GET", `${CONVERSATION}/projection?format=${format}`);
  expect(projection.status).toBe(200);
  const events = await h.request("GET", `${CONVERSATION}/events?format=${format}`);
  expect(events.status).toBe(200);
  return {
    projection: (await projection.json()) as {
      format: string;
      messages: unknown[];
      turns: unknown[];
    },
    events: (await events.json()) as { format: string; messages: unknown[] },
  };
}

describe("a conversation posted through the API comes back in its format", () => {
  it("openai-chat: the projection and the events, up to §15's normalizations, and a valid request", async () => {
    await fc.assert(
      fc.asyncProperty(chatConversationArb(6), async (turns) => {
        const { projection, events } = await roundTrip("openai-chat", turns);
        const expected = normalizeChatMessages(asPosted(turns).flat());
        expect(projection.format).toBe("openai-chat");
        expect(events.format).toBe("openai-chat");
        expect(projection.turns).toEqual(turns.map((_, kept) => ({ kept })));
        expect(normalizeChatMessages(projection.messages as ChatMessage[])).toEqual(expected);
        expect(normalizeChatMessages(events.messages as ChatMessage[])).toEqual(expected);
        expect(openaiChatMessageErrors(projection.messages)).toEqual([]);
      }),
      RUNS,
    );
  });

  it("anthropic-messages: the projection and the events, up to §15's normalizations, and a valid request", async () => {
    await fc.assert(
      fc.asyncProperty(anthropicConversationArb(6), async (turns) => {
        const { projection, events } = await roundTrip("anthropic-messages", turns);
        const expected = normalizeAnthropicMessages(asPosted(turns).flat());
        expect(projection.format).toBe("anthropic-messages");
        expect(events.format).toBe("anthropic-messages");
        expect(projection.turns).toEqual(turns.map((_, kept) => ({ kept })));
        const projected = projection.messages as AnthropicMessage[];
        expect(normalizeAnthropicMessages(projected)).toEqual(expected);
        expect(normalizeAnthropicMessages(events.messages as AnthropicMessage[])).toEqual(expected);
        expect(anthropicRuleViolations(projected)).toEqual([]);
      }),
      RUNS,
    );
  });
});
