/**
 * The test order (test/setup/sequencer.ts): longest first by vitest's
 * recorded durations, else by durations.json, failed files first, and the
 * base sequencer's largest-first between files with no estimate.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import ExpectedDurationSequencer from "./sequencer.ts";

const ROOT = join(import.meta.dirname, "../..");
const EXPECTED = JSON.parse(
  readFileSync(join(import.meta.dirname, "durations.json"), "utf8"),
) as Record<string, number>;

/** A sequencer over `recorded` durations (ms, by `project:path`) and file sizes. */
function sequencer(
  recorded: Record<string, { duration: number; failed: boolean }>,
  sizes: Record<string, number> = {},
) {
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileTestResults: (key: string) => recorded[key],
      getFileStats: (key: string) => {
        const size = sizes[key.slice(key.indexOf(":") + 1)];
        return size === undefined ? undefined : { size };
      },
    },
  } as unknown as Vitest;
  return new ExpectedDurationSequencer(ctx);
}

const spec = (path: string) =>
  ({
    moduleId: join(ROOT, path),
    project: { name: "integration", config: { sequence: { groupOrder: 0 }, isolate: false } },
  }) as unknown as TestSpecification;

const order = async (s: ExpectedDurationSequencer, paths: string[]) =>
  (await s.sort(paths.map(spec))).map((file) => file.moduleId.slice(ROOT.length + 1));

describe("the test order", () => {
  it("runs the files durations.json names longest first when vitest has no history, the rest by size after them", async () => {
    const s = sequencer({}, { "test/a.test.ts": 10, "test/b.test.ts": 99_000 });
    expect(
      await order(s, [
        "test/a.test.ts",
        "test/reliability/compactor.test.ts",
        "test/b.test.ts",
        "test/contract/conversation-store.test.ts",
      ]),
    ).toEqual([
      "test/contract/conversation-store.test.ts",
      "test/reliability/compactor.test.ts",
      "test/b.test.ts",
      "test/a.test.ts",
    ]);
  });

  it("prefers a recorded duration to durations.json, and runs failed files first", async () => {
    const s = sequencer({
      "integration:test/contract/conversation-store.test.ts": { duration: 1_000, failed: false },
      "integration:test/e2e/replay.test.ts": { duration: 90_000, failed: false },
      "integration:test/a.test.ts": { duration: 5, failed: true },
    });
    expect(
      await order(s, [
        "test/contract/conversation-store.test.ts",
        "test/e2e/replay.test.ts",
        "test/reliability/faults.test.ts",
        "test/a.test.ts",
      ]),
    ).toEqual([
      "test/a.test.ts",
      "test/e2e/replay.test.ts",
      "test/reliability/faults.test.ts",
      "test/contract/conversation-store.test.ts",
    ]);
  });

  it("names in durations.json only test files that exist", () => {
    const missing = Object.keys(EXPECTED).filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
    expect(Object.keys(EXPECTED).length).toBeGreaterThan(0);
  });
});
