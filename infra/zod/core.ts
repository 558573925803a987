/** `zod/v4/core` with English as its only locale (infra/zod/index.ts says why). */
export * from "../../node_modules/zod/v4/core/index.js";

import en from "../../node_modules/zod/v4/locales/en.js";

/** zod's locales, English alone (`z.config(z.locales.en())` still works). */
export const locales = Object.freeze({ en });
