/**
 * Manual compaction (RFD 064): a DSL spec or a rule becomes a plan (policies
 * and resolved range); a summary plan's range is first extended over every
 * summary it intersects, so the summarizer reads the raw events of the whole
 * extended range and no two summaries split each other.
 */
import type { CompactionRule, RuleLayer } from "./config.ts";
import { DEFAULT_AUTO_CONFIG } from "./config.ts";
import { InvalidInputError, PROBLEM_VARIANTS, UnprocessableError } from "./errors.ts";
import type { Compaction } from "./events.ts";
import { extendSummaryRange, type TurnRange } from "./rules.ts";
import { parseSpec, resolveSpecRange, ruleOfSpec } from "./spec.ts";

/** What a manual compaction will do, before any summary text exists. */
export interface ManualPlan {
  readonly rule: Pick<CompactionRule, "reasoning" | "tool_calls" | "summary">;
  readonly range: TurnRange;
}

/** The two ways to ask for a manual compaction. */
export type ManualRequest = { readonly spec: string } | { readonly rule: RuleLayer };

/**
 * Plans a manual compaction over a conversation with `turnCount` turns and
 * the given existing compactions. `defaults` supplies keep_first/keep_last
 * when a spec has no range or a rule omits them.
 */
export function planManualCompaction(
  request: ManualRequest,
  turnCount: number,
  compactions: readonly Compaction[],
  defaults: Pick<CompactionRule, "keep_first" | "keep_last"> = DEFAULT_AUTO_CONFIG.rule,
): ManualPlan {
  let plan: ManualPlan;
  if ("spec" in request) {
    const spec = parseSpec(request.spec);
    plan = { rule: ruleOfSpec(spec), range: resolveSpecRange(spec, turnCount, defaults) };
  } else {
    const layer = request.rule;
    const rule = {
      reasoning: layer.reasoning ?? null,
      tool_calls: layer.tool_calls ?? null,
      summary: layer.summary ?? null,
    };
    if (!rule.summary && !rule.reasoning && !rule.tool_calls) {
      throw new InvalidInputError(
        "the compaction sets no policy: give reasoning, tool_calls or summary",
        PROBLEM_VARIANTS.noPolicy,
      );
    }
    const keepFirst = layer.keep_first ?? defaults.keep_first;
    const keepLast = layer.keep_last ?? defaults.keep_last;
    const from = keepFirst;
    const to = turnCount - 1 - keepLast;
    if (from > to) {
      throw new UnprocessableError(
        `keep_first ${keepFirst} and keep_last ${keepLast} leave no turn to compact in a conversation of ${turnCount} turns`,
        PROBLEM_VARIANTS.emptyRange,
      );
    }
    plan = { rule, range: { from_turn: from, to_turn: to } };
  }
  if (plan.rule.summary) return { ...plan, range: extendSummaryRange(plan.range, compactions) };
  return plan;
}
