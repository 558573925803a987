/**
 * The `autocompact` command in tests. {@link runCli} calls `run(argv, io)` of
 * cli/main.ts in this process, with in-memory streams: no tsx start per case.
 * It stands in for the launcher (cli/bin.mjs) as its child process looked to
 * the tests that spawned it: stdin a pipe (no TTY) holding `stdin`, stdout
 * and stderr pipes (no TTY, so no colour), the launcher's environment, and
 * the exit code `run` resolves to, which the launcher only copies to
 * `process.exitCode`. What only the real process does (the launcher itself,
 * exit codes as the OS sees them, a reader that goes away) is tested through
 * {@link runBin}, in cli/bin.test.ts.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Io } from "../../cli/command.ts";
import { run } from "../../cli/main.ts";
import { NO_MODEL_WARNING, offWarning } from "./warnings.ts";

/** The repository root, where the spawned tests ran the command. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The launcher the package's `bin` names. */
export const BIN = resolve(ROOT, "cli", "bin.mjs");

/** What a run of the command leaves: its exit code and everything it printed. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** How to run the command. */
export interface CliOptions {
  /** What stdin holds; it ends after it (empty by default). */
  readonly stdin?: string | Buffer;
  /** Added to this process's environment and the defaults below (`undefined` unsets). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The working directory; relative paths in the arguments resolve against it. */
  readonly cwd?: string;
}

/** The launcher's environment: this process's, with what the spawned tests and bin.mjs added. */
function environment(env: CliOptions["env"] = {}): Record<string, string | undefined> {
  return {
    ...process.env,
    NO_COLOR: "1",
    // bin.mjs sets it (`??=`) before anything loads the AWS SDK.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED:
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ?? "true",
    ...env,
  };
}

/** A pipe end that keeps what is written (a write is taken at once, as a pipe's reader would). */
function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, encoding, callback) {
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk);
      callback();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}

/**
 * Runs `autocompact …args` in this process; resolves to its exit code and output.
 * The process's working directory is shared by every test of a worker and
 * cannot change here: a `cwd` other than the current one is refused (pass
 * absolute paths, or use {@link runBin}).
 */
export async function runCli(
  args: readonly string[],
  options: CliOptions = {},
): Promise<CliResult> {
  if (options.cwd !== undefined && resolve(options.cwd) !== process.cwd()) {
    throw new Error(`runCli runs in ${process.cwd()}, not ${options.cwd}: use runBin`);
  }
  const stdout = collector();
  const stderr = collector();
  const io: Io = {
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: environment(options.env),
    now: () => Date.now(),
  };
  const code = await run(args, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * The stdout of `autocompact …args` run in this process, which must exit 0
 * (as `promisify(execFile)` of the launcher resolves); otherwise it throws
 * with the exit code and stderr.
 */
export async function cliStdout(
  args: readonly string[],
  options: CliOptions = {},
): Promise<string> {
  const result = await runCli(args, options);
  if (result.code !== 0) {
    throw new Error(`autocompact ${args[0] ?? ""} exited ${result.code}: ${result.stderr}`);
  }
  return result.stdout;
}

/**
 * Runs the real launcher, `node cli/bin.mjs …args`, in a child process (from
 * the repository root unless `cwd`); resolves to its exit code as the OS
 * reports it and its output. A Node start and the bundle's imports each.
 */
export function runBin(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd ?? ROOT,
        maxBuffer: 256 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: "1", ...options.env },
      },
      (error, stdout, stderr) => {
        const code = error ? (error as { code?: unknown }).code : 0;
        if (typeof code !== "number") reject(error);
        else resolvePromise({ code, stdout, stderr });
      },
    );
    child.stdin?.end(options.stdin ?? "");
  });
}

/** The stderr line of `auto_disabled` for `conversation` (a conversation with no config of its own). */
export function offLine(conversation: string): string {
  const { code, detail } = offWarning(conversation);
  return `warning: ${code}: ${detail}\n`;
}

/** The stderr line of `context_window_unknown` for a conversation whose turns name no model. */
export const NO_MODEL_LINE = `warning: ${NO_MODEL_WARNING.code}: ${NO_MODEL_WARNING.detail}\n`;
