/**
 * `autocompact serve --endpoint URL`: the service on a DynamoDB Local that is
 * already running (here the run's own, test/setup/dynamodb.ts). It starts no
 * Java of its own, keeps its data in the database the environment's key
 * selects, and on Ctrl-C stops without stopping the server it did not start.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { localClientConfig, randomCredentials } from "../../functions/local/dynamodb-local.ts";
import { BIN } from "../helpers/cli.ts";
import { localClient, localEndpoint } from "../helpers/dynamodb.ts";

const KEY = "endpoint-key";
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Starts `serve` with `args`; resolves with its "started" log line and its exit. */
function serve(args: readonly string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", ...args], {
    env: { ...process.env, ...env, AUTOCOMPACT_DEV_KEY: KEY, LOG_LEVEL: "WARN" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const started = new Promise<{ url: string; dynamodb: string }>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((text) => text.includes('"autocompact.started"'));
      if (line) resolve(JSON.parse(line));
    });
    child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${err}`)));
  });
  // A run that is meant to fail never starts: its test awaits `exited` instead.
  started.catch(() => {});
  return { child, started, exited };
}

describe("serve --endpoint", () => {
  it("runs on the given DynamoDB Local, in the database the key selects, reads MODEL_CATALOG as the Lambdas do, and leaves the database running", async () => {
    const credentials = randomCredentials();
    const { child, started, exited } = serve(["--in-memory", "--endpoint", localEndpoint()], {
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      MODEL_CATALOG: '{"acme-coder-1":64000}',
    });
    const { url, dynamodb } = await started;
    expect(dynamodb).toBe(localEndpoint());

    const posted = await fetch(`${url}/v1/conversations/c1/turns`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        turn: 0,
        model: { id: "my-model", context_window: 4000 },
        events: [
          { timestamp: "2026-12-01T00:00:00Z", type: "turn_start" },
          {
            timestamp: "2026-12-01T00:00:01Z",
            type: "chat_request",
            content: "hello",
          },
        ],
      }),
    });
    expect(posted.status).toBe(202);

    // A catalogued window for a model the turn names by id only.
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const catalogued = await fetch(`${url}/v1/conversations/c2/turns`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        turn: 0,
        model: { id: "acme/acme-coder-1" },
        events: [{ timestamp: "2026-12-01T00:00:00Z", type: "chat_request", content: "hi" }],
      }),
    });
    expect(catalogued.status).toBe(202);
    const listed = await fetch(`${url}/v1/conversations`, { headers });
    expect(await listed.json()).toMatchObject({
      conversations: expect.arrayContaining([
        expect.objectContaining({ id: "c2", context_window: 64_000 }),
      ]),
    });

    // The service's table is in the database of the key it was given, and only there.
    const own = new DynamoDBClient(localClientConfig({ endpoint: localEndpoint(), credentials }));
    expect((await own.send(new ListTablesCommand({}))).TableNames).toEqual(["autocompact"]);
    own.destroy();

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    // The server it did not start still answers.
    const other = localClient();
    await expect(other.send(new ListTablesCommand({}))).resolves.toBeDefined();
    other.destroy();
  }, 60_000);

  it("refuses a bad MODEL_CATALOG in one line naming it", async () => {
    const { exited, child } = serve(["--in-memory", "--endpoint", localEndpoint()], {
      MODEL_CATALOG: '{"m":0}',
    });
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    expect(await exited).toBe(1);
    expect(err).toBe(
      "autocompact: invalid environment: MODEL_CATALOG.m: must be at least 1 token\n",
    );
  }, 60_000);

  it("refuses an endpoint that is not a URL, with the flag's name", async () => {
    const { exited, child } = serve(["--in-memory", "--endpoint", "not a url"], {});
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    expect(await exited).toBe(2);
    expect(err).toContain('--endpoint must be a URL (got "not a url")');
  }, 60_000);
});
