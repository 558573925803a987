/** `autocompact replay` against a real HTTP server: signing, idempotent re-runs, and --wait giving up. */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../functions/keys.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { harness } from "../helpers/service.ts";

const run = promisify(execFile);
const bin = new URL("../../cli/bin.mjs", import.meta.url).pathname;
const SECRET = `whsec_${Buffer.from("replay signing secret").toString("base64")}`;

let server: ReturnType<typeof serve>;
let url: string;
let dir: string;
let file: string;
const h = harness({
  tenants: [{ id: "signed", key_hashes: [hashApiKey("ak_signed")], webhook_secrets: [SECRET] }],
});

beforeAll(async () => {
  h.clock.now = Date.now(); // signatures carry real time
  dir = await mkdtemp(join(tmpdir(), "autocompact-replay-"));
  file = join(dir, "stream.json");
  await writeFile(file, JSON.stringify(generateConversation({ seed: 9, turns: 4 })));
  server = await new Promise((resolve) => {
    const instance = serve({ fetch: h.app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(instance),
    );
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const replay = (...extra: string[]) =>
  run(process.execPath, [
    bin,
    "replay",
    file,
    "-c",
    "c1",
    "--url",
    url,
    "--key",
    "ak_signed",
    ...extra,
  ]).catch((error: { code: number; stdout: string; stderr: string }) => error);

describe("autocompact replay", () => {
  it("signs turns for a tenant that requires it, and re-runs idempotently", async () => {
    const unsigned = await replay();
    expect(unsigned).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("requires signed turns"),
    });
    const signed = await replay("--webhook-secret", SECRET);
    expect(JSON.parse(signed.stdout)).toEqual({
      conversation: "c1",
      turns: 4,
      created: 4,
      replayed: 0,
      evaluated_through: null,
    });
    const again = await replay("--webhook-secret", SECRET);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, replayed: 4 });
  });

  it("gives up waiting with a reason when evaluations do not finish", async () => {
    const waited = await replay("--webhook-secret", SECRET, "--wait", "--wait-timeout", "1");
    expect(waited).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/evaluated through none of 3 after 1 s/),
    });
  });
});
