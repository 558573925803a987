/**
 * `autocompact convert`: a stream or provider transcript in, another format
 * out, offline. Converting to a provider format and back gives the same
 * messages up to the normalizations of docs/architecture.md §15.
 */
import { streamToTranscript } from "../../core/formats/transcripts.ts";
import { defineCommand, EXIT, write } from "../command.ts";
import { FORMAT_OPTION, INPUT_HELP, loadStream, outputFormat } from "../input.ts";

const OPTIONS = { ...FORMAT_OPTION, to: { type: "string", default: "jp" } } as const;

const USAGE = `Usage: autocompact convert [FILE] [--to FORMAT] [--format …]

Converts the raw conversation (no compaction applied; compaction entries are
left out of a provider transcript) and prints it as one line of JSON:
  --to jp (default)      a plain JP stream: a JSON array of entries, which every
                         command reads
  --to openai-chat | openai-responses | anthropic-messages | ai-sdk
                         a provider transcript: a JSON array of turns, each the
                         array of that turn's messages (what replay posts)

${INPUT_HELP}

Exit codes: 0 ok, 1 bad input, 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const codec = values.to === "jp" ? undefined : outputFormat(values.to);
  const entries = await loadStream(positionals, values, io);
  const output = codec ? streamToTranscript(codec, entries) : entries;
  await write(io.stdout, `${JSON.stringify(output)}\n`);
  return EXIT.ok;
});
