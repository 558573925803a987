/**
 * Property-test run counts, from one setting. Each property states its base
 * count, sized so `npm test` stays within its time target while core's
 * mutation score holds; `AUTOCOMPACT_PROPERTY_SCALE` multiplies every count
 * at once (a longer search: `AUTOCOMPACT_PROPERTY_SCALE=20 npm run test:unit`).
 * Properties that state no count run fast-check's default, scaled the same
 * way by test/setup/property-runs.ts.
 */

const DEFAULT_RUNS = 100;

function scale(): number {
  const raw = process.env.AUTOCOMPACT_PROPERTY_SCALE;
  if (raw === undefined || raw === "") return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`AUTOCOMPACT_PROPERTY_SCALE must be a positive number, got "${raw}"`);
  }
  return value;
}

/** The run count of a property whose base count is `base`, under the run's scale. */
function runCount(base: number): number {
  return Math.max(1, Math.round(base * scale()));
}

/** fast-check parameters for a property of base count `base` (and a fixed `seed`, where the test needs one). */
export function propertyRuns(base: number, seed?: number): { numRuns: number; seed?: number } {
  return seed === undefined ? { numRuns: runCount(base) } : { numRuns: runCount(base), seed };
}

/** The scaled count of properties that state none. */
export function defaultRunCount(): number {
  return runCount(DEFAULT_RUNS);
}
