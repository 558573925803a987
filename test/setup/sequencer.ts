/**
 * Vitest's sequencer, with a guess for the files it has no duration of. The
 * base sequencer runs the longest files first by their last run, recorded in
 * node_modules; a fresh clone (as CI runs) has none, so it ran the largest
 * files first, and the storage contract's file, a few lines that run the
 * suites it imports, started last: on a clean clone on 2026-12-07 the run
 * ended waiting on it alone (docs/architecture.md §11).
 *
 * A file with no recorded duration takes the seconds durations.json gives:
 * the integration files of 5 s or more, as one run on 2 cores took them
 * (node_modules/.vite/vitest/…/results.json). Only the order depends on it.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

const EXPECTED_SECONDS = JSON.parse(
  readFileSync(new URL("./durations.json", import.meta.url), "utf8"),
) as Record<string, number>;

export default class ExpectedDurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const estimate = new Map(
      files.map((file) => {
        const path = relative(root, file.moduleId);
        const recorded = this.ctx.cache.getFileTestResults(`${file.project.name}:${path}`);
        return [
          file,
          recorded
            ? { failed: recorded.failed, ms: recorded.duration }
            : { failed: false, ms: (EXPECTED_SECONDS[path] ?? 0) * 1000 },
        ] as const;
      }),
    );
    // The base order stands between equals (its largest-first for files without any estimate).
    return (await super.sort(files)).sort((a, b) => {
      const x = estimate.get(a);
      const y = estimate.get(b);
      if (!x || !y) return 0;
      if (x.failed !== y.failed) return x.failed ? -1 : 1;
      return y.ms - x.ms;
    });
  }
}
