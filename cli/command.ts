/**
 * What every `autocompact` subcommand shares: the process streams it talks
 * to, the shape of a command module, argument parsing, and the two errors
 * that map to exit codes (1: bad input or a failed run, 2: bad usage).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type ErrorOptions, InvalidInputError } from "../core/errors.ts";

/** The `options` of `parseArgs` (node:util does not export this type by name). */
export type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** The process around a command; tests and other hosts can supply their own. */
export interface Io {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The clock, in ms since the epoch. */
  readonly now: () => number;
}

/** A subcommand: `cli/commands/<name>.ts` exports one as `command`. */
export interface Command {
  /** The full `--help` text. */
  readonly usage: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  readonly run: (argv: readonly string[], io: Io) => Promise<number>;
}

/** Exit codes of the command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * The command line is wrong (unknown flag, bad value, missing argument): exit 2.
 * Every other {@link InvalidInputError} (unreadable file, invalid JSON or
 * config, …) means the input or its processing failed: exit 1.
 */
export class UsageError extends InvalidInputError {
  override readonly name = "UsageError";
  constructor(message: string, options: ErrorOptions = {}) {
    super(message, { slug: "usage", title: "Bad usage", ...options });
  }
}

/** The `-h, --help` flag every command takes. */
const HELP_OPTION = {
  help: { type: "boolean", short: "h" },
} as const satisfies OptionsConfig;

/** Parses a command's arguments strictly; a bad flag is a {@link UsageError}. */
function parseCommandArgs<T extends OptionsConfig>(argv: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node's own hint about `--` is long and rarely the fix; keep the first sentence.
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, ""));
  }
}

type CommandLine<T extends OptionsConfig> = {
  args: string[];
  options: T & typeof HELP_OPTION;
  allowPositionals: true;
  strict: true;
};

/** The flags and positionals a command's `run` receives, parsed strictly from `options`. */
export type CommandArgs<T extends OptionsConfig> = ReturnType<typeof parseArgs<CommandLine<T>>>;

/**
 * A command that takes `options` (and `-h, --help`, which prints `usage`):
 * the arguments are parsed strictly before `run` sees them.
 */
export function defineCommand<const T extends OptionsConfig>(
  usage: string,
  options: T,
  run: (args: CommandArgs<T>, io: Io) => Promise<number>,
): Command {
  const all = { ...HELP_OPTION, ...options };
  return {
    usage,
    async run(argv, io) {
      const args = parseCommandArgs(argv, all) as CommandArgs<T>;
      if ((args.values as { help?: boolean }).help) return printHelp(io, usage);
      return run(args, io);
    },
  };
}

/** Writes text and resolves once the stream has taken it (so a large output is not cut off). */
export function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** Prints a command's help on stdout. */
async function printHelp(io: Io, usage: string): Promise<number> {
  await write(io.stdout, usage.endsWith("\n") ? usage : `${usage}\n`);
  return EXIT.ok;
}

/** Collapses a message to one line (stderr messages are one line each). */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, " ").trim();
}
