/**
 * `node:http2`, required on first use (infra/node/require.ts says why): only
 * the SDK's HTTP/2 handler (event streams) uses it, and loading it costs
 * about 12 ms of CPU on Node 24 even through `require`. Its `constants` are
 * lazy too: the handler's module takes them at its top
 * (`const { constants } = http2`), which loaded the module at every cold
 * start, and reads them only when it sends.
 */
import type * as Http2 from "node:http2";
import { requireBuiltin } from "./require.ts";

/** `node:http2` as `load` gives it, loaded at the first read of one of its exports or constants. */
export function lazyHttp2(load: () => typeof Http2): typeof Http2 {
  let loaded: typeof Http2 | undefined;
  const http2 = () => {
    loaded ??= load();
    return loaded;
  };
  const constants = new Proxy({} as typeof Http2.constants, {
    get: (_target, key) => Reflect.get(http2().constants, key),
    has: (_target, key) => Reflect.has(http2().constants, key),
  });
  return new Proxy({} as typeof Http2, {
    get: (_target, key) => (key === "constants" ? constants : Reflect.get(http2(), key)),
    has: (_target, key) => Reflect.has(http2(), key),
  });
}

export default lazyHttp2(() => requireBuiltin("node:http2") as typeof Http2);
