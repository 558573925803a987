/**
 * Issue 13, "no secret readable in plain text": `npm start` on a data
 * directory, tenants and webhook secrets managed with `autocompact tenant
 * --data-dir`, signed turns posted; then every item of the table, every byte
 * of every file under the data directory, and every line the service and the
 * CLI printed is scanned for the secrets. A secret an earlier version wrote in
 * plain text is the scan's control: it is found where it was written, still
 * verifies, is reported (by tenant, not by value) and is sealed by the next
 * secrets write.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DynamoDBClient,
  paginateScan,
  type ScanCommandOutput,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import {
  LOCAL_TABLE,
  localClientConfig,
  readLocalDatabase,
} from "../../functions/local/dynamodb-local.ts";
import { signWebhook } from "../../functions/webhook-signature.ts";

const bin = new URL("../../cli/bin.mjs", import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** Every form in which a secret could be read: as given, its base64, its bytes (raw and hex). */
function forms(secret: string): Buffer[] {
  const payload = secret.slice("whsec_".length);
  const bytes = Buffer.from(payload, "base64");
  return [Buffer.from(secret), Buffer.from(payload), bytes, Buffer.from(bytes.toString("hex"))];
}
const contains = (haystack: Buffer, secret: string) =>
  forms(secret).some((form) => haystack.includes(form));

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Starts `autocompact serve` on `dataDir`, collecting everything it prints. */
function serve(dataDir: string, output: string[]) {
  const child = spawn(process.execPath, [bin, "serve", "--data-dir", dataDir, "--port", "0"], {
    env: { ...process.env, AUTOCOMPACT_DEV_KEY: "dk_secrets", LOG_LEVEL: "DEBUG" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    let buffer = "";
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stdout?.on("data", (chunk: Buffer) => {
      output.push(chunk.toString());
      buffer += chunk.toString();
      for (const line of buffer.split("\n")) {
        if (line.includes('"autocompact.started"')) resolve({ child, url: JSON.parse(line).url });
      }
    });
    child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${output.join("")}`)));
  });
}

/** Runs `autocompact tenant …` with `input` on stdin, collecting what it prints. */
function tenant(args: string[], input: string, output: string[]) {
  return new Promise<{ code: number; stdout: string }>((resolve) => {
    const child = execFile(process.execPath, [bin, "tenant", ...args], (error, stdout, stderr) => {
      output.push(stdout, stderr);
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout });
    });
    child.stdin?.end(input);
  });
}

describe("webhook secrets at rest", () => {
  it("no secret is readable in the table, the data directory or any log line", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "autocompact-secrets-"));
    const output: string[] = [];
    try {
      const { child, url } = await serve(dataDir, output);
      const first = newSecret();
      const second = newSecret();
      const legacy = newSecret();
      const base = ["--data-dir", dataDir];
      const created = await tenant(
        ["create", ...base, "--id", "acme", "--webhook-secret-stdin"],
        `${first}\n`,
        output,
      );
      expect(created.code).toBe(0);
      const acmeKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
      expect((await tenant(["add-secret", ...base, "--id", "acme"], second, output)).code).toBe(0);
      const old = await tenant(["create", ...base, "--id", "oldco"], "", output);
      const oldKey = (JSON.parse(old.stdout) as { api_key: string }).api_key;

      // An earlier version's item: the secret in plain text.
      const found = readLocalDatabase(dataDir);
      const client = new DynamoDBClient(
        localClientConfig({
          endpoint: found.endpoint as string,
          credentials: found.credentials as NonNullable<typeof found.credentials>,
        }),
      );
      await client.send(
        new UpdateItemCommand({
          TableName: LOCAL_TABLE,
          Key: marshall({ pk: "TENANT#oldco", sk: "TENANT" }),
          UpdateExpression: "SET webhook_secrets = :s",
          ExpressionAttributeValues: marshall({ ":s": [legacy] }),
        }),
      );
      const scanTable = async () => {
        const items: Record<string, unknown>[] = [];
        for await (const page of paginateScan({ client }, { TableName: LOCAL_TABLE })) {
          items.push(...((page as ScanCommandOutput).Items ?? []).map((i) => unmarshall(i)));
        }
        return items;
      };

      let conversation = 0;
      /** A first turn of a new conversation, signed with `secret` (or the given signature). */
      const post = (key: string, secret: string, signature?: string) => {
        const body = JSON.stringify({
          turn: 0,
          events: [{ type: "chat_request", timestamp: "2026-11-29T00:00:00Z", content: "hi" }],
        });
        const now = Math.floor(Date.now() / 1000);
        const id = `msg_${randomBytes(6).toString("hex")}`;
        return fetch(`${url}/v1/conversations/c-${conversation++}/turns`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "webhook-id": id,
            "webhook-timestamp": String(now),
            "webhook-signature": signature ?? signWebhook(secret, id, now, body),
          },
          body,
        });
      };
      // Sealed secrets verify (both of a rotation); a wrong signature does not.
      expect((await post(acmeKey, first)).status).toBe(202);
      expect((await post(acmeKey, second)).status).toBe(202);
      expect((await post(acmeKey, first, "v1,AAAA")).status).toBe(401);
      // The control: the plain-text secret is in the table, and still verifies.
      expect((await post(oldKey, legacy)).status).toBe(202);
      const before = Buffer.from(JSON.stringify(await scanTable()));
      expect(contains(before, legacy)).toBe(true);
      expect(contains(before, first) || contains(before, second)).toBe(false);

      // The next secrets write seals it; it still verifies.
      const next = newSecret();
      expect((await tenant(["add-secret", ...base, "--id", "oldco"], next, output)).code).toBe(0);
      expect((await post(oldKey, legacy)).status).toBe(202);
      expect((await post(oldKey, next)).status).toBe(202);
      const items = await scanTable();
      const table = Buffer.from(JSON.stringify(items));
      for (const secret of [first, second, legacy, next])
        expect(contains(table, secret)).toBe(false);
      const acme = items.find((item) => item.pk === "TENANT#acme") as {
        webhook_secrets: { key_id: string }[];
      };
      expect(acme.webhook_secrets).toHaveLength(2);
      expect(acme.webhook_secrets[0]?.key_id).toMatch(/^local:[0-9a-f]{16}$/);
      client.destroy();

      child.kill("SIGINT");
      await new Promise((resolve) => child.once("exit", resolve));

      // Every file under the data directory (the database, the key, the journal, …).
      const files = filesUnder(dataDir);
      expect(files.some((file) => file.endsWith(".db"))).toBe(true);
      const disk = files.map((file) => ({ file, bytes: readFileSync(file) }));
      // The control was written in plain text by the "earlier version": the scan sees it on disk.
      expect(disk.some(({ bytes }) => contains(bytes, legacy))).toBe(true);
      for (const secret of [first, second, next]) {
        expect(disk.filter(({ bytes }) => contains(bytes, secret)).map((d) => d.file)).toEqual([]);
      }

      // Every line the service and the CLI printed; the plain-text one reported by tenant.
      const log = Buffer.from(output.join(""));
      for (const secret of [first, second, legacy, next]) expect(contains(log, secret)).toBe(false);
      expect(output.join("")).toMatch(/"tenant\.webhook_secret_plaintext".*"tenant":"oldco"/);
      expect(output.join("")).toContain('"autocompact.started"');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
