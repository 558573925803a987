import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  aiSdkConversationArb,
  aiSdkTurnArb,
  normalizeAiSdkMessages as normalize,
} from "../../test/helpers/ai-sdk-arbitraries.ts";
import { compactedStreamArb, compactionArb } from "../../test/helpers/arbitraries.ts";
import { at } from "../../test/helpers/builders.ts";
import { propertyRuns } from "../../test/helpers/property.ts";
import type { Entry } from "../events.ts";
import type { AiSdkMessage } from "./ai-sdk.schema.ts";
import { aiSdk } from "./ai-sdk.ts";
import { projectedView, rawView } from "./view.ts";

const runs = propertyRuns(150);

/** The stored stream of a conversation posted turn by turn. */
function post(turns: readonly AiSdkMessage[][]): Entry[] {
  return turns.flatMap(
    (messages, t) => aiSdk.toEvents(messages, { timestamp: at(t), dropSystem: false }).events,
  );
}

/** Every tool call id of `messages`, and every id a result answers. */
function ids(messages: readonly AiSdkMessage[]) {
  const calls: string[] = [];
  const results: string[] = [];
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-call") calls.push(part.toolCallId);
      if (part.type === "tool-result") results.push(part.toolCallId);
    }
  }
  return { calls, results };
}

describe("ai-sdk properties", () => {
  it("round-trips any valid conversation through the raw and the projected view", () => {
    fc.assert(
      fc.property(aiSdkConversationArb(), (turns) => {
        const stream = post(turns);
        const expected = normalize(turns.flat());
        expect(normalize(aiSdk.fromView(rawView(stream)))).toEqual(expected);
        expect(normalize(aiSdk.fromView(projectedView(stream)))).toEqual(expected);
      }),
      runs,
    );
  });

  it("round-trips each turn through a transcript of its own", () => {
    fc.assert(
      fc.property(aiSdkConversationArb(3), (turns) => {
        const stream = post(turns);
        const again = post(
          turns.map((_, t) =>
            aiSdk.fromView([
              rawView(stream)[t] ?? { events: [], reasoningStripped: false, summary: false },
            ]),
          ),
        );
        expect(again).toEqual(stream);
      }),
      runs,
    );
  });

  it("answers results only for calls it answers, and no message without content, under any compactions", () => {
    fc.assert(
      fc.property(
        aiSdkConversationArb(6),
        fc.array(compactionArb(7), { minLength: 1, maxLength: 4 }),
        (turns, compactions) => {
          const messages = aiSdk.fromView(projectedView([...post(turns), ...compactions]));
          const { calls, results } = ids(messages);
          for (const id of results) expect(calls).toContain(id);
          for (const message of messages) expect(message.content.length).toBeGreaterThan(0);
        },
      ),
      runs,
    );
  });

  it("answers messages its own toEvents takes back, for streams posted as JP events too", () => {
    fc.assert(
      fc.property(compactedStreamArb(), (stream) => {
        for (const turn of projectedView(stream)) {
          const messages = aiSdk.fromView([turn]);
          // A JP turn may hold only orphan results or nothing at all: those are not a posted turn.
          const { calls, results } = ids(messages);
          if (messages.length === 0 || results.some((id) => !calls.includes(id))) continue;
          if (new Set(calls).size !== calls.length) continue;
          expect(() =>
            aiSdk.toEvents(messages, { timestamp: at(0), dropSystem: false }),
          ).not.toThrow();
        }
      }),
      runs,
    );
  });

  it("converts one turn to events that start with turn_start and share the timestamp", () => {
    fc.assert(
      fc.property(aiSdkTurnArb(0), (messages) => {
        const { events, droppedSystem } = aiSdk.toEvents(messages, {
          timestamp: at(7),
          dropSystem: true,
        });
        expect(droppedSystem).toBe(0);
        expect(events[0]).toEqual({ type: "turn_start", timestamp: at(7) });
        expect(events.every((event) => event.timestamp === at(7))).toBe(true);
        expect(events.filter((event) => event.type === "turn_start")).toHaveLength(1);
      }),
      runs,
    );
  });
});
