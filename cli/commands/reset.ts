/** `autocompact reset`: removes compactions of a conversation on a running service. */
import { conversationOf, SERVICE_HELP, SERVICE_OPTIONS, serviceClient } from "../client.ts";
import { defineCommand, EXIT, UsageError, write } from "../command.ts";

const OPTIONS = {
  ...SERVICE_OPTIONS,
  source: { type: "string" },
  position: { type: "string" },
} as const;

const USAGE = `Usage: autocompact reset --conversation ID [--source auto|manual | --position N] [--url URL] [--key KEY]

Removes compactions (the raw events are never touched): all of them, all of one
--source, or the one at --position N (1-based, as listed). Prints the removed
compactions as JSON: {"removed":[…]}.

${SERVICE_HELP}

Exit codes: 0 ok, 1 a request failed, 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values }, io) => {
  const conversation = conversationOf(values);
  if (values.source !== undefined && values.position !== undefined) {
    throw new UsageError("give --source or --position, not both");
  }
  if (values.source !== undefined && values.source !== "auto" && values.source !== "manual") {
    throw new UsageError(`--source must be auto or manual (got "${values.source}")`);
  }
  if (values.position !== undefined && !/^[1-9]\d*$/.test(values.position)) {
    throw new UsageError(`--position must be a whole number from 1 (got "${values.position}")`);
  }
  const client = serviceClient(values, io);
  const removed = await client.reset(
    conversation,
    values.position !== undefined
      ? { position: Number(values.position) }
      : values.source
        ? { source: values.source }
        : {},
  );
  await write(io.stdout, `${JSON.stringify(removed)}\n`);
  return EXIT.ok;
});
