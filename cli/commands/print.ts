/** `autocompact print`: a conversation of a running service, raw or compacted. */

import { InvalidInputError } from "../../core/errors.ts";
import { estimateView } from "../../core/estimate.ts";
import { parseStream } from "../../core/events.ts";
import { project } from "../../core/projection.ts";
import {
  conversationOf,
  printWarnings,
  SERVICE_HELP,
  SERVICE_OPTIONS,
  serviceClient,
} from "../client.ts";
import { defineCommand, EXIT, UsageError, write } from "../command.ts";
import { renderProjection } from "../render.ts";

const OPTIONS = {
  ...SERVICE_OPTIONS,
  compacted: { type: "boolean" },
  text: { type: "boolean" },
  "without-compactions": { type: "boolean" },
} as const;

const USAGE = `Usage: autocompact print --conversation ID [--compacted] [--text | --without-compactions]
                        [--url URL] [--key KEY]

Prints the conversation's raw stream (compactions included, with their source)
as a JSON array, or with --compacted the projected view the next LLM call should
see ({"events","turns","estimated_tokens"}). --text renders the compacted view
for people, marking the bands auto/manual. --without-compactions prints the raw
stream without its bands: the turns alone, to replay or simulate from scratch.
The conversation's warnings (compaction off, an unknown window, …) go to
stderr, one line each: "warning: <code>: <detail>".

${SERVICE_HELP}

Exit codes: 0 ok, 1 a request failed, 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  if (positionals.length > 0)
    throw new InvalidInputError(`unexpected argument "${positionals[0]}"`);
  const conversation = conversationOf(values);
  const client = serviceClient(values, io);
  // --text renders the compacted view (with or without --compacted); the raw stream has no bands to leave out then.
  if (values["without-compactions"] && (values.compacted || values.text)) {
    throw new UsageError(
      "--without-compactions prints the raw stream: not with --compacted or --text",
    );
  }
  if (values.text) {
    const { events } = await client.events(conversation);
    const parsed = parseStream(events);
    if (!parsed.ok)
      throw new InvalidInputError("the service returned a stream this client cannot read");
    const projection = project(parsed.entries);
    const text = renderProjection(parsed.entries, projection, estimateView(projection.entries), {
      color: Boolean(io.stdout.isTTY) && !io.env.NO_COLOR,
    });
    await write(io.stdout, text.endsWith("\n") ? text : `${text}\n`);
    await printWarnings(io, (await client.conversation(conversation)).warnings);
    return EXIT.ok;
  }
  if (values.compacted) {
    const projection = await client.projection(conversation);
    await write(io.stdout, `${JSON.stringify(projection)}\n`);
    await printWarnings(io, projection.warnings);
    return EXIT.ok;
  }
  const { events } = await client.events(conversation);
  const printed = values["without-compactions"]
    ? events.filter((event) => event.type !== "compaction")
    : events;
  await write(io.stdout, `${JSON.stringify(printed)}\n`);
  await printWarnings(io, (await client.conversation(conversation)).warnings);
  return EXIT.ok;
});
