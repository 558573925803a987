/** `node:util` through `require` (infra/node/require.ts says why). */
import type * as Util from "node:util";
import { requireBuiltin } from "./require.ts";

const util = requireBuiltin("node:util") as typeof Util;
export default util;
export const { promisify } = util;
