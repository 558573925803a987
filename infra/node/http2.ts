/**
 * `node:http2`, required on first use (infra/node/require.ts says why): only
 * the SDK's HTTP/2 handler (event streams) uses it, and loading it costs
 * about 20 ms even through `require`.
 */
import type * as Http2 from "node:http2";
import { requireBuiltin } from "./require.ts";

let loaded: typeof Http2 | undefined;
const load = (): typeof Http2 => {
  loaded ??= requireBuiltin("node:http2") as typeof Http2;
  return loaded;
};

export default new Proxy({} as typeof Http2, {
  get: (_target, key) => Reflect.get(load(), key),
  has: (_target, key) => Reflect.has(load(), key),
});
