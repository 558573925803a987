/**
 * A format's messages of some of a view's turns (docs/architecture.md §8
 * "Paged reads"). A format may join neighbouring turns into one message or
 * write a turn from an earlier one: Anthropic merges a turn's trailing tool
 * results with the next turn's request, the AI SDK names a tool result after
 * its call in the turn before. So the messages of turns `[from, to)` are not
 * the conversion of those turns alone; cut from the conversion of the whole
 * view, pages joined are the whole view's messages whatever the format does.
 */
import type { ProviderFormat } from "./format.ts";
import type { ProviderView } from "./view.ts";

/**
 * The messages of turns `[from, to)` of `view`, a slice of `whole`
 * (`format.fromView(view)`): for `0 = t0 < t1 < … < tn = view.length` the
 * slices joined are `whole`. A turn starts after the messages the turns
 * before it make, so a message that joins the turn before with this one goes,
 * whole, with the first turn it holds.
 */
export function messagesOfTurns<M>(
  format: ProviderFormat<M>,
  view: ProviderView,
  whole: readonly M[],
  from: number,
  to: number,
): M[] {
  const startOf = (turn: number) => format.fromView(view.slice(0, turn)).length;
  return whole.slice(startOf(from), startOf(to));
}
