/** `node:http` through `require` (infra/node/require.ts says why). */
import type * as Http from "node:http";
import { requireBuiltin } from "./require.ts";

const http = requireBuiltin("node:http") as typeof Http;
export default http;
export const { Agent, request } = http;
