import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { at, compaction } from "../../test/helpers/builders.ts";
import {
  normalizeResponsesItems,
  responsesConversationArb,
} from "../../test/helpers/openai-responses-arbitraries.ts";
import { openaiResponsesInputErrors } from "../../test/helpers/openai-schema.ts";
import { propertyRuns } from "../../test/helpers/property.ts";
import type { Entry } from "../events.ts";
import type { ResponsesItem } from "./openai-responses.schema.ts";
import { openaiResponses } from "./openai-responses.ts";
import { projectedView, rawView } from "./view.ts";

const runs = propertyRuns(150);

/** Each turn converted at its own time, the streams concatenated. */
function streamOf(turns: readonly ResponsesItem[][]): Entry[] {
  return turns.flatMap(
    (items, t) => openaiResponses.toEvents(items, { timestamp: at(t), dropSystem: false }).events,
  );
}

type AnyItem = Record<string, unknown>;

describe("openai-responses round trips", () => {
  it("gives every posted turn back from the raw and the projected view, up to §15's normalizations", () => {
    fc.assert(
      fc.property(responsesConversationArb(), (turns) => {
        const stream = streamOf(turns);
        const expected = normalizeResponsesItems(turns.flat());
        expect(normalizeResponsesItems(openaiResponses.fromView(rawView(stream)))).toEqual(
          expected,
        );
        expect(normalizeResponsesItems(openaiResponses.fromView(projectedView(stream)))).toEqual(
          expected,
        );
      }),
      runs,
    );
  });

  it("writes an input OpenAI's published schema accepts", () => {
    fc.assert(
      fc.property(responsesConversationArb(), (turns) => {
        const input = openaiResponses.fromView(rawView(streamOf(turns)));
        expect(openaiResponsesInputErrors(input)).toEqual([]);
      }),
      propertyRuns(100),
    );
  });

  it("is a fixed point once written: converting the written items again gives the same events", () => {
    // The first write fills an output message's defaults in; from then on nothing changes.
    const rewrite = (items: unknown): Entry[] =>
      openaiResponses.toEvents(items, { timestamp: at(0), dropSystem: false }).events;
    fc.assert(
      fc.property(responsesConversationArb(1), ([turn]) => {
        const once = rewrite(openaiResponses.fromView(rawView(rewrite(turn))));
        const twice = rewrite(openaiResponses.fromView(rawView(once)));
        expect(twice).toEqual(once);
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
  fc.constant({ reasoning: "strip" as const }),
  fc.constant({
    reasoning: "strip" as const,
    tool_calls: { policy: "strip" as const, request: true, response: true },
  }),
  fc.constant({ summary: { summary: "the story so far" } }),
);

describe("openai-responses under compaction", () => {
  it("stays a valid input, every output after its call, and no item id where reasoning is stripped", () => {
    fc.assert(
      fc.property(
        responsesConversationArb(6),
        fc.nat(5),
        fc.nat(5),
        policyArb,
        (turns, a, b, policies) => {
          const [from, to] = [Math.min(a, b), Math.max(a, b)];
          const stream: Entry[] = [...streamOf(turns), compaction(from, to, 100, policies)];
          const view = projectedView(stream);
          const input = openaiResponses.fromView(view) as AnyItem[];
          expect(openaiResponsesInputErrors(input)).toEqual([]);
          const called = new Set<string>();
          for (const item of input) {
            if (item.type === "function_call") called.add(item.call_id as string);
            if (item.type === "function_call_output") {
              expect(called.has(item.call_id as string)).toBe(true);
            }
          }
          // Turn by turn: a stripped turn has no reasoning and no item id left.
          for (const turn of view) {
            const items = openaiResponses.fromView([turn]) as AnyItem[];
            if (!turn.reasoningStripped) continue;
            expect(items.filter((item) => item.type === "reasoning")).toEqual([]);
            expect(items.filter((item) => "id" in item)).toEqual([]);
          }
        },
      ),
      runs,
    );
  });

  it('rewrites only the compacted turns\' calls: arguments "{}" and outputs `[compacted] <name>: success`', () => {
    fc.assert(
      fc.property(responsesConversationArb(4), fc.nat(3), (turns, t) => {
        const stream: Entry[] = [
          ...streamOf(turns),
          compaction(t, t, 100, { tool_calls: { policy: "strip", request: true, response: true } }),
        ];
        // A turn's leading outputs answer the turn before: they go with its policy (§5 "Tool pairs").
        const names = new Map<string, string>();
        const strip = (item: ResponsesItem): ResponsesItem => {
          const i = item as AnyItem;
          if (i.type === "function_call") {
            names.set(i.call_id as string, i.name as string);
            return {
              type: "function_call",
              call_id: i.call_id as string,
              name: i.name as string,
              arguments: "{}",
            };
          }
          if (i.type === "function_call_output") {
            const name = names.get(i.call_id as string) as string;
            return {
              type: "function_call_output",
              call_id: i.call_id as string,
              output: `[compacted] ${name}: success`,
            };
          }
          return item;
        };
        const expected = turns.flatMap((items, turn) => {
          const lead = leadingOutputs(items);
          if (turn === t) return [...items.slice(0, lead), ...items.slice(lead).map(strip)];
          if (turn === t + 1) return [...items.slice(0, lead).map(strip), ...items.slice(lead)];
          return items;
        });
        const actual = openaiResponses.fromView(projectedView(stream));
        expect(normalizeResponsesItems(actual)).toEqual(normalizeResponsesItems(expected));
      }),
      runs,
    );
  });

  it("removes a stripped turn's reasoning and every item id of that turn, and nothing else", () => {
    fc.assert(
      fc.property(responsesConversationArb(4), fc.nat(3), (turns, t) => {
        const stream: Entry[] = [...streamOf(turns), compaction(t, t, 100, { reasoning: "strip" })];
        const expected = turns.flatMap((items, turn) => {
          if (turn !== t) return items;
          return items.flatMap((item): ResponsesItem[] => {
            const i = item as AnyItem;
            if (i.type === "reasoning") return [];
            if (i.role === "assistant" && typeof i.id === "string") {
              // Without its id an output message goes as the string form (its status dropped).
              const parts = i.content as { text: string }[];
              const text = parts.map((part) => part.text).join("\n");
              return [{ type: "message", role: "assistant", content: text }];
            }
            const { id: _id, ...rest } = i;
            return [rest as ResponsesItem];
          });
        });
        const actual = openaiResponses.fromView(projectedView(stream));
        expect(normalizeResponsesItems(actual)).toEqual(normalizeResponsesItems(expected));
      }),
      runs,
    );
  });
});

describe("openai-responses under omit and summary compactions", () => {
  it("omits the compacted turns' calls with their outputs", () => {
    fc.assert(
      fc.property(responsesConversationArb(4), fc.nat(3), (turns, t) => {
        const stream: Entry[] = [
          ...streamOf(turns),
          compaction(t, t, 100, { tool_calls: { policy: "omit" } }),
        ];
        const expected = turns.flatMap((items, turn) => {
          const lead = leadingOutputs(items);
          if (turn === t + 1) return items.slice(lead);
          if (turn !== t) return items;
          const omitted = items
            .slice(lead)
            .filter(
              (item) => item.type !== "function_call" && item.type !== "function_call_output",
            );
          return [...items.slice(0, lead), ...omitted];
        });
        const actual = openaiResponses.fromView(projectedView(stream));
        expect(normalizeResponsesItems(actual)).toEqual(normalizeResponsesItems(expected));
      }),
      runs,
    );
  });

  it("replaces a summarized run by one user and one assistant message", () => {
    fc.assert(
      fc.property(responsesConversationArb(5), fc.nat(4), fc.nat(4), (turns, a, b) => {
        const [from, to] = [Math.min(a, b), Math.max(a, b)];
        const stream: Entry[] = [
          ...streamOf(turns),
          compaction(from, to, 100, { summary: { summary: "so far" } }),
        ];
        // The run's first turn's leading outputs go before the summary, the next turn's with it.
        const first = turns[from] ?? [];
        const expected: ResponsesItem[] =
          from >= turns.length
            ? turns.flat()
            : [
                ...turns.slice(0, from).flat(),
                ...first.slice(0, leadingOutputs(first)),
                { role: "user", content: "[Summary of previous conversation]" },
                { role: "assistant", content: "so far" },
                ...turns
                  .slice(to + 1)
                  .flatMap((items, k) => (k === 0 ? items.slice(leadingOutputs(items)) : items)),
              ];
        const actual = openaiResponses.fromView(projectedView(stream));
        expect(normalizeResponsesItems(actual)).toEqual(normalizeResponsesItems(expected));
      }),
      runs,
    );
  });
});

/** How many function call outputs lead a turn (answers to the previous turn's pending calls). */
function leadingOutputs(items: readonly ResponsesItem[]): number {
  const index = items.findIndex((item) => item.type !== "function_call_output");
  return index < 0 ? items.length : index;
}
