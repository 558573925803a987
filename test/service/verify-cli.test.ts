/** `autocompact verify` against a real HTTP server: clean, drifted, repaired, and its exit codes. */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { message, request } from "../helpers/builders.ts";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { DRIFTED_REPORT, storeDriftedConversation, storeWrongSizes } from "../helpers/drifted.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

let server: ReturnType<typeof serve>;
let url: string;
const h = harness();

beforeAll(async () => {
  server = await new Promise((resolve) => {
    const instance = serve({ fetch: h.app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(instance),
    );
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Runs `autocompact verify` in process against the server as alice. */
const verify = (...args: string[]): Promise<CliResult> =>
  runCli(["verify", ...args, "--url", url, "--key", ALICE_KEY]);

describe("autocompact verify", () => {
  it("exits 0 with no drift on a conversation the service wrote", async () => {
    const posted = await h.request("POST", "/v1/conversations/clean/turns", {
      turn: 0,
      events: [request("hello"), message("hi")],
    });
    expect(posted.status).toBe(202);
    const result = await verify("-c", "clean");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({ drift: [], repaired: false });
  });

  it("exits 1 on drift, 0 once --repair fixed it, and 0 with nothing left", async () => {
    await storeDriftedConversation(h.store, { tenant: "alice", conversation: "drifted" });
    const found = await verify("-c", "drifted");
    expect(found.code).toBe(1);
    expect(JSON.parse(found.stdout)).toEqual({ drift: DRIFTED_REPORT, repaired: false });

    const repaired = await verify("-c", "drifted", "--repair");
    expect(repaired).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(repaired.stdout)).toEqual({ drift: DRIFTED_REPORT, repaired: true });

    const again = await verify("-c", "drifted");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ drift: [], repaired: false });
  });

  it("exits 1 with --repair when the drift is in stored turn sizes, which it never rewrites", async () => {
    const ref = { tenant: "alice", conversation: "sizes" };
    await storeWrongSizes(h.store, ref);
    await h.store.markEvaluated(ref, 5);
    const sizes = { field: "turns[0].size.text", stored: 1, expected: 160 };
    const result = await verify("-c", "sizes", "--repair");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      drift: [{ field: "evaluated_through", stored: 5, expected: 0 }, sizes],
      repaired: true,
    });
    const again = await verify("-c", "sizes", "--repair");
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({ drift: [sizes], repaired: false });
  });

  it("exits 1 with the service's reason for an unknown conversation, 2 without -c", async () => {
    const unknown = await verify("-c", "nobody");
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toContain('404 no conversation "nobody"');
    expect((await verify()).code).toBe(2);
    const help = await verify("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: autocompact verify --conversation ID \[--repair\]/);
    expect(help.stdout).toContain("1 drift found and not\nrepaired");
  });
});
