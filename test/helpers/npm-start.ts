/**
 * The local runtime as a user starts it: `npm start` (or the launcher it
 * execs, `autocompact serve`) as a child process on a data directory of the
 * test's own, its URL read from the `autocompact.started` line, and the
 * processes left behind found by their command lines.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { ROOT } from "./cli.ts";

const BIN = new URL("../../cli/bin.mjs", import.meta.url).pathname;

/** A started runtime: its process and the URL it printed. */
export interface Served {
  readonly child: ChildProcess;
  readonly url: string;
}

/** How to start it. */
export interface ServeOptions {
  /** Through `npm start --silent --`, as a user runs it (default: the launcher itself). */
  readonly viaNpm?: boolean;
  /** Added to this process's environment (`undefined` unsets; `LOG_LEVEL` is WARN unless set). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The runtime's flags after `--data-dir DIR --port 0`. */
  readonly args?: readonly string[];
}

/** Every child started here, for {@link killServed}. */
const children: ChildProcess[] = [];

/** Kills (SIGKILL) every child {@link serve} started that is still running: a test's last cleanup. */
export function killServed(): void {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
}

/**
 * Starts `autocompact serve` on `dataDir` and a free port, and resolves once
 * it has started; rejects, with its stderr, if it exits first.
 */
export function serve(dataDir: string, options: ServeOptions = {}): Promise<Served> {
  const args = ["--data-dir", dataDir, "--port", "0", ...(options.args ?? [])];
  const [command, argv] = options.viaNpm
    ? ["npm", ["start", "--silent", "--", ...args]]
    : [process.execPath, [BIN, "serve", ...args]];
  const env = Object.fromEntries(
    Object.entries({ ...process.env, LOG_LEVEL: "WARN", ...options.env }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  const child = spawn(command, argv, {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let buffer = "";
    let errors = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split("\n")) {
        if (line.includes('"autocompact.started"')) resolve({ child, url: JSON.parse(line).url });
      }
    });
    child.once("exit", (code) =>
      reject(new Error(`serve exited (${code}) before starting: ${errors}`)),
    );
  });
}

/** The processes whose command line names `dataDir` and `what` (DynamoDB Local's Java, the service). */
export function pidsFor(dataDir: string, what: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(what) && line.includes(dataDir))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** DynamoDB Local's Java processes of `dataDir`. */
export const javaPidsFor = (dataDir: string) => pidsFor(dataDir, "DynamoDBLocal");

/** The service and DynamoDB Local processes of `dataDir`: empty once a runtime has stopped. */
export const runtimePidsFor = (dataDir: string) => [
  ...pidsFor(dataDir, "bin.mjs serve"),
  ...javaPidsFor(dataDir),
];
