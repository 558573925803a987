/** `autocompact estimate`: the D50 size estimate of a stream's projected view. */
import { estimateStream } from "../../core/estimate.ts";
import { defineCommand, EXIT, write } from "../command.ts";
import { FORMAT_OPTION, INPUT_HELP, loadStream } from "../input.ts";

const OPTIONS = { ...FORMAT_OPTION } as const;

const USAGE = `Usage: autocompact estimate [FILE] [--format …]

Prints the size estimate of the stream's projected view (existing compactions
applied) as JSON on stdout:
  {"chars": N, "estimated_tokens": N, "turn_count": N}
chars counts provider-visible content as UTF-8 bytes; estimated_tokens = chars / 4
(not rounded).

${INPUT_HELP}

Exit codes: 0 ok, 1 bad input, 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const entries = await loadStream(positionals, values, io);
  const { chars, estimated_tokens, turn_count } = estimateStream(entries);
  await write(io.stdout, `${JSON.stringify({ chars, estimated_tokens, turn_count }, null, 2)}\n`);
  return EXIT.ok;
});
