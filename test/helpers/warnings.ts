/**
 * The warnings the tests expect most (docs/architecture.md §8, "Warnings"),
 * written out once as literals: compaction off for a conversation with no
 * config of its own, and no turn naming a model.
 */

/** `auto_disabled` of `conversation` (its id as the path spells it). */
export function offWarning(conversation: string) {
  return {
    code: "auto_disabled",
    detail: `automatic compaction is off (the default): enable it with PUT /v1/conversations/${conversation}/config {"conversation":{"compaction":{"auto":{"enabled":true}}}}`,
  };
}

/** `context_window_unknown` of a conversation whose turns name no model. */
export const NO_MODEL_WARNING = {
  code: "context_window_unknown",
  detail:
    "no turn names its model, so the context window is unknown and automatic compaction cannot fire: post each turn with `model: {id, context_window}` (the window in tokens)",
};

/** Both: a conversation posted as the tests post most, no config and no model. */
export function offAndUnknown(conversation: string) {
  return [offWarning(conversation), NO_MODEL_WARNING];
}
