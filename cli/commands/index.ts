/**
 * The table of `autocompact` subcommands: one row per command, in help order.
 * A command lives in `cli/commands/<name>.ts` and exports `command`
 * ({@link Command}); it is loaded only when run, so the offline commands never
 * load the service's dependencies. A row without `load` is listed in the help
 * and answers "not available yet" (exit 2).
 */
import type { Command } from "../command.ts";

/** One row of the table. */
export interface CommandEntry {
  readonly name: string;
  /** The group it is listed under in the top-level help. */
  readonly group: "offline" | "service";
  /** One line for the top-level help. */
  readonly summary: string;
  readonly load?: () => Promise<{ readonly command: Command }>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "project",
    group: "offline",
    summary: "print the projected (compacted) view as JSON, or --text for people",
    load: () => import("./project.ts"),
  },
  {
    name: "convert",
    group: "offline",
    summary: "convert a stream or provider transcript to JP events or a provider format (--to)",
    load: () => import("./convert.ts"),
  },
  {
    name: "estimate",
    group: "offline",
    summary: 'print {"chars","estimated_tokens","turn_count"} of the projected view',
    load: () => import("./estimate.ts"),
  },
  {
    name: "evaluate",
    group: "offline",
    summary: "print the automatic compaction decision after the last turn",
    load: () => import("./evaluate.ts"),
  },
  {
    name: "simulate",
    group: "offline",
    summary: "replay the stream turn by turn with automatic compaction; one line per firing",
    load: () => import("./simulate.ts"),
  },
  {
    name: "tune",
    group: "offline",
    summary: "replay conversations under a grid of configurations; rank cost, peak and overflow",
    load: () => import("./tune.ts"),
  },
  {
    name: "serve",
    group: "service",
    summary: "run the whole service on this machine (DynamoDB Local, API, compactor)",
    load: () => import("./serve.ts"),
  },
  {
    name: "replay",
    group: "service",
    summary: "post a stream's turns to a running service (--url, --key)",
    load: () => import("./replay.ts"),
  },
  {
    name: "print",
    group: "service",
    summary: "print a conversation of a running service [--compacted]",
    load: () => import("./print.ts"),
  },
  {
    name: "reset",
    group: "service",
    summary: "remove a conversation's compactions on a running service [--source auto]",
    load: () => import("./reset.ts"),
  },
  {
    name: "verify",
    group: "service",
    summary: "recompute a conversation's head counters and report drift [--repair]",
    load: () => import("./verify.ts"),
  },
  {
    name: "dlq",
    group: "service",
    summary: "list the dead letters with their last failure, or redrive them (dlq list|redrive)",
    load: () => import("./dlq.ts"),
  },
  {
    name: "tenant",
    group: "service",
    summary: "create a tenant and an API key in a deployed table (tenant create|add-key)",
    load: () => import("./tenant.ts"),
  },
];

/** Finds a command by name. */
export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((entry) => entry.name === name);
}
