/**
 * Vitest's sequencer, with the projects' files interleaved. The base
 * sequencer runs projects one after another ("integration" sorts before
 * "unit"), so the unit files, pure CPU, waited until the integration suites,
 * which mostly wait on DynamoDB Local, a child process or a timer, had all
 * started, and the cores idled meanwhile (docs/architecture.md §11).
 * Within each project the base order stands (failed first, then longest).
 */
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

export default class InterleavedSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const byProject = new Map<string, TestSpecification[]>();
    for (const file of sorted) {
      const name = file.project.name;
      byProject.set(name, [...(byProject.get(name) ?? []), file]);
    }
    // Each file at its relative place in its own project's order: the projects spread evenly over the run.
    const placed = [...byProject.values()].flatMap((list) =>
      list.map((file, index) => ({ file, at: (index + 0.5) / list.length })),
    );
    return placed.sort((a, b) => a.at - b.at).map(({ file }) => file);
  }
}
