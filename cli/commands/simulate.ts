/** `autocompact simulate`: replays a stream turn by turn with automatic compaction. */
import { writeFile } from "node:fs/promises";
import { resolveContextWindow } from "../../core/catalog.ts";
import { configForStream, SummarizerRequiredError, simulateStream } from "../../core/evaluate.ts";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  InputError,
  parseCommandArgs,
  printHelp,
  UsageError,
  write,
} from "../command.ts";
import { FORMAT_OPTION, INPUT_HELP, loadStream } from "../input.ts";
import {
  CONFIG_HELP,
  CONFIG_OPTIONS,
  configLayers,
  DISABLED_NOTE,
  MODEL_HELP,
  MODEL_OPTIONS,
  modelInfo,
} from "../options.ts";

const OPTIONS = {
  ...HELP_OPTION,
  ...FORMAT_OPTION,
  ...CONFIG_OPTIONS,
  ...MODEL_OPTIONS,
  out: { type: "string" },
} as const;

const USAGE = `Usage: autocompact simulate [FILE] --context-window N [--model ID]
                           [--config F]... [--enable] [--out F] [--format …]

Replays the stream turn by turn, evaluating automatic compaction at every turn
boundary as the compactor would and inserting each band right after the turn
that fired it. Prints one JSON line (JSON Lines) on stdout per firing:
  {"turn", "from_turn", "to_turn", "estimated_tokens", "estimated_tokens_after",
   "threshold", "context_window"}
turn is the last turn when it fired (0-based); the band covers turns
from_turn..to_turn. Nothing is printed when nothing fires. Band timestamps
derive from the stream, so the result is deterministic.

  --out F                write the final stream (the input with the bands
                         inserted, plain form) to F as a pretty JSON array
${MODEL_HELP}
                         (one of the two is required)

${CONFIG_HELP}

A rule with a summary block cannot be simulated offline yet: the summary is
never faked, so such a run stops with exit 1 when it first fires.

${INPUT_HELP}

Example:
  autocompact simulate events.json --context-window 32000 --enable --out compacted.json

Exit codes: 0 ok, 1 bad input or config (or a summary rule fired), 2 bad usage.`;

export const command: Command = {
  usage: USAGE,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS);
    if (values.help) return printHelp(io, USAGE);
    const model = modelInfo(values);
    const contextWindow = resolveContextWindow(model);
    if (contextWindow === undefined) {
      throw new UsageError(
        values.model === undefined
          ? "--context-window N is required (or a catalogued --model)"
          : `the context window of model "${values.model}" is unknown: give --context-window N`,
      );
    }
    if (values.out === "") throw new UsageError("--out needs a file path");
    const layers = await configLayers(values);
    const entries = await loadStream(positionals, values.format, io);
    let simulation: Awaited<ReturnType<typeof simulateStream>>;
    try {
      simulation = await simulateStream(entries, {
        layers,
        model: { context_window: contextWindow },
      });
    } catch (error) {
      if (error instanceof SummarizerRequiredError) throw new InputError(error.message);
      throw error;
    }
    if (values.out !== undefined) {
      try {
        await writeFile(values.out, `${JSON.stringify(simulation.entries, null, 2)}\n`);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new InputError(`cannot write ${values.out}: ${reason}`, { cause: error });
      }
    }
    const lines = simulation.firings.map((firing) =>
      JSON.stringify({
        turn: firing.turn,
        from_turn: firing.from_turn,
        to_turn: firing.to_turn,
        estimated_tokens: firing.estimated_tokens,
        estimated_tokens_after: firing.estimated_tokens_after,
        threshold: firing.threshold,
        context_window: contextWindow,
      }),
    );
    if (lines.length > 0) await write(io.stdout, `${lines.join("\n")}\n`);
    if (simulation.firings.length === 0 && !configForStream(entries, layers).enabled) {
      await write(io.stderr, `autocompact: note: ${DISABLED_NOTE}\n`);
    }
    return EXIT.ok;
  },
};
