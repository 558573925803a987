/**
 * A seeded generator of realistic agent conversations in JP's event format:
 * turns with reasoning, tool calls whose payloads range from a few bytes to
 * hundreds of kilobytes, tool errors, inquiries, metadata and config deltas.
 * The same seed always gives the same stream.
 */
import type { Entry } from "../../core/events.ts";
import { mulberry32 } from "../../core/random.ts";
import { formatTimestamp } from "../../core/timestamp.ts";

/** A small, fast, seedable PRNG (core's mulberry32). */
export const prng = mulberry32;

const WORDS = (
  "the function returns a value when config is parsed and stream events compact turns file path " +
  "error test passes fails refactor module handler request response tool argument reasoning " +
  "because therefore however über naïve café 日本語 テスト données 🚀 ✅"
).split(" ");

const TOOLS = [
  { name: "fs_read_file", args: (r: () => number) => ({ path: `src/${word(r)}/${word(r)}.ts` }) },
  { name: "fs_grep", args: (r: () => number) => ({ pattern: word(r), context: 2 }) },
  {
    name: "fs_modify_file",
    args: (r: () => number) => ({
      path: `src/${word(r)}.ts`,
      patch: text(r, 40 + Math.floor(r() * 400)),
    }),
  },
  { name: "cargo_test", args: () => ({}) },
  {
    name: "run_command",
    args: (r: () => number) => ({ command: `npm run ${word(r)}`, flags: ["-q"] }),
  },
];

function word(r: () => number): string {
  return WORDS[Math.floor(r() * WORDS.length)] as string;
}

/** Random prose of about `words` words. */
export function text(r: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(word(r));
  return out.join(" ");
}

/** A payload size drawn from a heavy-tailed distribution: mostly small, sometimes huge. */
function payloadWords(r: () => number, scale: number): number {
  const roll = r();
  if (roll < 0.5) return 2 + Math.floor(r() * 30);
  if (roll < 0.85) return 50 + Math.floor(r() * 500);
  if (roll < 0.97) return 1000 + Math.floor(r() * 5000);
  return Math.floor((5000 + r() * 30000) * scale);
}

/** Options of {@link generateConversation}. */
export interface ConversationOptions {
  readonly seed: number;
  readonly turns: number;
  /** Multiplies the size of the rare huge tool outputs (default 1). */
  readonly hugeScale?: number;
  /** Starts with events before the first `turn_start` (JP's implicit turn 0). */
  readonly implicitFirstTurn?: boolean;
  /** Probability of a config delta between turns (default 0.05). */
  readonly configDeltaRate?: number;
  /** First timestamp, ms since the epoch. */
  readonly startMillis?: number;
  /**
   * Probability that a turn hands its last tool results across the turn
   * boundary (default 0): half of such turns end with unanswered calls that
   * the next turn answers first (a tool approval spanning two turns), half end
   * right after their tool results, with no answer of the model.
   */
  readonly crossTurnRate?: number;
}

/** Generates a conversation in plain (decoded) form. */
export function generateConversation(options: ConversationOptions): Entry[] {
  const r = prng(options.seed);
  const entries: Entry[] = [];
  let nanos = BigInt(options.startMillis ?? Date.UTC(2026, 2, 18, 13, 19, 7)) * 1_000_000n;
  const stamp = () => {
    nanos += BigInt(1 + Math.floor(r() * 5_000_000)) * 1_000n;
    return formatTimestamp(nanos);
  };
  let callId = 0;
  // Results the previous turn left for this one to answer first.
  let carried: Entry[] = [];
  for (let turn = 0; turn < options.turns; turn++) {
    if (turn > 0 && r() < (options.configDeltaRate ?? 0.05)) {
      entries.push({
        type: "config_delta",
        timestamp: stamp(),
        delta: {
          assistant: { model: { id: r() < 0.5 ? "anthropic/claude-sonnet-4-5" : "openai/gpt-4o" } },
        },
      });
    }
    if (!(turn === 0 && options.implicitFirstTurn))
      entries.push({ type: "turn_start", timestamp: stamp() });
    for (const result of carried) entries.push({ ...result, timestamp: stamp() });
    carried = [];
    // Drawn only when asked for, so the conversations of every other seed stay as they were.
    const crossRate = options.crossTurnRate ?? 0;
    const crossing = crossRate > 0 && r() < crossRate ? (r() < 0.5 ? "pending" : "cut") : undefined;
    entries.push({
      type: "chat_request",
      timestamp: stamp(),
      content: text(r, 5 + Math.floor(r() * 60)),
    });
    // A crossing turn makes at least one tool call to cross with.
    const steps = Math.floor(r() * 4) + (crossing ? 1 : 0);
    for (let step = 0; step <= steps; step++) {
      if (r() < 0.6) {
        entries.push({
          type: "chat_response",
          timestamp: stamp(),
          reasoning: text(r, 20 + Math.floor(r() * 400)),
          ...(r() < 0.3 ? { metadata: { anthropic_thinking_signature: "c2lnbmF0dXJl" } } : {}),
        });
      }
      if (step === steps) break;
      const calls = 1 + Math.floor(r() * 3);
      const ids: { id: string; name: string }[] = [];
      for (let c = 0; c < calls; c++) {
        const tool = TOOLS[Math.floor(r() * TOOLS.length)] as (typeof TOOLS)[number];
        const id = `toolu_${options.seed}_${callId++}`;
        ids.push({ id, name: tool.name });
        entries.push({
          type: "tool_call_request",
          timestamp: stamp(),
          id,
          name: tool.name,
          arguments: tool.args(r),
          ...(r() < 0.2 ? { metadata: { rendered_arguments: text(r, 5) } } : {}),
        });
      }
      // Calls left for the next turn end this one: nothing may follow them.
      const leaving = crossing === "pending" && step === steps - 1;
      if (!leaving && r() < 0.05) {
        const id = `${ids[0]?.id}.apply_changes`;
        entries.push({
          type: "inquiry_request",
          timestamp: stamp(),
          id,
          source: { source: "tool", name: ids[0]?.name },
          question: { text: "Apply changes?", answer_type: { type: "boolean" }, default: true },
        });
        entries.push({ type: "inquiry_response", timestamp: stamp(), id, answer: r() < 0.8 });
      }
      const answered: Entry[] = [];
      for (const { id } of ids) {
        const isError = r() < 0.1;
        answered.push({
          type: "tool_call_response",
          timestamp: stamp(),
          id,
          content: isError
            ? `error: ${text(r, 10)}`
            : text(r, payloadWords(r, options.hugeScale ?? 1)),
          is_error: isError,
        });
      }
      if (leaving) {
        carried = answered;
        break;
      }
      entries.push(...answered);
      if (crossing === "cut" && step === steps - 1) break;
    }
    if (crossing) continue;
    if (r() < 0.1) {
      entries.push({
        type: "chat_response",
        timestamp: stamp(),
        data: { status: word(r), n: turn },
      });
    }
    entries.push({
      type: "chat_response",
      timestamp: stamp(),
      message: text(r, 10 + Math.floor(r() * 200)),
    });
  }
  return entries;
}
