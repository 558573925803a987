/**
 * The call-by-call billing of `autocompact tune` (docs/tuning.md, "The
 * billing model"). A turn makes one model call per response: the first after
 * the turn's request, one more after each group of tool results the model
 * answers. Call c of turn t sends the overhead, the view as evaluated after
 * turn t−1 and turn t's events before that response; its output is the
 * response. Its cached tokens are its longest common prefix, in whole
 * events, with the previous call's input, when that call was at most the
 * profile's lifetime earlier and the prefix reaches the profile's minimum;
 * the rest is written.
 */
import { type Entry, isKnown } from "./events.ts";
import type { PricingProfile } from "./prices.ts";
import { timestampNanos } from "./timestamp.ts";

/** One model call inside a turn, as the turn's own events give it. */
export interface TurnCall {
  /** Characters of the turn's events before the response (the call's input beyond the view). */
  readonly inputChars: number;
  /** Characters of the response (text, reasoning, tool calls) until the next input. */
  readonly outputChars: number;
  /** When the call was sent: the last event before the response, in ms. */
  readonly atMs: number;
}

const isResponse = (entry: Entry) =>
  entry.type === "chat_response" || entry.type === "tool_call_request";
const isInput = (entry: Entry) =>
  entry.type === "chat_request" || entry.type === "tool_call_response";
const millis = (entry: Entry) =>
  Number(timestampNanos((entry as { timestamp: string }).timestamp) / 1_000_000n);

/**
 * The calls of one turn: a response opens a call unless the previous
 * response's call is still open (no request or tool result since).
 * `chars[i]` is `entries[i]`'s size.
 */
export function turnCalls(entries: readonly Entry[], chars: readonly number[]): TurnCall[] {
  const calls: { inputChars: number; outputChars: number; atMs: number }[] = [];
  let open = false;
  let before = 0;
  let sentMs: number | undefined;
  entries.forEach((entry, i) => {
    const size = chars[i] as number;
    if (isResponse(entry)) {
      if (!open) calls.push({ inputChars: before, outputChars: 0, atMs: sentMs ?? millis(entry) });
      open = true;
      (calls[calls.length - 1] as { outputChars: number }).outputChars += size;
    } else {
      if (isInput(entry)) open = false;
      // Unknown entries carry no timestamp we trust; a known one dates the next call.
      if (isKnown(entry) && !open) sentMs = millis(entry);
    }
    before += size;
  });
  return calls;
}

/** One conversation's bill and risk, in tokens (docs/tuning.md). */
export interface CallTotals {
  calls: number;
  /** Input tokens read from the cache. */
  cache_read_tokens: number;
  /** Input tokens not read from the cache: written to it (or sent uncached). */
  cache_write_tokens: number;
  output_tokens: number;
  /** Calls whose input is over the window. */
  overflow_calls: number;
  /** Σ over calls of the share of the raw history's characters still in the view. */
  retention_sum: number;
}

/** A fresh {@link CallTotals}. */
export function emptyCallTotals(): CallTotals {
  return {
    calls: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 0,
    overflow_calls: 0,
    retention_sum: 0,
  };
}

/**
 * Bills a conversation's calls turn by turn. `tokens(chars)` is the
 * estimator's count for an input of that many characters (overhead
 * included); the output is counted without the overhead.
 */
export class CallMeter {
  readonly totals: CallTotals = emptyCallTotals();
  /** Input per call (tokens), when asked for. */
  readonly inputs: number[] | undefined;
  private previous: { chars: number; atMs: number } | undefined;
  private rawChars = 0;

  constructor(
    private readonly profile: PricingProfile,
    private readonly contextWindow: number,
    private readonly tokens: (chars: number) => number,
    curves = false,
  ) {
    this.inputs = curves ? [] : undefined;
  }

  /**
   * Bills turn t's calls. `viewChars`: the view after turn t−1's evaluation;
   * `carriedChars`: its common prefix with the view before that evaluation
   * plus turn t−1's events (where a band, if one fired, starts rewriting);
   * `turnChars`: turn t's events in all.
   */
  turn(calls: readonly TurnCall[], viewChars: number, carriedChars: number, turnChars: number) {
    calls.forEach((call, c) => {
      const chars = viewChars + call.inputChars;
      const input = this.tokens(chars);
      let cached = 0;
      const previous = this.previous;
      if (previous && call.atMs - previous.atMs <= this.profile.lifetime_s * 1000) {
        // Inside a turn the previous input is a prefix of this one; across turns the view
        // before the evaluation is, so the prefix is the part the evaluation left alone.
        const shared = c === 0 ? Math.min(carriedChars, previous.chars) : previous.chars;
        cached = this.tokens(shared);
        if (cached < this.profile.min_tokens) cached = 0;
      }
      const totals = this.totals;
      totals.calls++;
      totals.cache_read_tokens += cached;
      totals.cache_write_tokens += input - cached;
      totals.output_tokens += this.tokens(call.outputChars) - this.tokens(0);
      if (input > this.contextWindow) totals.overflow_calls++;
      const raw = this.rawChars + call.inputChars;
      totals.retention_sum += raw === 0 ? 1 : Math.min(1, chars / raw);
      this.inputs?.push(input);
      this.previous = { chars, atMs: call.atMs };
    });
    this.rawChars += turnChars;
  }
}

/** Token counts a bill in dollars needs. */
export interface Billable {
  readonly cache_read_tokens: number;
  readonly cache_write_tokens: number;
  readonly output_tokens: number;
  readonly summary_input_tokens: number;
  readonly summary_output_tokens: number;
}

/** USD per million tokens (base input, output; the summarizer's input and output). */
export interface PriceList {
  readonly input: number;
  readonly output: number;
  readonly summary_input: number;
  readonly summary_output: number;
}

/** The dollars of a bill: writes and reads at the profile's multiples of the input price, output at its own, a summary's tokens at the summarizer's. */
export function dollars(bill: Billable, prices: PriceList, profile: PricingProfile): number {
  return (
    (bill.cache_write_tokens * profile.write * prices.input +
      bill.cache_read_tokens * profile.read * prices.input +
      bill.output_tokens * prices.output +
      bill.summary_input_tokens * prices.summary_input +
      bill.summary_output_tokens * prices.summary_output) /
    1e6
  );
}
