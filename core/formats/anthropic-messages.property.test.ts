import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  anthropicConversationArb,
  anthropicTurnArb,
  normalizeAnthropicMessages as normalize,
} from "../../test/helpers/anthropic-arbitraries.ts";
import { anthropicRuleViolations } from "../../test/helpers/anthropic-rules.ts";
import {
  compactedStreamArb,
  compactionArb,
  stackedStreamArb,
} from "../../test/helpers/arbitraries.ts";
import { at } from "../../test/helpers/builders.ts";
import { propertyRuns } from "../../test/helpers/property.ts";
import type { Entry } from "../events.ts";
import type { AnthropicMessage } from "./anthropic-messages.schema.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import { projectedView, rawView } from "./view.ts";

const runs = propertyRuns(150);

/** The stored stream of a conversation posted turn by turn. */
function post(turns: readonly AnthropicMessage[][]): Entry[] {
  return turns.flatMap(
    (messages, t) =>
      anthropicMessages.toEvents(messages, { timestamp: at(t), dropSystem: false }).events,
  );
}

describe("anthropic-messages properties", () => {
  it("round-trips any valid conversation through the raw and the projected view", () => {
    fc.assert(
      fc.property(anthropicConversationArb(), (turns) => {
        const stream = post(turns);
        const expected = normalize(turns.flat());
        expect(normalize(anthropicMessages.fromView(rawView(stream)))).toEqual(expected);
        expect(normalize(anthropicMessages.fromView(projectedView(stream)))).toEqual(expected);
      }),
      runs,
    );
  });

  it("answers a body that keeps every API rule, uncompacted", () => {
    fc.assert(
      fc.property(anthropicConversationArb(), (turns) => {
        const messages = anthropicMessages.fromView(rawView(post(turns)));
        expect(anthropicRuleViolations(messages)).toEqual([]);
      }),
      runs,
    );
  });

  it("answers a body that keeps every API rule under any compactions", () => {
    fc.assert(
      fc.property(
        anthropicConversationArb(6),
        fc.array(compactionArb(7), { minLength: 1, maxLength: 4 }),
        (turns, compactions) => {
          const messages = anthropicMessages.fromView(
            projectedView([...post(turns), ...compactions]),
          );
          expect(anthropicRuleViolations(messages)).toEqual([]);
        },
      ),
      runs,
    );
  });

  it("keeps the signature of every thinking block it answers", () => {
    fc.assert(
      fc.property(
        anthropicConversationArb(6),
        fc.array(compactionArb(7), { maxLength: 3 }),
        (turns, compactions) => {
          // Signature → the thinking texts posted with it: the arbitrary may repeat a signature.
          const posted = new Map<string, string[]>();
          for (const message of turns.flat()) {
            if (typeof message.content === "string") continue;
            for (const block of message.content) {
              if (block.type === "thinking") {
                posted.set(block.signature, [
                  ...(posted.get(block.signature) ?? []),
                  block.thinking,
                ]);
              }
            }
          }
          const messages = anthropicMessages.fromView(
            projectedView([...post(turns), ...compactions]),
          );
          for (const message of messages) {
            if (typeof message.content === "string") continue;
            for (const block of message.content) {
              if (block.type === "thinking") {
                expect(posted.get(block.signature)).toContain(block.thinking);
              }
            }
          }
        },
      ),
      {
        ...runs,
        // Found by a run (seed 1680751379): two blocks of one message under the same signature.
        examples: [
          [
            [
              [
                { role: "user", content: "a" },
                {
                  role: "assistant",
                  content: [
                    { type: "thinking", thinking: "a", signature: "valueOf=" },
                    { type: "thinking", thinking: "aa", signature: "valueOf=" },
                  ],
                },
              ],
            ],
            [],
          ],
        ],
      },
    );
  });

  it("answers a valid body for streams posted as JP events too (orphans, JP's own shapes)", () => {
    fc.assert(
      fc.property(fc.oneof(stackedStreamArb(), compactedStreamArb()), (stream) => {
        const messages = anthropicMessages.fromView(projectedView(stream));
        if (messages.length === 0) return; // an empty stream: nothing to send
        // JP streams reuse call ids across turns (§5), and the body keeps them.
        const violations = anthropicRuleViolations(messages).filter(
          (violation) => !violation.includes("used twice"),
        );
        expect(violations).toEqual([]);
      }),
      runs,
    );
  });

  it("converts one turn to events that start with turn_start and share the timestamp", () => {
    fc.assert(
      fc.property(anthropicTurnArb(0), (messages) => {
        const { events, droppedSystem } = anthropicMessages.toEvents(messages, {
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
