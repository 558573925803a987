/**
 * The warnings of a conversation (docs/architecture.md §8, "Warnings"): what
 * keeps automatic compaction from doing its job, said where a platform looks
 * (the post's answer, the summary, the projection, the list), each with the
 * one thing to do about it.
 *
 * Pure, and derived from the numbers the D50 step itself decides on
 * ({@link decide}): the effective config, the resolved window, the view's
 * estimate with the reserve, and the last decision. Nothing is stored.
 */
import { decide, exceedsWindow, overThreshold, type TriggerState } from "./auto-compaction.ts";
import type { AutoConfigLayer } from "./config.ts";

/**
 * Every warning code, in the order warnings are listed.
 * Other rules add theirs here (and a row to the table of docs/architecture.md §8).
 */
export const WARNING_CODES = [
  "auto_disabled",
  "context_window_unknown",
  "over_window",
  "still_over_threshold",
] as const;

/** A warning's code. */
export type WarningCode = (typeof WARNING_CODES)[number];

/** One warning: its code, and a sentence saying what it means and what to do. */
export interface Warning {
  readonly code: WarningCode;
  readonly detail: string;
}

/** What the warnings of a conversation are derived from. */
export interface WarningInputs {
  /** The conversation's id: the enabling call names it. */
  readonly conversation: string;
  /** What an evaluation of the conversation now would decide on (its effective config included). */
  readonly state: TriggerState;
  /** The conversation's own API config layer: the enabling call keeps it. */
  readonly layer?: AutoConfigLayer;
  /** The config layer that turned compaction off, when one did (else it is off by default). */
  readonly disabled_by?: "service" | "tenant" | "stream" | "conversation";
  /** The latest turn's model id, when a turn named one. */
  readonly model_id?: string;
  /** What the latest evaluation decided, when one has. */
  readonly last_outcome?: "fired" | "skipped";
}

/** Tokens as the details show them: whole, rounded up (the estimate is a real number). */
function tokens(value: number): number {
  return Math.ceil(value);
}

/** The one call that enables automatic compaction, keeping the conversation's own layer. */
function enablingCall(conversation: string, layer: AutoConfigLayer): string {
  const tree = { conversation: { compaction: { auto: { ...layer, enabled: true } } } };
  return `PUT /v1/conversations/${encodeURIComponent(conversation)}/config ${JSON.stringify(tree)}`;
}

function windowUnknown(modelId: string | undefined): string {
  if (modelId === undefined) {
    return "no turn names its model, so the context window is unknown and automatic compaction cannot fire: post each turn with `model: {id, context_window}` (the window in tokens)";
  }
  return `the context window of model ${JSON.stringify(modelId)} is unknown, so automatic compaction cannot fire: post each turn with \`model.context_window\` (the window in tokens), or add the model to the service's catalog (\`MODEL_CATALOG\`, e.g. ${JSON.stringify({ [modelId]: 128000 })})`;
}

/**
 * The warnings of a conversation, in {@link WARNING_CODES} order; empty when
 * nothing stands in the way.
 *
 * @example
 * conversationWarnings({ conversation: "c1", state }) // [{ code: "auto_disabled", detail: "…PUT /v1/conversations/c1/config {…}" }]
 */
export function conversationWarnings(inputs: WarningInputs): Warning[] {
  const { config } = inputs.state;
  const measures = decide(inputs.state);
  const warnings: Warning[] = [];
  if (!config.enabled) {
    warnings.push({
      code: "auto_disabled",
      detail: `automatic compaction is off (${inputs.disabled_by ? `the ${inputs.disabled_by}'s config turns it off` : "the default"}): enable it with ${enablingCall(inputs.conversation, inputs.layer ?? {})}`,
    });
  }
  const window = measures.context_window;
  if (window === null) {
    warnings.push({ code: "context_window_unknown", detail: windowUnknown(inputs.model_id) });
    return warnings;
  }
  const estimate = measures.estimated_tokens;
  const total = `${tokens(estimate + config.reserve_tokens)} tokens (estimate ${tokens(estimate)} plus reserve ${config.reserve_tokens})`;
  if (exceedsWindow(config, estimate, window)) {
    warnings.push({
      code: "over_window",
      detail: `the view is ${total}, past the ${window}-token context window: the next call may be refused or truncated; compact it now (POST …/compactions) or keep fewer turns (\`rule.keep_last\`)`,
    });
  }
  // Set whenever the window is.
  const threshold = measures.threshold as number;
  if (inputs.last_outcome === "fired" && overThreshold(config, estimate, threshold)) {
    warnings.push({
      code: "still_over_threshold",
      detail: `the last automatic band left the view at ${total}, over the threshold of ${tokens(threshold)} (trigger_ratio ${config.trigger_ratio} of the window): the rule keeps too much; lower \`rule.keep_last\`, strip or summarize more`,
    });
  }
  return warnings;
}
