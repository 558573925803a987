import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { at, compaction } from "../../test/helpers/builders.ts";
import {
  chatConversationArb,
  normalizeChatMessages,
} from "../../test/helpers/openai-chat-arbitraries.ts";
import { openaiChatMessageErrors } from "../../test/helpers/openai-schema.ts";
import { propertyRuns } from "../../test/helpers/property.ts";
import type { Entry } from "../events.ts";
import type { ChatMessage } from "./openai-chat.schema.ts";
import { openaiChat } from "./openai-chat.ts";
import { projectedView, rawView } from "./view.ts";

const runs = propertyRuns(150);
const NEXT_QUESTION = { role: "user", content: "And now?" } as const;

/** Each turn converted at its own time, the streams concatenated. */
function streamOf(turns: readonly ChatMessage[][]): Entry[] {
  return turns.flatMap(
    (messages, t) => openaiChat.toEvents(messages, { timestamp: at(t), dropSystem: false }).events,
  );
}

type AnyMessage = Record<string, unknown> & { role: string };

/** The tool call ids of an assistant message. */
function callIds(message: AnyMessage): string[] {
  return ((message.tool_calls as { id: string }[] | undefined) ?? []).map((call) => call.id);
}

describe("openai-chat round trips", () => {
  it("gives every posted turn back from the raw and the projected view, up to §15's normalizations", () => {
    fc.assert(
      fc.property(chatConversationArb(), (turns) => {
        const stream = streamOf(turns);
        const expected = normalizeChatMessages(turns.flat());
        expect(normalizeChatMessages(openaiChat.fromView(rawView(stream)))).toEqual(expected);
        expect(normalizeChatMessages(openaiChat.fromView(projectedView(stream)))).toEqual(expected);
      }),
      runs,
    );
  });

  it("writes a request body OpenAI's published schema accepts", () => {
    fc.assert(
      fc.property(chatConversationArb(), (turns) => {
        expect(openaiChatMessageErrors(openaiChat.fromView(rawView(streamOf(turns))))).toEqual([]);
      }),
      propertyRuns(100),
    );
  });

  it("is a fixed point: converting the written messages again gives the same events", () => {
    fc.assert(
      fc.property(chatConversationArb(1), ([turn]) => {
        const events = openaiChat.toEvents(turn, { timestamp: at(0), dropSystem: false }).events;
        const again = openaiChat.toEvents(openaiChat.fromView(rawView(events)), {
          timestamp: at(0),
          dropSystem: false,
        }).events;
        expect(again).toEqual(events);
      }),
      runs,
    );
  });
});

const policyArb = fc.oneof(
  fc.constant({ tool_calls: { policy: "omit" as const } }),
  fc
    .record({ request: fc.boolean(), response: fc.boolean() })
    .map((flags) => ({ tool_calls: { policy: "strip" as const, ...flags } })),
  fc.constant({ summary: { summary: "the story so far" } }),
);

describe("openai-chat under compaction", () => {
  it("stays a valid request: no empty assistant message, every tool result after its call", () => {
    fc.assert(
      fc.property(
        chatConversationArb(6),
        fc.nat(5),
        fc.nat(5),
        policyArb,
        (turns, a, b, policies) => {
          const stream: Entry[] = [
            ...streamOf(turns),
            compaction(Math.min(a, b), Math.max(a, b), 100, policies),
          ];
          const messages = openaiChat.fromView(projectedView(stream)) as AnyMessage[];
          // The request a platform sends: the view, then its next user message (a view
          // may be empty when every turn was omitted; a request's messages may not).
          expect(openaiChatMessageErrors([...messages, NEXT_QUESTION])).toEqual([]);
          // A tool message answers the assistant message right before it (tool messages between).
          let open = new Set<string>();
          for (const message of messages) {
            if (message.role === "assistant") {
              expect(message.content !== null || callIds(message).length > 0).toBe(true);
              open = new Set(callIds(message));
            } else if (message.role === "tool") {
              expect(open.has(message.tool_call_id as string)).toBe(true);
            } else {
              open = new Set();
            }
          }
        },
      ),
      runs,
    );
  });

  it("rewrites only the compacted turns' tool calls, as §15 says", () => {
    fc.assert(
      fc.property(chatConversationArb(4), fc.nat(3), (turns, t) => {
        const stream: Entry[] = [
          ...streamOf(turns),
          compaction(t, t, 100, { tool_calls: { policy: "strip", request: true, response: true } }),
        ];
        // A turn's leading results answer the turn before: they go with its policy (§5 "Tool pairs").
        const names = new Map<string, string>();
        const strip = (message: ChatMessage): ChatMessage => {
          const m = message as AnyMessage;
          if (m.role === "assistant" && m.tool_calls) {
            const calls = m.tool_calls as { id: string; function: { name: string } }[];
            for (const call of calls) names.set(call.id, call.function.name);
            return {
              ...m,
              tool_calls: calls.map((call) => ({
                ...call,
                function: { ...call.function, arguments: "{}" },
              })),
            } as ChatMessage;
          }
          if (m.role === "tool") {
            const name = names.get(m.tool_call_id as string) as string;
            return {
              role: "tool",
              tool_call_id: m.tool_call_id,
              content: `[compacted] ${name}: success`,
            } as ChatMessage;
          }
          return message;
        };
        const expected = turns.flatMap((messages, turn) => {
          const lead = leadingResults(messages);
          if (turn === t) return [...messages.slice(0, lead), ...messages.slice(lead).map(strip)];
          if (turn === t + 1)
            return [...messages.slice(0, lead).map(strip), ...messages.slice(lead)];
          return messages;
        });
        const actual = openaiChat.fromView(projectedView(stream));
        expect(normalizeChatMessages(actual)).toEqual(normalizeChatMessages(expected));
      }),
      runs,
    );
  });
});

describe("openai-chat under omit and summary compactions", () => {
  it("omits the compacted turns' calls and results, and the assistant messages left empty", () => {
    fc.assert(
      fc.property(chatConversationArb(4), fc.nat(3), (turns, t) => {
        const stream: Entry[] = [
          ...streamOf(turns),
          compaction(t, t, 100, { tool_calls: { policy: "omit" } }),
        ];
        const expected = turns.flatMap((messages, turn) => {
          const lead = leadingResults(messages);
          if (turn === t + 1) return messages.slice(lead);
          if (turn !== t) return messages;
          const omitted = messages.slice(lead).flatMap((message): ChatMessage[] => {
            const { tool_calls: _calls, ...rest } = message as AnyMessage;
            if (message.role === "tool") return [];
            if (message.role !== "assistant" || _calls === undefined) return [message];
            const content = (rest as { content?: unknown }).content;
            const hasText =
              (typeof content === "string" && content !== "") ||
              (Array.isArray(content) && content.length > 0) ||
              typeof (rest as { refusal?: unknown }).refusal === "string";
            return hasText ? [rest as ChatMessage] : [];
          });
          return [...messages.slice(0, lead), ...omitted];
        });
        const actual = openaiChat.fromView(projectedView(stream));
        expect(normalizeChatMessages(actual)).toEqual(normalizeChatMessages(expected));
      }),
      runs,
    );
  });

  it("replaces a summarized run by one user and one assistant message", () => {
    fc.assert(
      fc.property(chatConversationArb(5), fc.nat(4), fc.nat(4), (turns, a, b) => {
        const [from, to] = [Math.min(a, b), Math.max(a, b)];
        const stream: Entry[] = [
          ...streamOf(turns),
          compaction(from, to, 100, { summary: { summary: "so far" } }),
        ];
        // The run's first turn's leading results go before the summary, the next turn's with it.
        const first = turns[from] ?? [];
        const after = turns.slice(to + 1);
        const expected =
          from >= turns.length
            ? turns.flat()
            : [
                ...turns.slice(0, from).flat(),
                ...first.slice(0, leadingResults(first)),
                { role: "user", content: "[Summary of previous conversation]" } as ChatMessage,
                { role: "assistant", content: "so far" } as ChatMessage,
                ...after.flatMap((messages, k) =>
                  k === 0 ? messages.slice(leadingResults(messages)) : messages,
                ),
              ];
        const actual = openaiChat.fromView(projectedView(stream));
        expect(normalizeChatMessages(actual)).toEqual(normalizeChatMessages(expected));
      }),
      runs,
    );
  });
});

/** How many tool messages lead a turn (results for the previous turn's pending calls). */
function leadingResults(messages: readonly ChatMessage[]): number {
  const index = messages.findIndex((message) => message.role !== "tool");
  return index < 0 ? messages.length : index;
}
