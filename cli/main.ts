/**
 * `autocompact`: dispatches to a subcommand of the table in
 * `commands/index.ts` and maps failures to exit codes with a one-line reason
 * on stderr (1: bad input or a failed run, 2: bad usage).
 */
import { readFile } from "node:fs/promises";
import { ServiceError } from "../client/errors.ts";
import { InvalidInputError } from "../core/errors.ts";
import { EXIT, type Io, oneLine, UsageError, write } from "./command.ts";
import { COMMANDS, type CommandEntry, findCommand } from "./commands/index.ts";

function column(entries: readonly CommandEntry[]): string {
  const width = Math.max(...entries.map((entry) => entry.name.length)) + 2;
  return entries.map((entry) => `  ${entry.name.padEnd(width)}${entry.summary}`).join("\n");
}

/** The top-level help. */
export function topLevelHelp(): string {
  return `Usage: autocompact <command> [options]

Automatic, non-destructive compaction of LLM agent conversations (RFD D50 over
RFD 064).

Offline, on a stream file (JSON array, plain or JP's base64 form) or a provider
transcript (openai-chat, openai-responses, anthropic-messages, ai-sdk), or stdin:
${column(COMMANDS.filter((entry) => entry.group === "offline"))}

Against a running service:
${column(COMMANDS.filter((entry) => entry.group === "service"))}

Options:
  -h, --help     this help; "autocompact <command> --help" for a command's
  -V, --version  the version

Output documented as JSON is only JSON on stdout; messages go to stderr.
Exit codes: 0 ok, 1 bad input or a failed run, 2 bad usage.
`;
}

/** The package's version, set by the bundles' build (scripts/build.ts); absent when the sources run as they are. */
declare const __AUTOCOMPACT_VERSION__: string | undefined;

async function version(): Promise<string> {
  if (typeof __AUTOCOMPACT_VERSION__ === "string") return __AUTOCOMPACT_VERSION__;
  const text = await readFile(new URL("../package.json", import.meta.url), "utf8");
  return String((JSON.parse(text) as { version?: unknown }).version);
}

async function fail(io: Io, message: string, code: number): Promise<number> {
  await write(io.stderr, `autocompact: ${oneLine(message)}\n`);
  return code;
}

/** Runs the command line `argv` (without `node` and the script); resolves to the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    await write(io.stderr, topLevelHelp());
    return EXIT.usage;
  }
  if (name === "-h" || name === "--help" || (name === "help" && rest.length === 0)) {
    await write(io.stdout, topLevelHelp());
    return EXIT.ok;
  }
  if (name === "-V" || name === "--version") {
    await write(io.stdout, `${await version()}\n`);
    return EXIT.ok;
  }
  if (name === "help") return run([rest[0] as string, "--help"], io);
  if (name.startsWith("-")) {
    return fail(io, `unknown option '${name}' (see autocompact --help)`, EXIT.usage);
  }
  const entry = findCommand(name);
  if (!entry) {
    const known = COMMANDS.map((command) => command.name).join(", ");
    return fail(io, `unknown command '${name}' (commands: ${known})`, EXIT.usage);
  }
  if (!entry.load) return fail(io, `'${name}' is not available yet`, EXIT.usage);
  try {
    const { command } = await entry.load();
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      return fail(io, `${name}: ${error.message} (see autocompact ${name} --help)`, EXIT.usage);
    }
    if (error instanceof InvalidInputError || error instanceof ServiceError) {
      return fail(io, error.message, EXIT.failure);
    }
    if ((error as NodeJS.ErrnoException).code === "EPIPE") return EXIT.ok;
    if (io.env.AUTOCOMPACT_DEBUG && error instanceof Error && error.stack) {
      await write(io.stderr, `${error.stack}\n`);
    }
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return fail(io, `unexpected error: ${message}`, EXIT.failure);
  }
}

/** The real process's streams, environment and clock. */
export function nodeIo(): Io {
  // A reader that goes away (`| head`) is not an error: the write callback sees EPIPE.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    now: () => Date.now(),
  };
}
