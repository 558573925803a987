/** fast-check arbitraries for streams and compactions (property tests). */
import fc from "fast-check";
import type { Compaction, Entry } from "../../core/events.ts";
import { at } from "./builders.ts";

const textArb = fc.string({
  unit: fc.constantFrom("a", "b", " ", "é", "日", "🚀", "\n"),
  maxLength: 40,
});

/** Call ids some turns reuse, so a later request can take over an earlier id. */
const SHARED_IDS = ["call_a", "call_b"] as const;

/**
 * One turn's events (tool pairs stay inside the turn, as JP writes them).
 * Tool calls sometimes reuse a call id of another turn; with `orphans`, a turn
 * can also hold a response whose request is missing or comes in a later turn.
 */
export const turnArb = (turn: number, { orphans = false } = {}): fc.Arbitrary<Entry[]> =>
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
              shared: fc.option(fc.constantFrom(...SHARED_IDS), { nil: undefined }),
            })
            .map((c) => ({ kind: "tool" as const, ...c })),
          ...(orphans
            ? [
                fc
                  .record({ id: fc.constantFrom(...SHARED_IDS, "gone"), out: textArb })
                  .map((o) => ({ kind: "orphan" as const, ...o })),
              ]
            : []),
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
            const id = step.shared ?? `t${turn}_${i}`;
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
          case "orphan":
            out.push({
              type: "tool_call_response",
              timestamp,
              id: step.id,
              content: step.out,
              is_error: false,
            });
            break;
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
export const streamArb = (
  maxTurns = 8,
  options: { orphans?: boolean } = {},
): fc.Arbitrary<Entry[]> =>
  fc.integer({ min: 0, max: maxTurns }).chain((n) => streamOfArb(n, options));

/** A stream of exactly `turns` turns. */
const streamOfArb = (turns: number, options: { orphans?: boolean } = {}): fc.Arbitrary<Entry[]> =>
  (turns === 0
    ? fc.constant([] as Entry[][])
    : fc.tuple(...Array.from({ length: turns }, (_, t) => turnArb(t, options)))
  ).map((list) => list.flat());

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

/**
 * Stacked compactions for the projection's winner rules: a stream of 1 to 8
 * turns (call ids reused across turns, orphan responses) with 2 to 5
 * compactions of mixed kinds over partial, overlapping ranges (some past the
 * end), from four distinct timestamps so ties are common, interleaved at
 * arbitrary stream positions.
 */
export const stackedStreamArb = (): fc.Arbitrary<Entry[]> =>
  fc.integer({ min: 1, max: 8 }).chain((turns) =>
    fc
      .tuple(
        streamOfArb(turns, { orphans: true }),
        fc.array(
          fc.tuple(
            fc.record({
              from: fc.integer({ min: 0, max: turns - 1 }),
              length: fc.integer({ min: 0, max: 3 }),
              seconds: fc.integer({ min: 0, max: 3 }),
              policies: fc.constantFrom("summary", "reasoning", "tools", "reasoning+tools", "all"),
              tool_calls: fc.oneof(
                fc.constant({ policy: "omit" as const }),
                fc.record({
                  policy: fc.constant("strip" as const),
                  request: fc.boolean(),
                  response: fc.boolean(),
                }),
              ),
              text: textArb,
            }),
            fc.nat(),
          ),
          { minLength: 2, maxLength: 5 },
        ),
      )
      .map(([stream, specs]) => {
        const out = stream.slice();
        for (const [spec, position] of specs) {
          const c: Compaction = {
            type: "compaction",
            timestamp: at(100_000 + spec.seconds),
            from_turn: spec.from,
            to_turn: spec.from + spec.length,
            source: "manual",
          };
          if (spec.policies === "summary" || spec.policies === "all")
            c.summary = { summary: spec.text };
          if (spec.policies.includes("reasoning") || spec.policies === "all") c.reasoning = "strip";
          if (spec.policies.includes("tools") || spec.policies === "all")
            c.tool_calls = spec.tool_calls;
          out.splice(position % (out.length + 1), 0, c);
        }
        return out;
      }),
  );
