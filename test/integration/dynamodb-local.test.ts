/**
 * The DynamoDB Local harness (functions/local/dynamodb-local.ts): data kept
 * across restarts on a data directory, the Java process gone after stop(),
 * and a clear error without a usable Java.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { localClientConfig, startDynamoDbLocal } from "../../functions/local/dynamodb-local.ts";
import { createTable } from "../../functions/store/dynamodb-table.ts";

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

async function tables(endpoint: string): Promise<string[]> {
  const client = new DynamoDBClient(localClientConfig(endpoint));
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    client.destroy();
  }
}

describe("startDynamoDbLocal", () => {
  it("keeps tables on a data directory across restarts and leaves no process behind", async () => {
    const dataDir = join(await tempDir(), "db");
    const first = await startDynamoDbLocal({ dataDir });
    const client = new DynamoDBClient(localClientConfig(first.endpoint));
    await createTable(client, "kept");
    client.destroy();
    const pid = first.pid as number;
    expect(alive(pid)).toBe(true);
    await first.stop();
    await first.stop();
    expect(alive(pid)).toBe(false);

    const second = await startDynamoDbLocal({ dataDir });
    try {
      expect(second.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await tables(second.endpoint)).toEqual(["kept"]);
    } finally {
      await second.stop();
    }
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
