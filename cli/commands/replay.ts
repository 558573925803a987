/**
 * `autocompact replay`: posts a stream file's turns to a running service, one
 * request per turn, as a platform's webhook would. Replays are idempotent (a
 * stored identical turn answers 200), so an interrupted replay can simply be
 * run again.
 */

import type { AnyTurnRequest, Warning } from "../../client/types.ts";
import { InvalidInputError } from "../../core/errors.ts";
import type { Entry } from "../../core/events.ts";
import { PROVIDER_FORMATS } from "../../core/formats/index.ts";
import { splitTurns } from "../../core/turns.ts";
import { signWebhook } from "../../functions/webhook-signature.ts";
import {
  conversationOf,
  printWarnings,
  SERVICE_HELP,
  SERVICE_OPTIONS,
  serviceClient,
} from "../client.ts";
import { defineCommand, EXIT, type Io, UsageError, write } from "../command.ts";
import { FORMAT_OPTION, INPUT_HELP, type LoadedInput, loadInput } from "../input.ts";
import { MODEL_OPTIONS, modelInfo } from "../options.ts";

const OPTIONS = {
  ...FORMAT_OPTION,
  ...SERVICE_OPTIONS,
  ...MODEL_OPTIONS,
  wait: { type: "boolean" },
  "wait-timeout": { type: "string" },
  "webhook-secret": { type: "string" },
} as const;

const USAGE = `Usage: autocompact replay [FILE] --conversation ID [--url URL] [--key KEY]
                        [--model ID] [--context-window N] [--wait] [--format …]

Posts the stream's turns to POST /v1/conversations/{id}/turns, in order, with a
progress bar on stderr. Compaction entries in the file are not posted (the
service decides its own; add manual ones with the API). A provider transcript's
turns are posted in their format ({"format", "messages"}), as a platform would
(--drop-system is sent as drop_system). Prints a JSON summary on
stdout: {"conversation","turns","created","replayed","evaluated_through"}, then
the conversation's warnings as the last answer gave them on stderr, one line
each: "warning: <code>: <detail>" (e.g. auto_disabled, with the call enabling it).

  --model ID, --context-window N   the model sent with every turn
  --wait                           wait until every turn has been evaluated
  --wait-timeout S                 give up waiting after S seconds (default 120): exit 1
  --webhook-secret whsec_…         sign each post (Standard Webhooks), for tenants that require it

${SERVICE_HELP}

${INPUT_HELP}

Exit codes: 0 ok, 1 bad input or a request failed, 2 bad usage.`;

function progress(io: Io, done: number, total: number): void {
  if (!(io.stderr as { isTTY?: boolean }).isTTY) return;
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  io.stderr.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} turns`);
  if (done === total) io.stderr.write("\n");
}

/** Standard Webhooks headers for one post. */
function signedHeaders(secret: string, id: string, text: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signWebhook(secret, id, timestamp, text),
  };
}

/** A stream's turns, each posted as its JP events (compaction entries are not posted). */
async function streamPosts(entries: Entry[], io: Io): Promise<{ events: Entry[] }[]> {
  const dropped = entries.filter((e) => e.type === "compaction").length;
  if (dropped > 0)
    await write(
      io.stderr,
      `note: ${dropped} compaction entr${dropped === 1 ? "y is" : "ies are"} not posted\n`,
    );
  return splitTurns(entries.filter((e) => e.type !== "compaction")).map((events) => ({ events }));
}

/** A transcript's turns, each posted in its provider format as the platform would. */
async function transcriptPosts(input: Extract<LoadedInput, { kind: "transcript" }>) {
  // The messages go in the format's own field (`input` for openai-responses).
  const { field } = PROVIDER_FORMATS[input.format];
  return input.turns.map((messages) => ({
    format: input.format,
    [field]: messages as unknown[],
    ...(input.dropSystem ? { drop_system: true } : {}),
  }));
}

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const conversation = conversationOf(values);
  const client = serviceClient(values, io);
  const model = modelInfo(values);
  const input = await loadInput(positionals, values, io);
  const secret = values["webhook-secret"];
  if (secret !== undefined && !secret.startsWith("whsec_")) {
    throw new UsageError("--webhook-secret must look like whsec_<base64>");
  }
  const bodies =
    input.kind === "transcript" ? transcriptPosts(input) : streamPosts(input.entries, io);
  const turns = await bodies;
  let created = 0;
  let replayed = 0;
  // The latest answer's warnings are said once, at the end: the conversation as the replay left it.
  let warnings: readonly Warning[] = [];
  for (const [turn, body] of turns.entries()) {
    const outcome = await client.postTurn(
      conversation,
      { turn, ...body, ...(model ? { model } : {}) } as AnyTurnRequest,
      secret ? { sign: (text) => signedHeaders(secret, `replay_${turn}_${Date.now()}`, text) } : {},
    );
    warnings = outcome.warnings;
    if (outcome.status === "created") created++;
    else replayed++;
    progress(io, turn + 1, turns.length);
  }
  let evaluated: number | null = null;
  if (values.wait && turns.length > 0) {
    const timeoutText = values["wait-timeout"] ?? "120";
    if (!/^\d+$/.test(timeoutText))
      throw new UsageError(`--wait-timeout must be whole seconds (got "${timeoutText}")`);
    const deadline = Date.now() + Number(timeoutText) * 1000;
    for (;;) {
      const summary = await client.conversation(conversation);
      ({ evaluated_through: evaluated, warnings } = summary);
      if (evaluated !== null && evaluated >= turns.length - 1) break;
      if (Date.now() > deadline) {
        throw new InvalidInputError(
          `turns evaluated through ${evaluated ?? "none"} of ${turns.length - 1} after ${timeoutText} s: the compactor may be failing (see the service's log, e.g. auto_compaction.failed)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await write(
    io.stdout,
    `${JSON.stringify({ conversation, turns: turns.length, created, replayed, evaluated_through: evaluated })}\n`,
  );
  await printWarnings(io, warnings);
  return EXIT.ok;
});
