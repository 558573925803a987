/**
 * Read-your-evaluation (issue 12): a platform that posted turn N reads the
 * view as evaluated after N. Evaluations run asynchronously, so a read with
 * `after_turn` waits until an evaluation has decided (fired or skipped) on a
 * stored state holding turn N or a later one. A stale skip of N is no
 * decision: it defers to the newer turn's evaluation, which sees N too.
 *
 * The wait is a few spaced reads of the head (one strongly consistent
 * GetItem each: 50 ms, then doubling to at most 1 s apart), so a read that
 * waits 25 s costs at most about 30 reads, and one whose evaluation is done
 * costs the single read every view needs anyway.
 */
import { InvalidInputError, PROBLEM_VARIANTS } from "../../core/errors.ts";
import { EvaluationPendingError } from "../errors.ts";
import type { Clock, ConversationHead } from "../ports.ts";

/** The longest wait a request may ask for: API Gateway gives up at 30 s. */
export const MAX_WAIT_SECONDS = 25;

/** What a read waits for. */
export interface EvaluationWait {
  /** The turn whose evaluation the view must reflect. */
  readonly afterTurn: number;
  /** How long to wait for it (0: answer from one read). */
  readonly waitMs: number;
}

/** How far evaluations have got, as answers report it. */
export interface EvaluationProgress {
  /** The latest turn whose evaluation finished, stale skips included. */
  readonly evaluated_through: number | null;
  /** The latest turn an evaluation decided on a state holding it (fired or skipped, not stale). */
  readonly decided_through: number | null;
  /**
   * While the newest turn's decision is an idle deferral (issue 29): when its
   * band is due. A deferral is a decision, so `after_turn` answers at once.
   */
  readonly deferred_until?: string;
}

/** The progress a head records. */
export function progressOf(head: ConversationHead): EvaluationProgress {
  const decided = head.decided_through ?? -1;
  const last = head.last_decision;
  const deferred =
    last?.outcome === "skipped" && last.turn === head.turn_count - 1
      ? last.deferred_until
      : undefined;
  return {
    evaluated_through: head.evaluated_through < 0 ? null : head.evaluated_through,
    decided_through: decided < 0 ? null : decided,
    ...(deferred === undefined ? {} : { deferred_until: deferred }),
  };
}

/** What waiting needs: the clock, and a way to pause (injectable for tests). */
export interface WaitDeps {
  readonly clock: Clock;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Pauses between reads of the head: 50 ms, doubling to at most 1 s. */
export function pollDelayMs(attempt: number): number {
  return Math.min(50 * 2 ** attempt, 1_000);
}

/**
 * Reads the head (with `read`) until an evaluation has decided on a state
 * holding `wait.afterTurn`, and returns that head. An `afterTurn` beyond
 * the stored turns is an {@link InvalidInputError}; a wait that runs out is an
 * {@link EvaluationPendingError}.
 */
export async function awaitDecision(
  read: () => Promise<ConversationHead>,
  wait: EvaluationWait,
  deps: WaitDeps,
): Promise<ConversationHead> {
  const deadline = deps.clock.nowMillis() + wait.waitMs;
  for (let attempt = 0; ; attempt++) {
    const head = await read();
    if (wait.afterTurn >= head.turn_count) {
      throw new InvalidInputError(
        `after_turn ${wait.afterTurn} is not stored yet: the conversation has ${head.turn_count} turn(s), so after_turn can be at most ${head.turn_count - 1}`,
        PROBLEM_VARIANTS.invalidTurn,
      );
    }
    if ((head.decided_through ?? -1) >= wait.afterTurn) return head;
    const remaining = deadline - deps.clock.nowMillis();
    if (remaining <= 0) {
      const progress = progressOf(head);
      throw new EvaluationPendingError(
        `no evaluation has decided on turn ${wait.afterTurn} yet (decided through ${progress.decided_through ?? "none"}, after ${wait.waitMs / 1000} s): retry, or wait longer (wait=S, at most ${MAX_WAIT_SECONDS})`,
        wait.afterTurn,
        progress,
      );
    }
    await deps.sleep(Math.min(pollDelayMs(attempt), remaining));
  }
}
