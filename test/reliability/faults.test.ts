/**
 * Fault injection on the whole service: the Hono app, the in-process queue
 * (SQS FIFO semantics: visibility timeout, 5 receives then the dead-letter
 * list, one message of a group out at a time) and the compactor handler, on
 * DynamoDB Local, wired as functions/local/runtime.ts wires them, but with
 * the faults below injected (test/helpers/fault-stack.ts).
 *
 * 1. A summarizer that hangs past the compactor's deadline: the record fails
 *    at its deadline (its share of the batch's remaining time), nothing is
 *    committed, the batch answers in time and its other records go on.
 * 2. Throttling storms on every DynamoDB call of the api and the compactor
 *    (ThrottlingException / ProvisionedThroughputExceededException answers),
 *    absorbed by the SDK's adaptive retry.
 * 3. A poison message amid healthy ones from other conversations: only the
 *    poison is dead-lettered, and only its own conversation waits for it.
 * 4. Duplicate and reordered deliveries during a reset of the compactions,
 *    with the compactor's band write caught in the middle of the reset.
 * 5. Idle timers (issue 29) delivered early, twice and late: one band, the
 *    one the turn's own evaluation would have fired.
 *
 * Every scenario checks, against core's `simulateStream`/`evaluateStream` on
 * the same streams: the bands created (exactly the expected), turns lost
 * (none), 5xx answered (none), messages processed and dead-lettered. The
 * figures are printed at the end. Nothing sleeps for a fixed time: the test
 * waits for the queue to drain, or for a condition.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AutoConfigLayer } from "../../core/config.ts";
import { estimateStream } from "../../core/estimate.ts";
import type { Entry } from "../../core/events.ts";
import { evaluateStream, simulateStream } from "../../core/replay.ts";
import { readStream } from "../../functions/conversations/state.ts";
import { SummarizerError } from "../../functions/errors.ts";
import type { ConversationStore, EvaluationMessage } from "../../functions/ports.ts";
import { encodeMessageBody, messageGroupId } from "../../functions/queue/message.ts";
import { OpenAiCompatibleSummarizer } from "../../functions/summarizers/openai.ts";
import {
  AUTO,
  bandsOf,
  conversation,
  type Delivery,
  type Evaluation,
  firingsOf,
  MODEL,
  startStack,
  TENANT,
  ThrottlingStorms,
} from "../helpers/fault-stack.ts";
import { chatCompletion, type ModelStub, startModelStub } from "../helpers/model-stub.ts";
import { overriding } from "../helpers/overriding.ts";
import { ManualClock, RecordingTimers } from "../helpers/service.ts";

const report: Record<string, Record<string, unknown>> = {};

beforeAll(() => {
  // EMF lines are the operator's; keep the test output to the figures.
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
});

afterAll(() => {
  vi.unstubAllEnvs();
  console.log(`fault injection figures:\n${JSON.stringify(report, null, 2)}`);
});

describe("fault injection", () => {
  it("a summarizer that hangs past the compactor's deadline fails only its record, in time; the retry summarizes", async () => {
    const SUMMARY = "What happened so far: files read, tests fixed.";
    let hangs = 0;
    const stub: ModelStub = await startModelStub((request) => {
      // The first summary of conversation "slow" never answers.
      if (request.raw.includes("[slow]") && hangs === 0) {
        hangs++;
        return "hang";
      }
      return chatCompletion(SUMMARY);
    });
    const layers: AutoConfigLayer[] = [{ ...AUTO, rule: { summary: {} } }];
    // The summarizer's own timeout (2 minutes) is far beyond the queue's visibility timeout.
    const summarizer = new OpenAiCompatibleSummarizer({ baseUrl: `${stub.url}/v1` });
    const VISIBILITY = 4_000;
    const s = await startStack({
      settings: { config: layers[0] as AutoConfigLayer },
      summarizer,
      visibilityTimeoutMs: VISIBILITY,
    });
    try {
      const conversations = {
        slow: await conversation(11, 10, { layers, mark: "[slow]", summary: SUMMARY }),
        a: await conversation(12, 10, { layers, summary: SUMMARY }),
        b: await conversation(13, 10, { layers, summary: SUMMARY }),
      };
      for (let turn = 0; turn < 10; turn++) {
        // One batch per turn, "slow" first: its deadline is a third of the time left.
        await s.step(async () => {
          for (const [id, c] of Object.entries(conversations)) await s.post(id, c.turns, turn);
        });
      }

      let expectedBands = 0;
      for (const [id, c] of Object.entries(conversations)) {
        expect(c.firings.length).toBeGreaterThan(0);
        expectedBands += c.firings.length;
        const bands = await s.autoBands(id);
        expect(bandsOf(bands), id).toEqual(firingsOf(c.firings));
        for (const band of bands) expect(band.compaction.summary).toEqual({ summary: SUMMARY });
      }
      expect(hangs).toBe(1);
      // The hung summary failed as a timeout at the record's deadline, not at the adapter's 2 minutes.
      const failed = s.evaluations.filter((e) => e.error !== undefined);
      expect(failed).toHaveLength(1);
      const [hung] = failed as [Evaluation];
      expect(hung.message.conversation).toBe("slow");
      expect(hung.error).toBeInstanceOf(SummarizerError);
      expect(hung.error).toMatchObject({ status: 504, type: "/problems/summary-timeout" });
      expect((hung.error as SummarizerError).timeoutMs).toBeLessThan(VISIBILITY);
      // Its batch answered before the deadline (a Lambda would not have timed out), and so did every other.
      expect(s.leftAtAnswer.every((left) => left > 0)).toBe(true);
      // Only the hung record failed; it was received once more and succeeded.
      const failures = s.deliveries.filter((d) => !d.ok);
      expect(failures).toHaveLength(1);
      const hungBody = JSON.parse((failures[0] as Delivery).body) as EvaluationMessage;
      expect(hungBody.conversation).toBe("slow");
      const hungBatch = s.deliveries.filter((d) => d.batch === (failures[0] as Delivery).batch);
      expect(hungBatch.map((d) => [JSON.parse(d.body).conversation, d.ok])).toEqual([
        ["slow", false],
        ["a", true],
        ["b", true],
      ]);
      expect(
        s.deliveries
          .filter((d) => d.id === (failures[0] as Delivery).id)
          .map((d) => d.receiveCount),
      ).toEqual([1, 2]);

      const figures = await s.figures(expectedBands);
      report["summarizer hangs past the deadline"] = {
        ...figures,
        summaries_aborted_at_deadline: failed.length,
        hung_summary_waited_ms: (hung.error as SummarizerError).timeoutMs,
      };
      expect(figures).toMatchObject({
        turns_posted: 30,
        messages_sent: 30,
        messages_processed: 30,
        deliveries: 31,
        dead_lettered: 0,
        bands_created: expectedBands,
        turns_lost: 0,
        answers_5xx: 0,
      });
    } finally {
      await s.stop();
      await stub.close();
    }
  }, 60_000);

  it("throttling storms on every DynamoDB call: retried by the SDK, nothing lost, no 5xx, exactly the bands", async () => {
    const storms = new ThrottlingStorms();
    const s = await startStack({ visibilityTimeoutMs: 30_000, storms });
    try {
      const TURNS = 7;
      const conversations = {
        a: await conversation(22, TURNS), // fires after turns 5 and 6
        d: await conversation(28, TURNS), // never fires: a skip in every storm
      };
      // Two storms, over turns 5 and 6: appends (auth, the append transaction),
      // and evaluations that fire (head, tenant, turn sizes, compactions, the
      // band's transaction) and that skip (head, tenant, evaluated mark). Each
      // hits every operation of the api's and the compactor's clients; the SDK
      // retries. (Late in the scenario: see ThrottlingStorms on the adaptive
      // mode's slowdown, which outlasts a storm by seconds.)
      const STORMS = [5, 6];
      for (let turn = 0; turn < TURNS; turn++) {
        storms.storm(STORMS.includes(turn) ? "every operation" : undefined);
        await s.step(async () => {
          await Promise.all(
            Object.entries(conversations).map(([id, c]) => s.post(id, c.turns, turn)),
          );
        });
        storms.storm(undefined);
      }

      let expectedBands = 0;
      for (const [id, c] of Object.entries(conversations)) {
        expectedBands += c.firings.length;
        expect(bandsOf(await s.autoBands(id)), id).toEqual(firingsOf(c.firings));
      }
      // Every operation the service sent was throttled at least once.
      expect([...storms.throttled.keys()].sort()).toEqual([...storms.sent.keys()].sort());
      // A firing reads the size records at its band's ends by GetItem: no Query is sent.
      expect([...storms.sent.keys()]).toEqual(
        expect.arrayContaining(["GetItem", "TransactWriteItems", "UpdateItem"]),
      );
      expect(s.deliveries.every((d) => d.ok)).toBe(true);
      expect(s.leftAtAnswer.every((left) => left > 0)).toBe(true);

      const figures = await s.figures(expectedBands);
      report["throttling storms"] = {
        ...figures,
        requests_sent: storms.total(storms.sent),
        requests_throttled: storms.total(storms.throttled),
        throttled_by_operation: Object.fromEntries(storms.throttled),
      };
      expect(figures).toMatchObject({
        turns_posted: 14,
        messages_sent: 14,
        messages_processed: 14,
        deliveries: 14,
        dead_lettered: 0,
        bands_created: expectedBands,
        turns_lost: 0,
        answers_5xx: 0,
      });
      expect(expectedBands).toBe(2);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it("a poison message amid healthy ones from other conversations: only it is dead-lettered, only its conversation waits", async () => {
    const s = await startStack({ visibilityTimeoutMs: 1_000 });
    try {
      const TURNS = 7;
      const POISON_TURN = 3;
      const conversations = {
        p: await conversation(31, TURNS),
        a: await conversation(32, TURNS),
        b: await conversation(33, TURNS),
        c: await conversation(34, TURNS),
      };
      // Not an evaluation message, in conversation p's message group.
      const POISON = JSON.stringify({ tenant: TENANT, conversation: "p", turn: "three" });
      for (let turn = 0; turn < POISON_TURN; turn++) {
        await s.step(async () => {
          for (const [id, c] of Object.entries(conversations)) await s.post(id, c.turns, turn);
        });
      }
      // One batch: the poison, then a, b and c's turn 3 (p's waits behind the poison).
      await s.pause();
      await s.send(POISON, messageGroupId({ tenant: TENANT, conversation: "p" }), "poison-1");
      for (const [id, c] of Object.entries(conversations)) await s.post(id, c.turns, POISON_TURN);
      s.start();
      // Each conversation goes on as soon as its turn is evaluated.
      await Promise.all(
        Object.entries(conversations).map(async ([id, c]) => {
          await s.evaluated(id, POISON_TURN);
          for (let turn = POISON_TURN + 1; turn < TURNS; turn++) {
            await s.post(id, c.turns, turn);
            await s.evaluated(id, turn);
          }
        }),
      );
      await s.queue.drain();

      let expectedBands = 0;
      for (const [id, c] of Object.entries(conversations)) {
        expectedBands += c.firings.length;
        expect(bandsOf(await s.autoBands(id)), id).toEqual(firingsOf(c.firings));
      }
      const dead = s.queue.deadLetters();
      expect(dead.map((d) => [d.body, d.receive_count])).toEqual([[POISON, 5]]);
      const poison = s.deliveries.filter((d) => d.body === POISON);
      expect(poison.map((d) => [d.receiveCount, d.ok])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, false],
        [5, false],
      ]);
      // Only the poison ever failed; its first batch's other records went through.
      expect(s.deliveries.filter((d) => !d.ok).every((d) => d.body === POISON)).toBe(true);
      const first = s.deliveries.filter((d) => d.batch === poison[0]?.batch);
      const keyOf = (d: Delivery) => {
        const m = JSON.parse(d.body) as EvaluationMessage;
        return `${m.conversation}#${m.turn}`;
      };
      expect(first.map((d) => [keyOf(d), d.ok])).toEqual([
        ["p#three", false],
        ["a#3", true],
        ["b#3", true],
        ["c#3", true],
      ]);
      // p's turn 3 was delivered only after the poison was dead-lettered.
      const [deadAt] = s.deadLetteredAfter as [number];
      const p3 = s.deliveries.findIndex((d) => d.body !== POISON && keyOf(d) === "p#3");
      expect(p3).toBeGreaterThanOrEqual(deadAt);
      const healthyWhileCycling = s.deliveries
        .slice(0, deadAt)
        .filter((d) => d.body !== POISON && d.ok).length;

      const figures = await s.figures(expectedBands);
      report["poison message"] = {
        ...figures,
        poison_receives: poison.length,
        healthy_processed_while_poison_cycled: healthyWhileCycling,
      };
      expect(figures).toMatchObject({
        turns_posted: 28,
        messages_sent: 29,
        messages_processed: 28,
        dead_lettered: 1,
        bands_created: expectedBands,
        turns_lost: 0,
        answers_5xx: 0,
      });
      expect(expectedBands).toBeGreaterThan(0);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it("duplicate and reordered deliveries during a reset: one band, decided on the state after the reset", async () => {
    // The compactor's first band write after `gate.armed` waits until the test lets it go.
    const gate: { armed: boolean; reached: boolean; release: () => void } = {
      armed: false,
      reached: false,
      release: () => {},
    };
    const opened = new Promise<void>((resolve) => {
      gate.release = resolve;
    });
    const s = await startStack({
      visibilityTimeoutMs: 30_000,
      compactorStore: (inner) =>
        overriding(inner, {
          addCompaction: async (...args: Parameters<ConversationStore["addCompaction"]>) => {
            if (gate.armed && !gate.reached) {
              gate.reached = true;
              await opened;
            }
            return inner.addCompaction(...args);
          },
        }),
    });
    try {
      const c = await conversation(41, 16);
      // K: the last turn evaluated before the reset. Turns K+1..K+3 arrive; the
      // compactor evaluates K+3 (the others are stale). Chosen so that K+3 fires
      // both on the state before the reset (so its write meets the reset) and
      // after it, over different ranges (so the band shows which state won).
      const evaluateAt = (entries: Entry[]) =>
        evaluateStream(entries, { layers: [AUTO], model: MODEL, nowMillis: 0 });
      let K = -1;
      let expectedAfterReset: { from: number; to: number } | undefined;
      for (let k = 5; k + 3 < c.turns.length; k++) {
        const before = await simulateStream(c.turns.slice(0, k + 1).flat(), {
          layers: [AUTO],
          model: MODEL,
        });
        const next = c.turns.slice(k + 1, k + 4).flat();
        const preReset = await evaluateAt([...before.entries, ...next]);
        const postReset = await evaluateAt(c.turns.slice(0, k + 4).flat());
        if (
          before.firings.length > 0 &&
          preReset.kind === "fire" &&
          postReset.kind === "fire" &&
          preReset.decision.range.from_turn !== postReset.decision.range.from_turn
        ) {
          K = k;
          expectedAfterReset = {
            from: postReset.decision.range.from_turn,
            to: postReset.decision.range.to_turn,
          };
          break;
        }
      }
      expect(K).toBeGreaterThan(0);
      const phase1 = c.firings.filter((f) => f.turn <= K);
      for (let turn = 0; turn <= K; turn++) await s.step(() => s.post("r", c.turns, turn));
      expect(bandsOf(await s.autoBands("r"))).toEqual(firingsOf(phase1));

      // Turns K+1..K+3 are stored; their messages are held and delivered as
      // SQS may: the newest first, then the others late, some twice, one old.
      s.forwarder.hold = true;
      for (let turn = K + 1; turn <= K + 3; turn++) await s.post("r", c.turns, turn);
      const held = s.held.splice(0);
      expect(held.map((m) => m.turn)).toEqual([K + 1, K + 2, K + 3]);
      const [m1, m2, m3] = held as [EvaluationMessage, EvaluationMessage, EvaluationMessage];
      const old: EvaluationMessage = { tenant: TENANT, conversation: "r", turn: K - 1 };
      gate.armed = true;
      const order = [m3, m1, m3, m2, m2, old];
      for (const [i, m] of order.entries()) {
        await s.send(encodeMessageBody(m), messageGroupId(m), `redelivery-${i}`);
      }
      // The newest turn's evaluation decided on the state before the reset and is about to write.
      await vi.waitFor(() => expect(gate.reached).toBe(true), { timeout: 30_000, interval: 10 });
      const reset = await s.request("DELETE", "/v1/conversations/r/compactions");
      expect(reset.status).toBe(200);
      const { removed } = (await reset.json()) as { removed: unknown[] };
      expect(removed).toHaveLength(phase1.length);
      gate.release();
      await s.queue.drain();

      // Its write lost to the reset, was decided again on the state after it.
      expect(bandsOf(await s.autoBands("r"))).toEqual([{ turn: K + 3, ...expectedAfterReset }]);
      const outcomes = s.evaluations
        .slice(-order.length)
        .map((e) => [
          e.message.turn,
          e.outcome?.outcome,
          e.outcome && "reason" in e.outcome ? e.outcome.reason : undefined,
        ]);
      expect(outcomes).toEqual([
        [K + 3, "fired", undefined],
        [K + 1, "skipped", "already_evaluated"],
        [K + 3, "skipped", "already_evaluated"],
        [K + 2, "skipped", "already_evaluated"],
        [K + 2, "skipped", "already_evaluated"],
        [K - 1, "skipped", "already_evaluated"],
      ]);
      const head = await s.store.getHead(s.ref("r"));
      expect(head?.evaluated_through).toBe(K + 3);
      expect(head?.projected_chars).toBe(
        estimateStream(await readStream(s.store, s.ref("r"))).chars,
      );

      const figures = await s.figures(1);
      report["duplicate and reordered deliveries during a reset"] = {
        ...figures,
        bands_before_reset: phase1.length,
        bands_removed_by_reset: removed.length,
      };
      expect(figures).toMatchObject({
        turns_posted: K + 4,
        messages_sent: K + 1 + order.length,
        messages_processed: K + 1 + order.length,
        deliveries: K + 1 + order.length,
        dead_lettered: 0,
        bands_created: 1,
        turns_lost: 0,
        answers_5xx: 0,
      });
    } finally {
      gate.release();
      await s.stop();
    }
  }, 60_000);
  it("idle timers delivered early, twice and late: one band, the one the turn's own evaluation fires", async () => {
    // Turn 5 of this conversation crosses the threshold at 96% of the window: below hard_ratio.
    const IDLE: AutoConfigLayer = { ...AUTO, when: "idle", idle_seconds: 300, hard_ratio: 0.99 };
    const clock = new ManualClock();
    // The timer transport is the fault: the test delivers each timer as often and when it likes.
    const timers = new RecordingTimers();
    const s = await startStack({
      settings: { config: IDLE },
      visibilityTimeoutMs: 30_000,
      clock,
      timers,
    });
    try {
      // Turn mode's first firing (core's replay), at turn K: the turns up to K are posted, then the conversation rests.
      const c = await conversation(51, 12);
      const [first] = c.firings;
      expect(first).toBeDefined();
      const K = first?.turn ?? -1;
      for (let turn = 0; turn <= K; turn++) await s.step(() => s.post("i", c.turns, turn));
      const postedAt = clock.now;
      const [timer, ...others] = timers.take();
      expect(others).toEqual([]);
      expect(timer).toMatchObject({
        message: { turn: K, idle_from_ms: postedAt },
        dueMillis: postedAt + 300_000,
      });
      const message = timer?.message as EvaluationMessage;
      expect(await s.autoBands("i")).toEqual([]);
      let copies = 0;
      const deliver = (...bodies: EvaluationMessage[]) =>
        s.step(async () => {
          for (const body of bodies) {
            const id = `timer-copy-${copies++}`;
            await s.send(encodeMessageBody(body), id, id);
          }
        });

      // Early (the rest not over): it defers again, for the same due time, and writes nothing.
      clock.now = postedAt + 100_000;
      await deliver(message);
      const [again, ...more] = timers.take();
      expect(more).toEqual([]);
      expect(again).toEqual(timer);
      // Due: the timer twice and the early one's re-deferral, in one batch.
      clock.now = postedAt + 300_000;
      await deliver(message, message, again?.message as EvaluationMessage);
      // Late: an hour after, a copy SQS kept.
      clock.now = postedAt + 3_600_000;
      await deliver(message);

      expect(bandsOf(await s.autoBands("i"))).toEqual(firingsOf([first as (typeof c.firings)[0]]));
      const [band] = await s.autoBands("i");
      expect(band?.compaction.trigger).toMatchObject({
        turn: K,
        when: "idle",
        rested_seconds: 300,
      });
      const timerOutcomes = s.evaluations
        .filter((e) => e.message.idle_from_ms !== undefined)
        .map((e) => (e.outcome && "reason" in e.outcome ? e.outcome.reason : e.outcome?.outcome));
      expect(timerOutcomes).toEqual([
        "deferred_until_idle",
        "fired",
        "already_evaluated",
        "already_evaluated",
        "already_evaluated",
      ]);
      expect(s.evaluations.filter((e) => e.outcome?.outcome === "fired")).toHaveLength(1);
      expect(timers.take()).toEqual([]);

      const figures = await s.figures(1);
      report["idle timers early, doubled and late"] = { ...figures, timer_deliveries: copies };
      expect(figures).toMatchObject({
        turns_posted: K + 1,
        messages_sent: K + 1 + copies,
        messages_processed: K + 1 + copies,
        dead_lettered: 0,
        bands_created: 1,
        turns_lost: 0,
        answers_5xx: 0,
      });
    } finally {
      await s.stop();
    }
  }, 60_000);
});
