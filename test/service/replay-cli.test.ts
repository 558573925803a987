/** `autocompact replay` against a real HTTP server: signing, idempotent re-runs, and --wait giving up. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../functions/keys.ts";
import { NO_MODEL_LINE, offLine, runCli } from "../helpers/cli.ts";
import { generateConversation } from "../helpers/conversation.ts";
import { harness } from "../helpers/service.ts";

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

/** Runs the CLI in process against the server as tenant "signed". */
const cli = (...args: string[]) => runCli([...args, "--url", url, "--key", "ak_signed"]);
const replay = (...extra: string[]) => cli("replay", file, "-c", "c1", ...extra);

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

describe("autocompact print and reset", () => {
  it("prints the raw stream, the compacted view and its text, then resets the manual band", async () => {
    const stream = JSON.parse(JSON.stringify(generateConversation({ seed: 9, turns: 4 })));
    await cli("replay", file, "-c", "c2", "--webhook-secret", SECRET);
    const added = await fetch(`${url}/v1/conversations/c2/compactions`, {
      method: "POST",
      headers: { authorization: "Bearer ak_signed", "content-type": "application/json" },
      body: JSON.stringify({ spec: "r:0..1" }),
    });
    expect(added.status).toBe(201);
    const band = await added.json();

    const raw = await cli("print", "-c", "c2");
    expect(raw).toMatchObject({ stderr: offLine("c2") + NO_MODEL_LINE });
    expect(JSON.parse(raw.stdout)).toEqual([
      ...stream,
      expect.objectContaining({ type: "compaction" }),
    ]);
    expect(JSON.parse(raw.stdout).at(-1)).toMatchObject({
      type: "compaction",
      source: "manual",
      from_turn: 0,
      to_turn: 1,
      reasoning: "strip",
    });

    const compacted = await cli("print", "-c", "c2", "--compacted");
    const projection = await (
      await fetch(`${url}/v1/conversations/c2/projection`, {
        headers: { authorization: "Bearer ak_signed" },
      })
    ).json();
    expect(JSON.parse(compacted.stdout)).toEqual(projection);
    expect(JSON.parse(compacted.stdout).turns).toEqual([
      { kept: 0 },
      { kept: 1 },
      { kept: 2 },
      { kept: 3 },
    ]);

    const text = await cli("print", "-c", "c2", "--text");
    expect(text.stdout).toContain("── turn 0 ── [manual: reasoning strip]");
    expect(text.stdout).toContain("── turn 1 ── [manual: reasoning strip]");
    expect(text.stdout).toMatch(/── turn 2 ──\n/);
    expect(text.stdout).toContain("1 compaction (0 auto, 1 manual)");

    const reset = await cli("reset", "-c", "c2", "--source", "manual");
    expect(reset).toMatchObject({ stderr: "" });
    expect(JSON.parse(reset.stdout)).toEqual({ removed: [band] });
    expect(JSON.parse((await cli("print", "-c", "c2")).stdout)).toEqual(stream);
  });
});
