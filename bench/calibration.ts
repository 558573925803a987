/**
 * `npm run bench -- calibration` (issue 26): per generated conversation, the
 * calibrated estimate of the final view and chars / 4 against o200k_base's
 * count of that view plus the overhead every call carried, each turn's usage
 * reported as test/helpers/tokenized-usage.ts describes. One line per
 * conversation, then the largest error of each. `BENCH_CONVERSATIONS` (20)
 * and `BENCH_TURNS` (30) change the sizes.
 */
import { measureTokenized } from "../test/helpers/tokenized-usage.ts";

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 20);
const TURNS = Number(process.env.BENCH_TURNS ?? 30);

const percent = (error: number) => Number((error * 100).toFixed(2));

/** The calibration group: one result per conversation and a summary. */
export function benchCalibration(): Record<string, unknown>[] {
  const results: Record<string, unknown>[] = [];
  let calibrated = 0;
  let chars = 0;
  for (let seed = 1; seed <= CONVERSATIONS; seed++) {
    const f = measureTokenized(seed, TURNS);
    calibrated = Math.max(calibrated, Math.abs(f.calibrated_error));
    chars = Math.max(chars, Math.abs(f.chars_error));
    results.push({
      bench: "calibration",
      seed,
      turns: f.turns,
      view_chars: f.view_chars,
      overhead_tokens: f.overhead_tokens,
      true_tokens: f.true_tokens,
      tokens_per_char: Number(f.fitted_tokens_per_char.toFixed(4)),
      fitted_overhead_tokens: Math.round(f.fitted_overhead_tokens),
      calibrated_tokens: Math.round(f.calibrated_tokens),
      chars_tokens: Math.round(f.chars_tokens),
      calibrated_error_pct: percent(f.calibrated_error),
      chars_error_pct: percent(f.chars_error),
    });
  }
  results.push({
    bench: "calibration.max",
    conversations: CONVERSATIONS,
    max_calibrated_error_pct: percent(calibrated),
    max_chars_error_pct: percent(chars),
  });
  return results;
}
