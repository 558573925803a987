/**
 * The views tune follows from turn to turn, on hand-counted streams whose
 * views change where a shortcut could miss it: a call left pending, a band
 * over a call answered after it, a call id used twice, reasoning a band
 * keeps, a config change inside a summarized turn. Every expected value is
 * worked out from the streams' characters (chars / 4 tokens); input counts
 * `V_t` for every turn but the last, a miss is `V_t` past the prefix shared
 * with `V_{t-1}` (all of `V_0`).
 */
import { describe, expect, it } from "vitest";
import {
  configDelta,
  message,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../test/helpers/builders.ts";
import type { Entry } from "./events.ts";
import type { PricingProfile } from "./prices.ts";
import { prepareStream } from "./replay.ts";
import { standInSummary, tuneConversation } from "./tune.ts";
import type { TuneConfig } from "./tune-grid.ts";

/** Never fires (keep_last leaves no range). */
const QUIET: TuneConfig = {
  trigger_ratio: 0.9,
  keep_first: 0,
  keep_last: 100,
  reasoning: "strip",
  tool_calls: "strip",
  summary: null,
};

/** A cache that keeps every prefix for an hour, from the first token. */
const OPEN: PricingProfile = {
  name: "anthropic-1h",
  write: 1,
  read: 1,
  lifetime_s: 3600,
  min_tokens: 0,
};

const tune = (stream: Entry[], config: TuneConfig, window: number) =>
  tuneConversation(prepareStream(stream), config, {
    contextWindow: window,
    layers: [{ min_turns: 0 }],
    profile: OPEN,
    summarize: standInSummary,
    curves: true,
  });

/** Turn `t`: its start, a request of `chars` characters `c`, then `rest`. */
const turn = (t: number, c: string, chars: number, ...rest: Entry[]): Entry[] => [
  turnStart(t),
  request(c.repeat(chars), t),
  ...rest,
];

// Turns of 800 chars; turn 1 ends on a call (4 + 2 chars) that turn 2 never answers.
const PENDING = [
  ...turn(0, "a", 400, message("b".repeat(400), 0)),
  ...turn(1, "c", 400, toolCall("p", "look", {}, 1)),
  ...turn(2, "d", 400, message("e".repeat(400), 2)),
  ...turn(3, "f", 400, message("g".repeat(400), 3)),
  ...turn(4, "h", 400),
];

describe("the view tune follows", () => {
  it.each([
    {
      // V: 800, 1,206 (the pending call is the last turn's), then 2,000 and 2,800
      // chars: turn 2 drops the call, so the prefix stops before it (1,200).
      name: "a call left pending drops out when the next turn does not answer it",
      stream: PENDING,
      config: QUIET,
      window: 1e6,
      after: [200, 301.5, 500, 700, 800],
      input: 200 + 301.5 + 500 + 700,
      miss: 200 + 101.5 + 200 + 200,
    },
    {
      // Turn 0 (419 chars) calls with a 15-char argument, turn 1 (2,100) answers
      // with 2,000 chars. Window 2,000 at 0.5: after turn 3 (4,119 chars) the band
      // 0..0 strips the call to "read{}" and the answer, in turn 1, to
      // "[compacted] read: success" (25): 2,131 chars, 400 of them shared.
      name: "a band strips the answer, in the next turn, to a call of its own",
      stream: [
        ...turn(0, "q", 400, toolCall("a", "read", { path: "a.ts" }, 0)),
        turnStart(1),
        toolResult("a", "x".repeat(2000), false, 1),
        message("m".repeat(100), 1),
        ...turn(2, "r", 400, message("s".repeat(400), 2)),
        ...turn(3, "t", 400, message("u".repeat(400), 3)),
        ...turn(4, "v", 400, message("w".repeat(400), 4)),
        ...turn(5, "y", 400),
      ],
      config: { ...QUIET, trigger_ratio: 0.5, keep_last: 3 },
      window: 2000,
      after: [104.75, 629.75, 829.75, 532.75, 732.75, 832.75],
      input: 104.75 + 629.75 + 829.75 + 532.75 + 732.75,
      miss: 104.75 + 525 + 200 + (532.75 - 100) + 200,
    },
    {
      // Both turns call id "c", as alpha then beta. After turn 2 (5,813 chars; window
      // 2,800 at 0.5) the band 0..1 strips each answer to "[compacted] alpha: success"
      // (26) and "[compacted] beta: success" (25): 1,864 chars, 407 of them shared.
      name: "a stripped answer is named after the call of its own turn when another turn reuses the id",
      stream: [
        ...turn(
          0,
          "a",
          400,
          toolCall("c", "alpha", {}, 0),
          toolResult("c", "x".repeat(2000), false, 0),
          message("m".repeat(100), 0),
        ),
        ...turn(
          1,
          "b",
          400,
          toolCall("c", "beta", {}, 1),
          toolResult("c", "y".repeat(2000), false, 1),
          message("n".repeat(100), 1),
        ),
        ...turn(2, "d", 400, message("e".repeat(400), 2)),
        ...turn(3, "f", 400, message("g".repeat(400), 3)),
        ...turn(4, "h", 40),
      ],
      config: { ...QUIET, trigger_ratio: 0.5, keep_last: 1 },
      window: 2800,
      after: [626.75, 1253.25, 466, 666, 676],
      input: 626.75 + 1253.25 + 466 + 666,
      miss: 626.75 + 626.5 + (466 - 101.75) + 200,
    },
    {
      // Turn 0 (2,906 chars) reasons; the rule keeps reasoning and strips tools.
      // After turn 2 (4,506 chars) the band 0..1 cuts the answer to 25 chars:
      // 2,531, its first 806 (request, reasoning, call) shared.
      name: "a band that keeps reasoning keeps it in the view",
      stream: [
        ...turn(
          0,
          "a",
          400,
          reasoning("r".repeat(400), 0),
          toolCall("c0", "read", {}, 0),
          toolResult("c0", "x".repeat(2000), false, 0),
          message("m".repeat(100), 0),
        ),
        ...turn(1, "b", 400, message("n".repeat(400), 1)),
        ...turn(2, "d", 400, message("e".repeat(400), 2)),
        ...turn(3, "f", 40),
      ],
      config: { ...QUIET, trigger_ratio: 0.5, keep_last: 1, reasoning: null },
      window: 2000,
      after: [726.5, 926.5, 632.75, 642.75],
      input: 726.5 + 926.5 + 632.75,
      miss: 726.5 + 200 + (632.75 - 201.5),
    },
    {
      // Turn 0 (8,000 chars) holds a config change. After turn 2 (9,600) the
      // summary band 0..0 replaces it with the 34-char request and an 800-char
      // stand-in, the config change kept after them: 2,434 chars, none shared.
      // Turn 3's pending call (406) and turn 4 (dropping it) extend that view.
      name: "a summarized turn's config change stays in the view after the summary",
      stream: [
        turnStart(0),
        configDelta({}, 0),
        request("a".repeat(4000), 0),
        message("b".repeat(4000), 0),
        ...turn(1, "c", 400, message("d".repeat(400), 1)),
        ...turn(2, "e", 400, message("f".repeat(400), 2)),
        ...turn(3, "g", 400, toolCall("p", "look", {}, 3)),
        ...turn(4, "h", 400, message("i".repeat(400), 4)),
        ...turn(5, "j", 40),
      ],
      config: {
        ...QUIET,
        trigger_ratio: 0.5,
        keep_last: 2,
        reasoning: null,
        tool_calls: null,
        summary: {},
      },
      window: 4000,
      after: [2000, 2200, 608.5, 710, 908.5, 918.5],
      input: 2000 + 2200 + 608.5 + 710 + 908.5,
      miss: 2000 + 200 + 608.5 + 101.5 + 200,
    },
  ])("$name", async ({ stream, config, window, after, input, miss }) => {
    const metrics = await tune(stream, config, window);
    expect(metrics.after).toEqual(after);
    expect(metrics.input_tokens).toBe(input);
    expect(metrics.cache_miss_tokens).toBe(miss);
  });

  it("reads from the cache what the view before and the turn share with the next call", async () => {
    // Calls (one a turn, turn 4 has none): 400, 1,200, 1,606 and 2,400 chars in.
    // Each after the first reads the previous call's input up to where the view
    // changed: all 400, all 1,200 (the pending call still in the view), then
    // 1,200 of 1,606 (the call dropped out after turn 2).
    const metrics = await tune(PENDING, QUIET, 1e6);
    expect(metrics.call_inputs).toEqual([100, 300, 401.5, 600]);
    expect(metrics.cache_read_tokens).toBe(0 + 100 + 300 + 300);
    expect(metrics.cache_write_tokens).toBe(100 + 200 + 101.5 + 300);
  });
});
