/** `autocompact project`: the projected ("compacted") view of a stream. */
import { estimateView } from "../../core/estimate.ts";
import { PROVIDER_FORMATS } from "../../core/formats/index.ts";
import { projectionBody } from "../../core/formats/transcripts.ts";
import { project } from "../../core/projection.ts";
import { defineCommand, EXIT, UsageError, write } from "../command.ts";
import { FORMAT_OPTION, INPUT_HELP, loadStream, outputFormat } from "../input.ts";
import { renderProjection } from "../render.ts";

const OPTIONS = { ...FORMAT_OPTION, text: { type: "boolean" }, to: { type: "string" } } as const;

const USAGE = `Usage: autocompact project [FILE] [--text | --to FORMAT] [--format …]

Applies the stream's compactions (RFD 064 projection) and prints the view an
LLM should see, as one line of JSON on stdout:
  {"events": [...projected entries...],
   "turns": [{"kept": 3} | {"summary": {"from": 1, "to": 9}}, ...],
   "estimated_tokens": N}
turns maps each projected turn to the raw turn(s) it comes from.

  --to FORMAT            answer in a provider format instead, as the service's
                         GET …/projection?format= does: {"format", "messages"
                         ("input" for openai-responses), "turns",
                         "estimated_tokens"}, the messages ready for the next
                         request (${Object.keys(PROVIDER_FORMATS).join(", ")})

  --text                 render the view for people instead: one block per
                         projected turn ("── turn 3 ──", "── turns 1–9 · summary (auto) ──"),
                         marked with the bands that changed it
                         ("[auto: reasoning strip, tools strip]"); reasoning and
                         tool payloads truncated; colours only on a terminal

${INPUT_HELP}

Exit codes: 0 ok, 1 bad input, 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const target = values.to === undefined || values.to === "jp" ? undefined : values.to;
  if (target !== undefined && values.text) throw new UsageError("give --text or --to, not both");
  const codec = target === undefined ? undefined : outputFormat(target);
  const entries = await loadStream(positionals, values, io);
  const projection = project(entries);
  if (codec) {
    await write(io.stdout, `${JSON.stringify(projectionBody(codec, entries, projection))}\n`);
    return EXIT.ok;
  }
  const estimate = estimateView(projection.entries);
  if (values.text) {
    const color = io.stdout.isTTY === true && !io.env.NO_COLOR;
    await write(io.stdout, renderProjection(entries, projection, estimate, { color }));
    return EXIT.ok;
  }
  const output = {
    events: projection.entries,
    turns: projection.turns,
    estimated_tokens: estimate.estimated_tokens,
  };
  await write(io.stdout, `${JSON.stringify(output)}\n`);
  return EXIT.ok;
});
