/** `zod/v4/classic` (zod's `z` namespace) with English as its only locale (infra/zod/index.ts says why). */
export * from "../../node_modules/zod/v4/classic/external.js";
export * as core from "./core.ts";
export { locales } from "./core.ts";
