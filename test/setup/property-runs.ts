/**
 * Vitest setup file: properties that state no run count run fast-check's
 * default under the same scale as the others (test/helpers/property.ts).
 */
import fc from "fast-check";
import { defaultRunCount } from "../helpers/property.ts";

fc.configureGlobal({ numRuns: defaultRunCount() });
