/**
 * What the Lambda bundles import as `zod` (infra/bundling.ts aliases it
 * here): zod's root, less its 60-odd translations of the error messages.
 *
 * zod's root exports the namespaces `locales` and `core` (whose own
 * `locales` is the same). A module that takes the whole `z` namespace as a
 * value, as @hono/zod-openapi (`extendZodWithOpenApi(z)`) and Powertools'
 * parser helpers (`import { z } from "zod"`) do, makes esbuild keep every
 * export of it, the locales too: 257.6 KB of the api bundle. Here `locales`
 * and `core.locales` are English alone, the one zod itself registers, and
 * everything else is zod's, re-exported (a new export of zod comes through).
 * Only the bare `zod` specifier is aliased: a `zod/…` subpath import would
 * fail the build, so the bundles use none.
 *
 * Laid out as zod's root (`zod/index.js`): the namespace is
 * `./classic.ts`, re-exported and exported as `z`.
 *
 * test/cdk/bundles.suite.ts holds this module's exports to zod's.
 */
export * from "./classic.ts";

import * as z from "./classic.ts";

export { z, z as default };
