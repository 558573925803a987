/** `autocompact evaluate`: the D50 trigger decision on a stream as stored. */
import { evaluateStream } from "../../core/replay.ts";
import { defineCommand, EXIT, write } from "../command.ts";
import { INPUT_HELP } from "../input.ts";
import {
  CALIBRATION_HELP,
  CALIBRATION_OPTIONS,
  CONFIG_HELP,
  DISABLED_NOTE,
  MODEL_HELP,
  modelInfo,
  nowMillis,
  REPLAY_OPTIONS,
  replayInputs,
} from "../options.ts";
import { SUMMARIZER_HELP, SUMMARIZER_HINT } from "../summarizer.ts";

const OPTIONS = { ...REPLAY_OPTIONS, ...CALIBRATION_OPTIONS, now: { type: "string" } } as const;

const USAGE = `Usage: autocompact evaluate [FILE] [--context-window N] [--model ID]
                           [--config F]... [--enable] [--now RFC3339] [--format …]
                           [--tokens-per-char A] [--overhead B]
                           [--summarizer openai-compatible --base-url URL [--api-key KEY]
                            | --summarizer bedrock] [--summary-model ID]

Evaluates the automatic compaction trigger once, after the stream's last turn,
as the compactor would, and prints the decision as JSON on stdout:
  fire                    true when a band would be appended
  reason                  over_threshold when firing, else why not: disabled,
                          min_turns, context_window_unknown, under_threshold, empty_range,
                          short_range (min_band_turns), low_gain (min_gain_tokens;
                          with gain_tokens, what the band would have removed)
  turn_count
  range                   {"from_turn", "to_turn"}: the rolling range, or null
  estimated_tokens        estimate of the current projected view (the estimator's
                          tokens, its overhead included, the reserve not)
  threshold               context_window * trigger_ratio, or null
  context_window          or null when unknown
  compaction              when firing: the band that would be appended; with a
                          summary rule and --summarizer, the summary generated from
                          the raw events of the range, and the summary's
                          summary_model, summary_input_tokens, summary_output_tokens
                          and summary_latency_ms in its trigger
  estimated_tokens_after  when firing: the estimate with the band applied
  needs_summary           when firing with a summary rule but no --summarizer: the
                          summary is never faked, so there is no compaction
Without --context-window or a catalogued --model the window is unknown and the
reason is context_window_unknown (exit 0: it is a decision, not an error).

${MODEL_HELP}
  --now RFC3339          the clock the band's timestamp starts from (default: now)
${CALIBRATION_HELP}

${CONFIG_HELP}

${SUMMARIZER_HELP}

${INPUT_HELP}

Example:
  autocompact evaluate events.json --model claude-sonnet-4-5 \\
    --config '{"conversation":{"compaction":{"auto":{"enabled":true}}}}'

Exit codes: 0 ok (whatever the decision), 1 bad input or config or a failed
summary, 2 bad usage.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const model = modelInfo(values);
  const now = nowMillis(values.now, io.now);
  const { calibration, summarize, layers, entries } = await replayInputs(values, positionals, io);
  const context = {
    layers,
    nowMillis: now,
    ...(model === undefined ? {} : { model }),
    ...(calibration ? { calibration } : {}),
  };
  const step = await evaluateStream(entries, context, summarize);
  const decision = step.decision;
  if (decision.reason === "disabled") {
    await write(io.stderr, `autocompact: note: ${DISABLED_NOTE}\n`);
  }
  if (decision.reason === "context_window_unknown" && values.model !== undefined) {
    await write(
      io.stderr,
      `autocompact: note: model "${values.model}" is not in the catalog: give --context-window N\n`,
    );
  }
  if (step.kind === "needs_summary") {
    await write(
      io.stderr,
      `autocompact: note: the rule summarizes and no summarizer was given, so the decision has no compaction (${SUMMARIZER_HINT})\n`,
    );
  }
  const printed =
    step.kind === "fire"
      ? { ...decision, ...step.band }
      : step.kind === "needs_summary"
        ? { ...decision, needs_summary: true }
        : decision;
  await write(io.stdout, `${JSON.stringify(printed, null, 2)}\n`);
  return EXIT.ok;
});
