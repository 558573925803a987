import * as http2 from "node:http2";
import { expect, it } from "vitest";
import { lazyHttp2 } from "../../infra/node/http2.ts";

it("loads node:http2 at the first read of an export or a constant, not when its constants are taken", () => {
  let loads = 0;
  const lazy = lazyHttp2(() => {
    loads++;
    return http2;
  });
  // What @smithy/node-http-handler does at its top.
  const { constants } = lazy;
  expect(loads).toBe(0);
  expect(constants.HTTP2_HEADER_PATH).toBe(":path");
  expect(loads).toBe(1);
  expect(lazy.connect).toBe(http2.connect);
  expect("HTTP2_HEADER_STATUS" in constants).toBe(true);
  expect(loads).toBe(1);
});
