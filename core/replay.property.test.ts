/**
 * The replay's incremental bookkeeping against the service's own evaluation
 * from scratch: at every turn, `replayPrepared` must decide what
 * `evaluateStream` decides over the stream stored so far (a property; apart
 * from core/replay.test.ts so each file stays a few seconds long).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compaction, configDelta } from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import type { AutoConfigLayer } from "./config.ts";
import { type Entry, isKnown } from "./events.ts";
import { evaluateStream, prepareStream, type ReplayedTurn, replayPrepared } from "./replay.ts";
import { formatTimestamp, timestampNanos } from "./timestamp.ts";
import { indexTurns } from "./turns.ts";

/** Moves every entry from turn `k` on by `rests[k - 1]` seconds more: the rest before turn `k`. */
function withRests(stream: readonly Entry[], rests: readonly number[]): Entry[] {
  const { turnOf } = indexTurns(stream);
  let shift = 0n;
  let turn = 0;
  return stream.map((entry, i) => {
    const t = turnOf[i] as number;
    for (; turn < t; turn++) shift += BigInt(rests[turn] ?? 0) * 1_000_000_000n;
    if (!isKnown(entry)) return entry;
    return { ...entry, timestamp: formatTimestamp(timestampNanos(entry.timestamp) + shift) };
  });
}

/** Milliseconds of a stream's last known entry (what `evaluateStream` counts the rest from). */
function lastMillis(entries: readonly Entry[]): number {
  const last = entries.findLast(isKnown);
  return last ? Number(timestampNanos(last.timestamp) / 1_000_000n) : 0;
}

describe("replayPrepared", () => {
  it("decides at every turn what evaluating the stored prefix from scratch decides (property)", async () => {
    let fired = 0;
    let idleFired = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          seed: fc.integer({ min: 1, max: 100_000 }),
          turns: fc.integer({ min: 4, max: 18 }),
          window: fc.integer({ min: 3_000, max: 30_000 }),
          when: fc.constantFrom("turn", "idle", "idle"),
          idle: fc.constantFrom(30, 300),
          hard: fc.option(fc.constantFrom(0.9, 1), { nil: undefined }),
          rests: fc.array(fc.constantFrom(0, 20, 40, 400, 400, 400), {
            minLength: 18,
            maxLength: 18,
          }),
          manual: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
          retune: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
        }),
        async ({ seed, turns, window, when, idle, hard, rests, manual, retune }) => {
          let stream = withRests(
            generateConversation({ seed, turns, crossTurnRate: 0.2, configDeltaRate: 0.1 }),
            rests,
          );
          const starts = stream.flatMap((e, i) => (i > 0 && e.type === "turn_start" ? [i] : []));
          if (manual !== undefined && starts[manual] !== undefined) {
            // A manual band stored in turn `manual`, reaching one turn past it.
            const cut = starts[manual] as number;
            const stamp = (stream[cut - 1] as Entry).timestamp;
            const band = {
              ...compaction(0, manual + 1, 0, { reasoning: "strip" }),
              timestamp: stamp,
            };
            stream = [...stream.slice(0, cut), band, ...stream.slice(cut)];
          }
          if (retune !== undefined && starts[retune] !== undefined) {
            // The stream itself changes the trigger from a turn on.
            const cut = starts[retune] as number;
            const delta = {
              ...configDelta({ conversation: { compaction: { auto: { trigger_ratio: 0.5 } } } }),
              timestamp: (stream[cut - 1] as Entry).timestamp,
            };
            stream = [...stream.slice(0, cut), delta, ...stream.slice(cut)];
          }
          const layers: AutoConfigLayer[] = [
            {
              enabled: true,
              min_turns: 2,
              when,
              idle_seconds: idle,
              ...(hard === undefined ? {} : { hard_ratio: hard }),
            },
          ];
          const model = { context_window: window };
          const seen: ReplayedTurn[] = [];
          const { entries } = await replayPrepared(prepareStream(stream), {
            layers,
            model,
            // The replay hands its live list of compactions: keep each turn's as it was.
            onTurn: (turn) => seen.push({ ...turn, compactions: [...turn.compactions] }),
          });
          const { turnOf, turnCount } = indexTurns(entries);
          expect(seen.map((s) => s.turn)).toEqual([...Array(turnCount).keys()]);
          // The rest after turn t: until the next turn's first event (none follows the last).
          const nextStart = (t: number) => {
            const first = entries.find((e, i) => turnOf[i] === t + 1 && isKnown(e));
            return first ? lastMillis([first]) : Number.POSITIVE_INFINITY;
          };
          for (const replayed of seen) {
            const t = replayed.turn;
            const own = replayed.firing?.compaction;
            // The stream as stored when turn t ends: earlier turns' bands in, its own not yet.
            const prefix = entries.filter((e, i) => (turnOf[i] as number) <= t && e !== own);
            const now = lastMillis(prefix);
            let step = await evaluateStream(prefix, { layers, model, nowMillis: now });
            const restsLongEnough = nextStart(t) - now >= idle * 1000;
            if (
              step.kind === "skip" &&
              step.decision.reason === "deferred_until_idle" &&
              restsLongEnough
            ) {
              step = await evaluateStream(prefix, { layers, model, nowMillis: now + idle * 1000 });
              if (step.kind === "fire") idleFired++;
            }
            expect(replayed.estimated_tokens).toBe(step.decision.estimated_tokens);
            expect(replayed.compactions).toEqual(
              entries.filter((e, i) => e.type === "compaction" && (turnOf[i] as number) <= t),
            );
            if (step.kind !== "fire") {
              expect(replayed.firing).toBeUndefined();
              expect(replayed.estimated_tokens_after).toBe(replayed.estimated_tokens);
              continue;
            }
            fired++;
            expect(own).toEqual(step.band.compaction);
            expect(replayed.estimated_tokens_after).toBe(step.band.estimated_tokens_after);
          }
        },
      ),
      propertyRuns(60),
    );
    // Worth something only if bands fire, some after a rest (213–277 and 4–18 in six runs at the base count).
    expect(fired).toBeGreaterThan(100);
    expect(idleFired).toBeGreaterThan(0);
  });
});
