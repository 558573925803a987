/**
 * What makes a posted turn valid, in one place: the body's shape (JP events
 * or one provider format's messages, never both), every event an entry of
 * the wire format, the events exactly one turn of a stream, and each config
 * delta a valid configuration. The HTTP layer parses the body's fields with
 * its route schemas; everything else about a turn is decided here.
 *
 * Checks found elsewhere that look like these differ on purpose:
 * - the route schema's `events` needs at least one item: the documented wire
 *   constraint (`minItems`), answered by pointer before any event is read;
 *   {@link checkTurnShape} refuses the non-empty turns that still hold no
 *   conversation event (only config deltas or unknown entries);
 * - `parseStream` accepts compactions, as a stream holds them; a posted turn
 *   may not carry one ({@link checkTurnShape});
 * - a config delta must also leave a config the service can run (a summary
 *   rule needs a summarizer): that depends on the service's settings and the
 *   conversation's layers, so the service checks it when it stores the turn;
 * - the turn number is bounded by the route schema (the store's keys); whether
 *   it is the next turn depends on the stored conversation (a 409, not a 400).
 *
 * A post's `usage` (what the provider reported, core/calibration.ts) is
 * {@link TurnUsageSchema}, the route schemas' field: every format takes it
 * the same way, and it never changes the turn's events.
 */
import * as z from "zod";
import type { TurnUsage } from "./calibration.ts";
import { type AutoConfigLayer, ConfigError, parseConfigTree } from "./config.ts";
import { InvalidInputError, PROBLEM_VARIANTS } from "./errors.ts";
import { type Entry, parseStream } from "./events.ts";
import { FORMAT_NAMES, PROVIDER_FORMATS, type ProviderFormatName } from "./formats/index.ts";
import { describeIssues, firstIssue, joinIssues } from "./issues.ts";
import { indexTurns, isConversationEvent } from "./turns.ts";

// A count of tokens a provider reported: whole (zod's int() is a safe integer too).
const reportedTokens = z
  .number({ error: "must be a whole number of tokens" })
  .int()
  .nonnegative("must be 0 or more");

/**
 * A turn post's `usage`: what the provider reported for the turn's last
 * model call (`input_tokens` counting cached tokens too, so
 * `cached_input_tokens` is at most it), and how many calls the turn made.
 */
export const TurnUsageSchema = z
  .strictObject({
    input_tokens: reportedTokens,
    output_tokens: reportedTokens.optional(),
    cached_input_tokens: reportedTokens.optional(),
    calls: z
      .number({ error: "must be a whole number of calls" })
      .int()
      .min(1, "must be 1 or more")
      .optional(),
  })
  .refine(
    (usage) =>
      usage.cached_input_tokens === undefined || usage.cached_input_tokens <= usage.input_tokens,
    {
      path: ["cached_input_tokens"],
      error: "must be at most input_tokens (input_tokens counts cached tokens too)",
    },
  ) satisfies z.ZodType<TurnUsage>;

/** What a turn body posts: JP events (the body to parse, `format: "jp"` left out) or a format's messages. */
export type TurnBodyKind =
  | { readonly kind: "events"; readonly body: unknown }
  | { readonly kind: "format" };

/**
 * Tells a JP post (`events`, with no `format` or `format: "jp"`) from a
 * provider format's post, refusing a body that mixes them.
 */
export function turnBodyKind(raw: unknown): TurnBodyKind {
  // Any value but null and undefined destructures; only an object's own keys are looked at.
  const { format, ...rest } = (raw ?? {}) as { format?: unknown };
  if (format === undefined || format === "jp") {
    const stray = ["messages", "input"].find((key) => Object.hasOwn(rest, key));
    if (stray) {
      throw new InvalidInputError(
        `\`${stray}\` needs a \`format\` (one of ${FORMAT_NAMES.filter((name) => name !== "jp").join(", ")}); JP events are posted as \`events\``,
        { issues: [{ pointer: "/format", detail: "missing" }] },
      );
    }
    return { kind: "events", body: format === undefined ? raw : rest };
  }
  if (Object.hasOwn(rest, "events")) {
    throw new InvalidInputError(
      `post either JP \`events\` or \`format\` with its messages, not both (format is "${String(format)}")`,
      { issues: [{ pointer: "/events", detail: "not with format" }] },
    );
  }
  return { kind: "format" };
}

/** The messages of a format post, from the field its format uses (`messages` or `input`). */
export function formatMessages(body: {
  readonly format: ProviderFormatName;
  readonly messages?: unknown;
  readonly input?: unknown;
}): unknown {
  const { field } = PROVIDER_FORMATS[body.format];
  const other = field === "messages" ? "input" : "messages";
  if (body[other] !== undefined) {
    throw new InvalidInputError(
      `format ${body.format} carries its messages in \`${field}\`, not \`${other}\``,
      { issues: [{ pointer: `/${other}`, detail: `use ${field}` }] },
    );
  }
  if (body[field] === undefined) {
    throw new InvalidInputError(`format ${body.format} needs the turn's messages in \`${field}\``, {
      issues: [{ pointer: `/${field}`, detail: "missing" }],
    });
  }
  return body[field];
}

/**
 * A format post's usage: its `usage`, or what its `response` (the SDK's
 * response object of the turn's last call) reports, read by the format's
 * `responseUsage` (core/formats/usage.ts) and held to {@link TurnUsageSchema}'s
 * rules; a post with both is refused, and a response without usage is a 400
 * located under `/response`.
 */
export function formatTurnUsage(body: {
  readonly format: ProviderFormatName;
  readonly usage?: TurnUsage | undefined;
  readonly response?: unknown;
}): TurnUsage | undefined {
  if (body.response === undefined) return body.usage;
  if (body.usage !== undefined) {
    throw new InvalidInputError("post either `usage` or the `response` it is read from, not both", {
      issues: [{ pointer: "/response", detail: "not with usage" }],
    });
  }
  const read = PROVIDER_FORMATS[body.format].responseUsage.pipe(TurnUsageSchema);
  const parsed = read.safeParse(body.response);
  if (parsed.success) return parsed.data;
  const issues = describeIssues(parsed.error.issues, { notation: "pointer", prefix: ["response"] });
  throw new InvalidInputError(
    `response is not a ${body.format} response with usage: ${firstIssue(issues.map((issue) => issue.text))}`,
    { issues: issues.map(({ pointer, message }) => ({ pointer, detail: message })) },
  );
}

/**
 * A JP post's `events` as entries of the wire format, or one 400 locating
 * every problem (`events[1].content`, pointer `/events/1/content`), the
 * first one in the detail.
 */
export function turnEvents(events: readonly unknown[]): Entry[] {
  const parsed = parseStream(events);
  if (parsed.ok) return parsed.entries;
  const issues = describeIssues(
    parsed.issues.map(({ index, path, message }) => ({
      path: ["events", index, ...(path === "" ? [] : path.split("."))],
      message,
    })),
    { notation: "brackets" },
  );
  throw new InvalidInputError(firstIssue(issues.map((issue) => issue.text)), {
    issues: issues.map(({ pointer, message }) => ({ pointer, detail: message })),
  });
}

/**
 * Checks that `events` form exactly one turn of a stream, turn number
 * `turn`: no compaction (those have their own route), at least one
 * conversation event, no second turn, and a `turn_start` first unless it is
 * turn 0 (the only turn that may start implicitly).
 */
export function checkTurnShape(turn: number, events: readonly Entry[]): void {
  const compaction = events.findIndex((e) => e.type === "compaction");
  if (compaction >= 0) {
    throw new InvalidInputError(
      `events[${compaction}] is a compaction: add compactions with POST /v1/conversations/{id}/compactions, not in a turn`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  const { turnCount } = indexTurns(events);
  if (turnCount === 0) {
    const types = [...new Set(events.map((e) => e.type))].join(", ");
    throw new InvalidInputError(
      `a turn needs at least one conversation event (turn_start, chat_request, chat_response, tool_call_request, tool_call_response, inquiry_*); got only: ${types}`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  if (turnCount > 1) {
    throw new InvalidInputError(
      `events hold ${turnCount} turns: post one turn per request (each turn_start after an event starts a new turn)`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  // One turn holds a conversation event.
  const first = events.find(isConversationEvent) as Entry;
  if (turn > 0 && first.type !== "turn_start") {
    throw new InvalidInputError(
      `turn ${turn} must begin with a turn_start event (only turn 0 may start implicitly)`,
      PROBLEM_VARIANTS.invalidTurn,
    );
  }
  checkToolPairs(turn, events);
}

function refuseAt(index: number, field: string, detail: string): never {
  throw new InvalidInputError(`events[${index}].${field}: ${detail}`, {
    ...PROBLEM_VARIANTS.invalidTurn,
    issues: [{ pointer: `/events/${index}/${field}`, detail }],
  });
}

/**
 * The tool pairs of one turn (docs/architecture.md §5 "Tool pairs"): call ids
 * are unique in the turn and each is answered at most once; a result whose
 * call is not earlier in the turn answers the previous turn's pending calls,
 * so it comes first (after the `turn_start`, before anything but such
 * results) and never in turn 0; a call left unanswered is followed only by
 * other calls and results, so it ends the turn (parallel calls may be
 * answered in part).
 */
function checkToolPairs(turn: number, events: readonly Entry[]): void {
  const calls = new Map<string, number>();
  const answers = new Map<string, number>();
  const carried = new Map<string, number>();
  const answeredLater = new Set<string>();
  const pendingAt = new Map<number, string>();
  for (let j = events.length - 1; j >= 0; j--) {
    const entry = events[j] as Entry & { id?: string };
    if (entry.type === "tool_call_response") answeredLater.add(String(entry.id));
    if (entry.type === "tool_call_request" && !answeredLater.has(String(entry.id))) {
      pendingAt.set(j, String(entry.id));
    }
  }
  let leading = true;
  let pending: string | undefined;
  events.forEach((entry, j) => {
    if (!isConversationEvent(entry) || entry.type === "turn_start") return;
    const id = String((entry as { id?: unknown }).id);
    if (entry.type === "tool_call_response") {
      // Results for the previous turn's pending calls apart: their ids may be called again.
      const seen = calls.has(id) ? answers : carried;
      const answered = seen.get(id);
      if (answered !== undefined) {
        refuseAt(
          j,
          "id",
          `a second result for tool call ${JSON.stringify(id)} (the first is events[${answered}]); a call takes one result`,
        );
      }
      seen.set(id, j);
      if (seen === answers) return;
      if (turn === 0 || !leading) {
        refuseAt(
          j,
          "id",
          `no tool call ${JSON.stringify(id)} comes before this result in the turn: a result for an earlier turn's pending call comes first in the next turn (after its turn_start)${turn === 0 ? ", and turn 0 has no earlier turn" : ""}`,
        );
      }
      return;
    }
    leading = false;
    if (pending !== undefined && entry.type !== "tool_call_request") {
      refuseAt(
        j,
        "type",
        `tool call ${JSON.stringify(pending)} has no result in this turn, yet the turn goes on: a call may stay unanswered only at the end of its turn (the next turn then begins with its result)`,
      );
    }
    if (entry.type !== "tool_call_request") return;
    const earlier = calls.get(id);
    if (earlier !== undefined) {
      refuseAt(
        j,
        "id",
        `duplicate tool call id ${JSON.stringify(id)} (also at events[${earlier}]): tool call ids must be unique within a turn`,
      );
    }
    calls.set(id, j);
    pending ??= pendingAt.get(j);
  });
}

/**
 * The config layers a turn's config deltas set, in order (a delta that sets
 * no auto key adds none), or one 400 naming each bad key of each delta as
 * `events[i].delta: …`.
 */
export function turnConfigLayers(events: readonly Entry[]): AutoConfigLayer[] {
  return events.flatMap((entry, index) => {
    if (entry.type !== "config_delta") return [];
    const layer = parseTurnConfig(entry, index);
    return Object.keys(layer).length > 0 ? [layer] : [];
  });
}

function parseTurnConfig(entry: Entry, index: number): AutoConfigLayer {
  try {
    return parseConfigTree((entry as { delta?: unknown }).delta ?? {});
  } catch (error) {
    // A ConfigError's messages name each bad key; anything else is not the turn's fault.
    if (!(error instanceof ConfigError)) throw error;
    const { messages } = error;
    throw new InvalidInputError(joinIssues(messages.map((m) => `events[${index}].delta: ${m}`)), {
      ...PROBLEM_VARIANTS.invalidTurn,
      issues: messages.map((detail) => ({ pointer: `/events/${index}/delta`, detail })),
      cause: error,
    });
  }
}
