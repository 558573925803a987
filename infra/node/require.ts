/**
 * Node.js built-ins as CommonJS `require` gives them, for the Lambda bundles
 * (infra/bundling.ts aliases `node:http`, `node:crypto`, … to the modules of
 * this folder). On Node 24 an ESM import of a built-in builds its module
 * namespace, which runs every lazy getter of its exports: `node:http`'s load
 * undici (the fetch implementation, tens of milliseconds), `node:crypto`'s
 * and `node:process`'s their own. `require` returns the object and runs none.
 * Each module here exports the names the bundles import (a name missing
 * fails the build).
 */
import { createRequire } from "node:module";

/** `require`, for the built-ins. */
export const requireBuiltin = createRequire(import.meta.url);
