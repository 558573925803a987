/**
 * How the local runtime starts (`npm start`): it binds its port before
 * anything else, so a busy port fails at once and starts no Java, and while
 * its database comes up the port answers 503 `starting` rather than
 * refusing connections; a start that fails leaves the port free.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, randomCredentials } from "../../functions/local/dynamodb-local.ts";
import { startLocalService } from "../../functions/local/runtime.ts";

const servers: Server[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function listening(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handler);
  servers.push(server);
  return new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
}

const options = (port: number, dataDir: string) => ({
  port,
  host: "127.0.0.1",
  dataDir,
  inMemory: false,
  devKey: "start-key",
  logLevel: "CRITICAL",
});

describe("startLocalService", () => {
  it("reports a busy port without starting DynamoDB Local", async () => {
    const port = await listening((_, response) => response.end());
    const dataDir = await mkdtemp(join(tmpdir(), "autocompact-busy-"));
    dirs.push(dataDir);

    await expect(startLocalService(options(port, dataDir))).rejects.toMatchObject({
      code: "EADDRINUSE",
    });
    expect(existsSync(join(dataDir, "dynamodb"))).toBe(false);
    const java = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.includes("DynamoDBLocal") && line.includes(dataDir));
    expect(java).toEqual([]);
  });

  it("answers 503 `starting` until its database is up, and frees the port when the start fails", async () => {
    // A database that holds every request until the test lets it answer, with an error.
    const held: ServerResponse[] = [];
    const endpoint = await listening((request, response) => {
      request.resume();
      held.push(response);
    });
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), "autocompact-starting-"));
    dirs.push(dataDir);
    const started = startLocalService({
      ...options(port, dataDir),
      database: { endpoint: `http://127.0.0.1:${endpoint}`, credentials: randomCredentials() },
    });
    started.catch(() => {});

    await expect.poll(() => held.length, { timeout: 20_000 }).toBeGreaterThan(0);
    const answer = await fetch(`http://127.0.0.1:${port}/v1/conversations`, {
      headers: { authorization: "Bearer start-key" },
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(await answer.json()).toEqual({
      type: "/problems/starting",
      title: "Starting",
      status: 503,
      detail: "the service is starting: retry in a second",
    });

    for (const response of held.splice(0)) {
      response.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
      response.end(
        JSON.stringify({
          __type: "com.amazon.coral.validate#ValidationException",
          message: "refused by the test",
        }),
      );
    }
    await expect(started).rejects.toThrow("refused by the test");
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});
