/** fast-check arbitraries for streams and compactions (property tests). */
import fc from "fast-check";
import type { Compaction, Entry } from "../../core/events.ts";
import { at } from "./builders.ts";

const textArb = fc.string({
  unit: fc.constantFrom("a", "b", " ", "é", "日", "🚀", "\n"),
  maxLength: 40,
});

/** One turn's events (tool pairs stay inside the turn, as JP writes them). */
export const turnArb = (turn: number): fc.Arbitrary<Entry[]> =>
  fc
    .record({
      implicit: fc.boolean(),
      request: textArb,
      steps: fc.array(
        fc.oneof(
          textArb.map((t) => ({ kind: "reasoning" as const, t })),
          textArb.map((t) => ({ kind: "message" as const, t })),
          fc
            .dictionary(fc.constantFrom("a", "b"), fc.jsonValue({ maxDepth: 1 }))
            .map((d) => ({ kind: "data" as const, d })),
          fc
            .record({
              name: fc.constantFrom("fs_read", "grep", "ütil"),
              args: fc.dictionary(fc.constantFrom("path", "q"), textArb),
              out: textArb,
              err: fc.boolean(),
            })
            .map((c) => ({ kind: "tool" as const, ...c })),
          fc.constant({ kind: "inquiry" as const }),
          fc.constant({ kind: "delta" as const }),
        ),
        { maxLength: 6 },
      ),
    })
    .map(({ implicit, request, steps }) => {
      const s = turn * 10;
      const out: Entry[] = [];
      if (!(implicit && turn === 0)) out.push({ type: "turn_start", timestamp: at(s) });
      out.push({ type: "chat_request", timestamp: at(s), content: request });
      steps.forEach((step, i) => {
        const timestamp = at(s + i / 10);
        switch (step.kind) {
          case "reasoning":
            out.push({ type: "chat_response", timestamp, reasoning: step.t });
            break;
          case "message":
            out.push({ type: "chat_response", timestamp, message: step.t });
            break;
          case "data":
            out.push({ type: "chat_response", timestamp, data: step.d });
            break;
          case "tool": {
            const id = `t${turn}_${i}`;
            out.push({
              type: "tool_call_request",
              timestamp,
              id,
              name: step.name,
              arguments: step.args,
            });
            out.push({
              type: "tool_call_response",
              timestamp,
              id,
              content: step.out,
              is_error: step.err,
            });
            break;
          }
          case "inquiry":
            out.push({
              type: "inquiry_request",
              timestamp,
              id: `q${turn}_${i}`,
              question: { text: "ok?" },
            });
            out.push({ type: "inquiry_response", timestamp, id: `q${turn}_${i}`, answer: true });
            break;
          case "delta":
            out.push({ type: "config_delta", timestamp, delta: { assistant: { name: "x" } } });
            break;
        }
      });
      return out;
    });

/** A stream of up to `maxTurns` turns. */
export const streamArb = (maxTurns = 8): fc.Arbitrary<Entry[]> =>
  fc
    .integer({ min: 0, max: maxTurns })
    .chain((n) =>
      n === 0
        ? fc.constant([] as Entry[][])
        : fc.tuple(...Array.from({ length: n }, (_, t) => turnArb(t))),
    )
    .map((turns) => turns.flat());

/** A compaction with any policy mix; ranges may reach past the stream's end. */
export const compactionArb = (maxTurn = 10): fc.Arbitrary<Compaction> =>
  fc
    .record({
      from: fc.integer({ min: 0, max: maxTurn }),
      length: fc.integer({ min: 0, max: maxTurn }),
      seconds: fc.integer({ min: 0, max: 5 }),
      summary: fc.option(textArb, { nil: undefined }),
      reasoning: fc.option(fc.constant("strip" as const), { nil: undefined }),
      tool_calls: fc.option(
        fc.oneof(
          fc.constant({ policy: "omit" as const }),
          fc.record({
            policy: fc.constant("strip" as const),
            request: fc.boolean(),
            response: fc.boolean(),
          }),
        ),
        { nil: undefined },
      ),
      source: fc.constantFrom("manual" as const, "auto" as const),
    })
    .map(({ from, length, seconds, summary, reasoning, tool_calls, source }) => {
      const c: Compaction = {
        type: "compaction",
        timestamp: at(100_000 + seconds),
        from_turn: from,
        to_turn: from + length,
        source,
      };
      if (summary !== undefined) c.summary = { summary };
      if (reasoning) c.reasoning = reasoning;
      if (tool_calls) c.tool_calls = tool_calls;
      return c;
    });

/** A stream with compactions interleaved at arbitrary positions. */
export const compactedStreamArb = (maxTurns = 8, maxCompactions = 4): fc.Arbitrary<Entry[]> =>
  fc
    .tuple(
      streamArb(maxTurns),
      fc.array(fc.tuple(compactionArb(maxTurns + 2), fc.nat()), { maxLength: maxCompactions }),
    )
    .map(([stream, placed]) => {
      const out = stream.slice();
      for (const [c, pos] of placed)
        out.splice(out.length === 0 ? 0 : pos % (out.length + 1), 0, c);
      return out;
    });
