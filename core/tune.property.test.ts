/**
 * tuneConversation's cache accounting against a brute-force recount: every
 * view projected from scratch (a property; apart from core/tune.test.ts so
 * each file stays a few seconds long).
 */
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compaction } from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import { estimateView } from "./estimate.ts";
import type { Entry } from "./events.ts";
import { project } from "./projection.ts";
import { prepareStream, simulateStream } from "./replay.ts";
import { standInSummary, tuneConversation } from "./tune.ts";
import { configLayer, expandGrid, parseGrid, type TuneConfig } from "./tune-grid.ts";
import { indexTurns } from "./turns.ts";

/** Each entry's JSON, once: the projections hand back the same entry objects turn after turn. */
const jsonOf = new WeakMap<Entry, unknown>();

/** JSON values as a provider would receive them (keys holding undefined vanish). */
function asJson(entry: Entry): unknown {
  if (!jsonOf.has(entry)) jsonOf.set(entry, JSON.parse(JSON.stringify(entry)));
  return jsonOf.get(entry);
}

/**
 * The metrics recounted naively from `simulateStream`'s output: every view
 * projected from scratch and compared entry by entry with the one before.
 */
async function bruteForce(stream: Entry[], config: TuneConfig, window: number) {
  const { entries } = await simulateStream(stream, {
    layers: [configLayer(config)],
    model: { context_window: window },
    summarize: standInSummary,
  });
  const { turnOf, turnCount } = indexTurns(entries);
  const views: Entry[][] = [];
  const sent: unknown[][] = [];
  for (let t = 0; t < turnCount; t++) {
    const view = project(entries.filter((_, i) => (turnOf[i] as number) <= t)).entries;
    views.push(view);
    sent.push(view.map(asJson));
  }
  let input = 0;
  let miss = 0;
  for (let t = 0; t < turnCount - 1; t++) {
    const view = views[t] as Entry[];
    const json = sent[t] as unknown[];
    const previous = sent[t - 1] ?? [];
    let shared = 0;
    while (
      shared < json.length &&
      shared < previous.length &&
      isDeepStrictEqual(json[shared], previous[shared])
    ) {
      shared++;
    }
    const total = estimateView(view).estimated_tokens;
    input += total;
    miss += total - estimateView(view.slice(0, shared)).estimated_tokens;
  }
  return { input, miss };
}

describe("tuneConversation", () => {
  it("counts cache misses exactly as a brute-force recount over the projected views (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 6, max: 30 }),
        fc.integer({ min: 2_000, max: 40_000 }),
        fc.constantFrom(...expandGrid(parseGrid(["summary=off,on"]))),
        fc.boolean(),
        async (seed, turns, window, config, manual) => {
          let stream = generateConversation({ seed, turns });
          if (manual) {
            // A manual band in the stream, reaching past the turn it is stored in: the general path.
            const cut = stream.findIndex((e, i) => i > 0 && e.type === "turn_start");
            stream = [
              ...stream.slice(0, cut),
              compaction(0, 3, 0, { reasoning: "strip" }),
              ...stream.slice(cut),
            ];
          }
          const metrics = await tuneConversation(prepareStream(stream), config, {
            contextWindow: window,
            summarize: standInSummary,
          });
          const expected = await bruteForce(stream, config, window);
          expect(metrics.input_tokens).toBe(expected.input);
          expect(metrics.cache_miss_tokens).toBe(expected.miss);
        },
      ),
      propertyRuns(50),
    );
  });
});
