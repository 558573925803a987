/**
 * The DynamoDB Local harness (functions/local/dynamodb-local.ts): data kept
 * across restarts on a data directory, the Java process gone after stop(),
 * and a clear error without a usable Java.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import {
  LOCAL_TABLE,
  localClientConfig,
  localDatabaseDir,
  readLocalDatabase,
  startDynamoDbLocal,
} from "../../functions/local/dynamodb-local.ts";
import { createTable } from "../../functions/store/dynamodb-table.ts";
import { runCli } from "../helpers/cli.ts";

const run = promisify(execFile);
const temporary: string[] = [];
afterAll(async () => {
  await Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "autocompact-ddb-"));
  temporary.push(dir);
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function tables(local: Parameters<typeof localClientConfig>[0]): Promise<string[]> {
  const client = new DynamoDBClient(localClientConfig(local));
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    client.destroy();
  }
}

describe("startDynamoDbLocal", () => {
  // One database for both properties: each start of Java costs seconds of CPU in the suite.
  it("keeps tables on a data directory across restarts, leaves no process behind, and keeps the database private: a stranger on the port finds nothing, every file is the owner's only", async () => {
    const dataDir = join(await tempDir(), "private");
    const first = await startDynamoDbLocal({ dataDir });
    const pid = first.pid as number;
    try {
      const client = new DynamoDBClient(localClientConfig(first));
      await createTable(client, "kept");
      client.destroy();
      expect(alive(pid)).toBe(true);
      const stranger = { accessKeyId: "local", secretAccessKey: "local" };
      expect(await tables({ endpoint: first.endpoint, credentials: stranger })).toEqual([]);
      expect(await tables(first)).toEqual(["kept"]);
      expect(readLocalDatabase(join(dataDir, ".."))).toEqual({});
      expect(first.credentials.accessKeyId).toMatch(/^AKLOCAL[0-9A-F]{20}$/);
      const modes = async (dir: string): Promise<Record<string, string>> => {
        const out: Record<string, string> = {
          [dir.slice(dataDir.length) || "."]: ((await stat(dir)).mode & 0o777).toString(8),
        };
        for (const entry of await readdir(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) Object.assign(out, await modes(path));
          else out[path.slice(dataDir.length + 1)] = ((await stat(path)).mode & 0o777).toString(8);
        }
        return out;
      };
      const all = await modes(dataDir);
      expect(Object.keys(all).length).toBeGreaterThanOrEqual(4);
      for (const [path, mode] of Object.entries(all))
        expect([path, mode]).toEqual([path, path === "." ? "700" : "600"]);
    } finally {
      await first.stop();
    }
    await first.stop();
    expect(alive(pid)).toBe(false);
    // The same credentials after a restart; a database an earlier version kept under -sharedDb is moved to them.
    const { accessKeyId } = first.credentials;
    await rename(
      join(dataDir, `${accessKeyId}_local.db`),
      join(dataDir, "shared-local-instance.db"),
    );
    await chmod(dataDir, 0o755);
    const second = await startDynamoDbLocal({ dataDir });
    try {
      expect(second.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(second.credentials).toEqual(first.credentials);
      expect(await tables(second)).toEqual(["kept"]);
      expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe("700");
    } finally {
      await second.stop();
    }
  });

  it("`autocompact tenant --data-dir` finds the local runtime's table, credentials and endpoint", async () => {
    const dataDir = await tempDir();
    const cli = (...args: string[]) => runCli(args);
    expect(await cli("tenant", "create", "--data-dir", dataDir, "--id", "acme")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`no local database under ${dataDir}`),
    });
    const local = await startDynamoDbLocal({ dataDir: localDatabaseDir(dataDir) });
    try {
      const client = new DynamoDBClient(localClientConfig(local));
      await createTable(client, LOCAL_TABLE);
      client.destroy();
      const created = await cli("tenant", "create", "--data-dir", dataDir, "--id", "acme");
      expect(JSON.parse(created.stdout)).toMatchObject({ tenant: "acme" });
    } finally {
      await local.stop();
    }
    expect(await cli("tenant", "add-key", "--data-dir", dataDir, "--id", "acme")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("is not running"),
    });
  });

  it.each([
    ["missing", undefined],
    ["too old", "echo 'java version \"1.8.0_292\"' >&2"],
  ])("throws SetupError when java is %s", async (_case, script) => {
    const bin = await tempDir();
    if (script !== undefined) {
      await writeFile(join(bin, "java"), `#!/bin/sh\n${script}\n`);
      await chmod(join(bin, "java"), 0o755);
    }
    const program = `
      import { startDynamoDbLocal } from "./functions/local/dynamodb-local.ts";
      try { await startDynamoDbLocal(); console.log("started"); }
      catch (error) { console.log(JSON.stringify({ name: error.name, message: error.message })); }
    `;
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", program],
      { env: { ...process.env, PATH: bin }, cwd: process.cwd() },
    );
    const result = JSON.parse(stdout.trim());
    expect(result.name).toBe("SetupError");
    expect(result.message).toMatch(/^DynamoDB Local needs Java 17 or newer: install a JRE/);
    if (script !== undefined) expect(result.message).toContain("1.8.0_292");
  });
});
