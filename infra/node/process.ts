/** `node:process` through `require` (infra/node/require.ts says why). */
import { requireBuiltin } from "./require.ts";

const proc = requireBuiltin("node:process") as NodeJS.Process;
export default proc;
export const { env, versions } = proc;
