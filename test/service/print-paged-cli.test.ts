/**
 * `autocompact print` of a conversation larger than one page (issue 25 item
 * 4): the CLI reads through the client, which follows `next_cursor`, so it
 * prints the whole view.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bigToolTurn } from "../helpers/builders.ts";
import { NO_MODEL_LINE, offLine, runCli } from "../helpers/cli.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

let server: ReturnType<typeof serve>;
let url: string;
const h = harness();
const gets: string[] = [];

beforeAll(async () => {
  for (const turn of [0, 1, 2]) {
    const posted = await h.request("POST", "/v1/conversations/big/turns", {
      turn,
      events: bigToolTurn(turn, 2_500_000),
    });
    expect(posted.status).toBe(202);
  }
  server = await new Promise((resolve) => {
    const instance = serve(
      {
        fetch: (request) => {
          gets.push(new URL(request.url).search);
          return h.app.fetch(request);
        },
        port: 0,
        hostname: "127.0.0.1",
      },
      () => resolve(instance),
    );
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const cli = (...args: string[]) => runCli([...args, "--url", url, "--key", ALICE_KEY]);

describe("autocompact print of a multi-page conversation", () => {
  it("prints every turn of the raw stream and of the compacted view", async () => {
    const stored = (await h.store.readTurns({ tenant: "alice", conversation: "big" })).flatMap(
      (t) => t.events,
    );
    const raw = await cli("print", "-c", "big");
    expect(raw).toMatchObject({ code: 0, stderr: offLine("big") + NO_MODEL_LINE });
    expect(JSON.parse(raw.stdout)).toEqual(stored);
    const compacted = await cli("print", "-c", "big", "--compacted");
    expect(JSON.parse(compacted.stdout).turns).toEqual([{ kept: 0 }, { kept: 1 }, { kept: 2 }]);
    expect(JSON.parse(compacted.stdout)).not.toHaveProperty("next_cursor");
    expect(compacted.stderr).toBe(offLine("big") + NO_MODEL_LINE);
    // Two pages each: the first without a cursor, the second with one; the raw print reads the
    // summary for the warnings (the third GET), the projection carries them.
    expect(gets.map((search) => search.startsWith("?cursor="))).toEqual([
      false,
      true,
      false,
      false,
      true,
    ]);
  });
});
