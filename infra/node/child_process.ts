/** `node:child_process` through `require` (infra/node/require.ts says why). */
import type * as ChildProcess from "node:child_process";
import { requireBuiltin } from "./require.ts";

const childProcess = requireBuiltin("node:child_process") as typeof ChildProcess;
export default childProcess;
export const { exec } = childProcess;
