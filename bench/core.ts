/**
 * Benchmarks of the pure core: projection + estimate of a ~2 MB stream against
 * `JSON.parse` of the same text (target: at most 2×), and the estimate from
 * per-turn sizes. Prints JSON lines.
 */
import { performance } from "node:perf_hooks";
import { estimateView } from "../core/estimate.ts";
import type { Entry } from "../core/events.ts";
import { compactionsOf, project } from "../core/projection.ts";
import { measureStream, projectedCharsFromSizes } from "../core/sizes.ts";
import { compaction } from "../test/helpers/builders.ts";
import { generateConversation } from "../test/helpers/conversation.ts";

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function time(runs: number, fn: () => unknown): number {
  for (let i = 0; i < 3; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** A generated stream of about `bytes` of JSON, with bands over its first half. */
function streamOfSize(bytes: number): { entries: Entry[]; text: string } {
  let turns = 20;
  for (;;) {
    const entries = generateConversation({ seed: 2026, turns });
    const half = Math.floor(turns / 2);
    entries.push(
      compaction(1, half, 1e9, {
        reasoning: "strip",
        tool_calls: { policy: "strip", request: true, response: true },
      }),
      compaction(2, 4, 1e9 + 1, {
        summary: { summary: "Set up the project and fixed the build." },
      }),
    );
    const text = JSON.stringify(entries);
    if (text.length >= bytes) return { entries: JSON.parse(text), text };
    turns = Math.ceil(turns * (bytes / text.length) * 1.05);
  }
}

export function benchCore(): Record<string, unknown>[] {
  const { entries, text } = streamOfSize(2 * 1024 * 1024);
  const parse = time(30, () => JSON.parse(text));
  const projectEstimate = time(30, () => estimateView(project(entries).entries));
  const sizes = measureStream(entries);
  const compactions = compactionsOf(entries);
  const fromSizes = time(200, () => projectedCharsFromSizes(sizes, compactions));
  return [
    {
      bench: "core.projection_estimate_2mb",
      bytes: text.length,
      entries: entries.length,
      json_parse_ms: Number(parse.toFixed(2)),
      project_and_estimate_ms: Number(projectEstimate.toFixed(2)),
      ratio_to_json_parse: Number((projectEstimate / parse).toFixed(2)),
      target_ratio: 2,
    },
    {
      bench: "core.estimate_from_turn_sizes",
      turns: sizes.length,
      ms: Number(fromSizes.toFixed(4)),
    },
  ];
}
