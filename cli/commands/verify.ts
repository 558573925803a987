/** `autocompact verify`: checks (and with --repair fixes) a conversation's head on a running service. */
import { conversationOf, SERVICE_HELP, SERVICE_OPTIONS, serviceClient } from "../client.ts";
import { defineCommand, EXIT, write } from "../command.ts";

const OPTIONS = {
  ...SERVICE_OPTIONS,
  repair: { type: "boolean" },
} as const;

const USAGE = `Usage: autocompact verify --conversation ID [--repair] [--url URL] [--key KEY]

Recomputes the conversation's head counters (turn_count, projected_chars,
max_compacted_turn, compactions_version, evaluated_through) from its stored
turns and compactions, and each turn's size counts from its events, and prints
the answer as JSON: {"drift":[{"field","stored","expected"}…],"repaired":…}.
With --repair a drifted head gets the recomputed counters (one write,
conditional on the head that was checked); stored turn sizes are only reported.

${SERVICE_HELP}
  --repair               rewrite a drifted head's counters

Exit codes: 0 no drift, or the drift was repaired; 1 drift found and not
repaired (without --repair, or in turn sizes), or a request failed; 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values }, io) => {
  const conversation = conversationOf(values);
  const client = serviceClient(values, io);
  const body = await client.verify(conversation, { repair: values.repair === true });
  await write(io.stdout, `${JSON.stringify(body)}\n`);
  // A repair rewrites the head's counters; drift in stored turn sizes remains.
  const left = body.repaired ? body.drift.filter((d) => d.field.startsWith("turns[")) : body.drift;
  return left.length === 0 ? EXIT.ok : EXIT.failure;
});
