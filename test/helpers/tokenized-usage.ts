/**
 * The calibration against a real tokenizer (issue 26): conversations of our
 * generator (test/helpers/conversation.ts) whose every turn reports the
 * usage a provider would, o200k_base's count of what the turn's last call
 * saw plus a fixed overhead (a system prompt and tool definitions), fed to
 * the calibration as the service feeds it; then the fitted estimate of the
 * final view, and chars / 4's, against o200k's count of that view plus the
 * overhead. core/calibration.tokenizer.test.ts asserts on it and
 * bench/calibration.ts prints it.
 *
 * What a call saw is counted per message, each entry's provider-visible text
 * encoded alone (a request's content, a response's message, reasoning or
 * data, a call's name and arguments, a result's content), as a provider
 * encodes each message of a request: written here apart from
 * core/estimate.ts, so the expected counts never come from the code under
 * test.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
  addUsage,
  type CalibrationSample,
  estimateTokens,
  resolveEstimator,
} from "../../core/calibration.ts";
import { estimateView, tokensFromChars } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import { project } from "../../core/projection.ts";
import { compaction } from "./builders.ts";
import { generateConversation, prng } from "./conversation.ts";

/** The text a provider is sent for `entry`, `undefined` when it is not provider-visible. */
function providerText(entry: Entry): string | undefined {
  const e = entry as Entry & Record<string, unknown>;
  switch (e.type) {
    case "chat_request":
      return e.content as string;
    case "chat_response":
      if (typeof e.message === "string") return e.message;
      if (typeof e.reasoning === "string") return e.reasoning;
      return JSON.stringify(e.data);
    case "tool_call_request":
      return `${e.name as string}${JSON.stringify(e.arguments)}`;
    case "tool_call_response":
      return e.content as string;
    default:
      return undefined;
  }
}

/** o200k_base's tokens of the provider-visible entries of a view, each encoded alone. */
export function viewTokens(view: readonly Entry[], cache = new Map<string, number>()): number {
  let tokens = 0;
  for (const entry of view) {
    const text = providerText(entry);
    if (text === undefined) continue;
    let counted = cache.get(text);
    if (counted === undefined) {
      counted = countTokens(text);
      cache.set(text, counted);
    }
    tokens += counted;
  }
  return tokens;
}

/** The per-conversation figures: the true count and each estimate's relative error. */
export interface TokenizedFigures {
  readonly seed: number;
  readonly turns: number;
  readonly overhead_tokens: number;
  /** Characters (UTF-8 bytes) of the final view, as the service counts them. */
  readonly view_chars: number;
  /** o200k_base's count of the final view plus the overhead. */
  readonly true_tokens: number;
  readonly fitted_tokens_per_char: number;
  readonly fitted_overhead_tokens: number;
  readonly calibrated_tokens: number;
  readonly chars_tokens: number;
  /** (estimate − true) / true. */
  readonly calibrated_error: number;
  readonly chars_error: number;
}

/** The first index of each turn's `turn_start`, and the stream's length last. */
function turnBounds(entries: readonly Entry[]): number[] {
  const starts = entries.flatMap((e, i) => (e.type === "turn_start" ? [i] : []));
  return [...starts, entries.length];
}

/**
 * Replays conversation `seed` of `turns` turns: after each turn its usage
 * (the call read the view before the turn's final message plus the
 * overhead, and wrote that message) joins the calibration at the view's
 * characters, as the service's size record keeps them. Halfway, a band
 * strips the tool calls and reasoning of every turn but the first and the
 * latest two, so the final view is a compacted one, not the uncompacted
 * views the early points saw. The overhead is drawn from the seed.
 */
export function measureTokenized(seed: number, turns: number): TokenizedFigures {
  // 6k to 14k tokens on every call, as the system prompts and tools measured in issue 26.
  const overhead = 6_000 + Math.floor(prng(seed ^ 0x5eed)() * 8_001);
  const stream = generateConversation({ seed, turns });
  const bounds = turnBounds(stream);
  const cache = new Map<string, number>();
  const bands: Entry[] = [];
  let sample: CalibrationSample | undefined;
  let view: Entry[] = [];
  for (let t = 0; t < turns; t++) {
    if (t === Math.floor(turns / 2)) {
      bands.push(
        compaction(1, t - 3, t, {
          source: "auto",
          tool_calls: { policy: "strip", request: true, response: true },
          reasoning: "strip",
        }),
      );
    }
    view = project([...stream.slice(0, bounds[t + 1]), ...bands]).entries;
    const last = view.at(-1) as Entry;
    const output = viewTokens([last], cache);
    const input = overhead + viewTokens(view, cache) - output;
    sample = addUsage(sample, estimateView(view).chars, {
      input_tokens: input,
      output_tokens: output,
    });
  }
  const chars = estimateView(view).chars;
  const truth = viewTokens(view, cache) + overhead;
  const estimator = resolveEstimator("auto", { kind: "sample", sample });
  const calibrated = estimateTokens(estimator, chars);
  const d50 = tokensFromChars(chars);
  return {
    seed,
    turns,
    overhead_tokens: overhead,
    view_chars: chars,
    true_tokens: truth,
    fitted_tokens_per_char: estimator.tokens_per_char,
    fitted_overhead_tokens: estimator.overhead_tokens,
    calibrated_tokens: calibrated,
    chars_tokens: d50,
    calibrated_error: (calibrated - truth) / truth,
    chars_error: (d50 - truth) / truth,
  };
}
