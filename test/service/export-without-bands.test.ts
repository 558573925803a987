/**
 * A stream exported to replay (issue 31): `print --without-compactions`
 * prints the turns alone, and `simulate` says when its input already holds
 * compactions (an export with its bands is compacted already, so a replay of
 * it fires less, or not at all).
 */
import { writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bigToolTurn } from "../helpers/builders.ts";
import { NO_MODEL_LINE, offLine, runCli } from "../helpers/cli.ts";
import { scratchDir } from "../helpers/scratch.ts";
import { ALICE_KEY, harness } from "../helpers/service.ts";

let server: ReturnType<typeof serve>;
let url: string;
const h = harness();

beforeAll(async () => {
  for (const turn of [0, 1, 2]) {
    const posted = await h.request("POST", "/v1/conversations/exported/turns", {
      turn,
      events: bigToolTurn(turn, 2_000),
    });
    expect(posted.status).toBe(202);
  }
  const band = await h.request("POST", "/v1/conversations/exported/compactions", {
    spec: "t:..-2",
  });
  expect(band.status).toBe(201);
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

const print = (...args: string[]) =>
  runCli(["print", "-c", "exported", ...args, "--url", url, "--key", ALICE_KEY]);

describe("exporting a conversation to replay it", () => {
  it("prints the raw stream without its bands with --without-compactions", async () => {
    const whole = JSON.parse((await print()).stdout) as { type: string }[];
    expect(whole.filter((event) => event.type === "compaction")).toHaveLength(1);
    const turnsOnly = await print("--without-compactions");
    // What keeps the exported conversation from compacting is said on stderr; stdout is the stream.
    expect(turnsOnly).toMatchObject({ code: 0, stderr: offLine("exported") + NO_MODEL_LINE });
    expect(JSON.parse(turnsOnly.stdout)).toEqual(
      whole.filter((event) => event.type !== "compaction"),
    );
    for (const view of ["--compacted", "--text"]) {
      expect(await print(view, "--without-compactions")).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(
          "--without-compactions prints the raw stream: not with --compacted or --text",
        ),
      });
    }
    // As the README writes it: --text renders the compacted view, with or without --compacted.
    const text = await print("--compacted", "--text");
    expect(text).toMatchObject({ code: 0, stderr: offLine("exported") + NO_MODEL_LINE });
    expect(text.stdout).toBe((await print("--text")).stdout);
  });

  it("has simulate say that its input already holds compactions, and not when it holds none", async () => {
    const dir = scratchDir("autocompact-export-");
    const withBands = join(dir, "bands.json");
    const turnsOnly = join(dir, "turns.json");
    await writeFile(withBands, (await print()).stdout);
    await writeFile(turnsOnly, (await print("--without-compactions")).stdout);
    const simulate = (file: string) =>
      runCli(["simulate", file, "--context-window", "100000", "--enable"]);
    const held = await simulate(withBands);
    expect(held.code).toBe(0);
    expect(held.stderr).toBe(
      "autocompact: note: the input already holds 1 compaction; a replay keeps what it is given, so it fires less or not at all: to replay from the turns alone, export with `print --without-compactions`\n",
    );
    expect(await simulate(turnsOnly)).toMatchObject({ code: 0, stderr: "" });
  });
});
