/**
 * What both summarizer adapters share: option defaults and checks, the
 * prompt, the timeout (an `AbortSignal` that fires after `timeoutMs`), and the
 * rule that an empty answer is an error, never a summary.
 */
import {
  buildSummaryMessages,
  type SummaryMessages,
  type TranscriptBudget,
} from "../../core/transcript.ts";
import { EmptySummaryError, SummarizerError } from "../errors.ts";
import type { SummaryRequest } from "../ports.ts";

/** The longest summary asked for, in output tokens. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/**
 * How long one summary may take, in ms, from the request to the last byte of
 * the answer. The compactor Lambda's timeout (and so the queue's visibility
 * timeout) must leave room for it.
 */
export const DEFAULT_SUMMARY_TIMEOUT_MS = 120_000;

/** Options every adapter takes. */
export interface SummarizerOptions {
  /** Answer length limit in tokens (default {@link DEFAULT_MAX_OUTPUT_TOKENS}). */
  readonly maxOutputTokens?: number;
  /** Timeout of one summary in ms (default {@link DEFAULT_SUMMARY_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  /** Budgets of the transcript (defaults: core/transcript.ts). */
  readonly transcript?: TranscriptBudget;
}

/** Validates a positive whole-number option. */
function positiveOption(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved <= 0) {
    throw new RangeError(`${name} must be a positive whole number (got ${String(value)})`);
  }
  return resolved;
}

/** "turns 3..8" for messages. */
export function bandName(request: Pick<SummaryRequest, "from_turn" | "to_turn">): string {
  return `turns ${request.from_turn}..${request.to_turn}`;
}

/**
 * Runs `call` with a signal that aborts after `timeoutMs`, or earlier when
 * `deadline` (the caller's: the port's `SummarizeOptions.signal`) aborts. A failure
 * after the abort is a {@link SummarizerError} with `timeoutMs` (504): the
 * adapter's timeout, or the time waited until the deadline; any other failure
 * is passed to `wrap` (which returns the error to throw).
 */
async function withTimeout<T>(
  timeoutMs: number,
  describe: { readonly what: string; readonly model: string },
  call: (signal: AbortSignal) => Promise<T>,
  wrap: (error: unknown) => Error,
  deadline?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const started = performance.now();
  let waited: number | undefined;
  const onDeadline = () => {
    if (controller.signal.aborted) return; // the adapter's own timeout came first
    waited = elapsedMs(started);
    controller.abort();
  };
  if (deadline?.aborted) onDeadline();
  else deadline?.addEventListener("abort", onDeadline, { once: true });
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    return await call(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) {
      throw new SummarizerError(
        waited === undefined
          ? `${describe.what}: no answer within ${timeoutMs} ms`
          : `${describe.what}: no answer before the caller's deadline (${waited} ms)`,
        { timeoutMs: waited ?? timeoutMs, cause: error, model: describe.model },
      );
    }
    throw error instanceof SummarizerError ? error : wrap(error);
  } finally {
    clearTimeout(timer);
    deadline?.removeEventListener("abort", onDeadline);
  }
}

/** The summary text, trimmed; an empty answer is an {@link EmptySummaryError}. */
export function requireText(text: string, what: string): string {
  const trimmed = text.trim();
  if (trimmed === "") throw new EmptySummaryError(`${what}: the model answered with no text`);
  return trimmed;
}

/** Milliseconds since `started` (a `performance.now()` reading), rounded. */
function elapsedMs(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}

/**
 * What both adapters do around their one request to a model: the options
 * checked once (a `RangeError` names the bad one), the prompt built from the
 * request's raw events, and the request bounded by the timeout and the
 * caller's deadline, and timed.
 */
export class ModelCaller {
  /** Answer length limit in tokens. */
  readonly maxOutputTokens: number;
  readonly #timeoutMs: number;
  readonly #transcript: TranscriptBudget;

  constructor(options: SummarizerOptions) {
    this.maxOutputTokens = positiveOption(
      "maxOutputTokens",
      options.maxOutputTokens,
      DEFAULT_MAX_OUTPUT_TOKENS,
    );
    this.#timeoutMs = positiveOption("timeoutMs", options.timeoutMs, DEFAULT_SUMMARY_TIMEOUT_MS);
    this.#transcript = options.transcript ?? {};
  }

  /** The system and user messages asking for `request`'s summary (core/transcript.ts). */
  prompt(request: SummaryRequest): SummaryMessages {
    return buildSummaryMessages(request, this.#transcript);
  }

  /** `call` under {@link withTimeout}'s rules, with its latency in ms. */
  async call<T>(
    describe: { readonly what: string; readonly model: string },
    call: (signal: AbortSignal) => Promise<T>,
    wrap: (error: unknown) => Error,
    deadline?: AbortSignal,
  ): Promise<{ readonly answer: T; readonly latencyMs: number }> {
    const started = performance.now();
    const answer = await withTimeout(this.#timeoutMs, describe, call, wrap, deadline);
    return { answer, latencyMs: elapsedMs(started) };
  }
}
