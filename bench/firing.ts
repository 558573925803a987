/**
 * Firing in O(band) (issue 28), on DynamoDB Local with ~25 KB turns, bytes
 * exact from the items every read returns:
 * - the first firing at turns 20, 240 and 1,000 (one band over every turn
 *   but the kept ones), and
 * - a 1,000-turn conversation evaluated after every turn with a window it
 *   fills every few turns (firing often): the evaluations' bytes in total.
 * `old` runs the same evaluations on a store whose size records carry no
 * running totals and whose head no `latest_band_at` (records stored before
 * them): the fallback, which reads every size record and every band, as every
 * firing did before; `new` reads the head and the records at the band's ends.
 */
import { performance } from "node:perf_hooks";
import { evaluateTurn } from "../functions/compactor/evaluate-turn.ts";
import { ConversationService } from "../functions/conversations/service.ts";
import type { ConversationStore } from "../functions/ports.ts";
import { overriding } from "../test/helpers/overriding.ts";
import { RecordingQueue } from "../test/helpers/service.ts";
import { withCountedStore } from "./counted-store.ts";
import { turnOfSize } from "./service.ts";

const TURN_BYTES = 25_000;

/** `store` as it reads a conversation stored before the running totals. */
function withoutTotals(store: ConversationStore): ConversationStore {
  const strip = <T extends { totals?: unknown }>({ totals: _totals, ...rest }: T) => rest;
  return overriding(store, {
    getHead: async (ref) => {
      const head = await store.getHead(ref);
      if (!head) return head;
      const { latest_band_at: _latest, ...rest } = head;
      return rest;
    },
    listTurnSizes: async (ref) => (await store.listTurnSizes(ref)).map(strip),
    getTurnSizes: async (ref, turns) => (await store.getTurnSizes(ref, turns)).map(strip),
  });
}

export async function benchFiring(): Promise<Record<string, unknown>[]> {
  return withCountedStore(async ({ store, counter, tenants }) => {
    const settings = { config: { enabled: true, min_turns: 5 } };
    const service = new ConversationService({ store, queue: new RecordingQueue(), settings });
    const stores = { old: withoutTotals(store), new: store };
    const append = (id: string, turn: number, window: number) =>
      service.appendTurn({ id: "t" }, id, {
        turn,
        events: turnOfSize(turn, TURN_BYTES, 1),
        model: { context_window: window },
      });
    const evaluate = async (mode: keyof typeof stores, id: string, turn: number) => {
      counter.bytes = 0;
      counter.requests = 0;
      const start = performance.now();
      const outcome = await evaluateTurn(
        { store: stores[mode], tenants, settings },
        { tenant: "t", conversation: id, turn },
      );
      return {
        outcome: outcome.outcome,
        ms: performance.now() - start,
        bytes: counter.bytes,
        requests: counter.requests,
      };
    };
    const results: Record<string, unknown>[] = [];
    for (const atTurn of [20, 240, 1000]) {
      const row: Record<string, unknown> = { bench: "firing.first", turn: atTurn };
      for (const mode of ["old", "new"] as const) {
        const id = `first-${atTurn}-${mode}`;
        for (let t = 0; t <= atTurn; t++) await append(id, t, 40_000);
        const run = await evaluate(mode, id, atTurn);
        if (run.outcome !== "fired") throw new Error(`${id}: ${run.outcome}`);
        row[`${mode}_bytes_read`] = run.bytes;
        row[`${mode}_reads`] = run.requests;
        row[`${mode}_ms`] = Number(run.ms.toFixed(2));
      }
      results.push(row);
    }
    // Firing often: every turn posted, then evaluated; the window fills every few turns.
    const TURNS = 1000;
    const row: Record<string, unknown> = { bench: "firing.often", turns: TURNS };
    for (const mode of ["old", "new"] as const) {
      const id = `often-${mode}`;
      let total = 0;
      let firings = 0;
      let maxFiring = 0;
      let appendBytes = 0;
      const firingBytes: number[] = [];
      for (let t = 0; t < TURNS; t++) {
        counter.bytes = 0;
        await append(id, t, 40_000);
        appendBytes += counter.bytes;
        const run = await evaluate(mode, id, t);
        total += run.bytes;
        if (run.outcome === "fired") {
          firings++;
          maxFiring = Math.max(maxFiring, run.bytes);
          firingBytes.push(run.bytes);
        }
      }
      const quarter = (q: number) => {
        const part = firingBytes.slice(
          Math.floor((q * firingBytes.length) / 4),
          Math.floor(((q + 1) * firingBytes.length) / 4),
        );
        return Math.round(part.reduce((a, b) => a + b, 0) / Math.max(1, part.length));
      };
      row[`${mode}_firings`] = firings;
      row[`${mode}_evaluation_bytes_total`] = total;
      row[`${mode}_firing_bytes_max`] = maxFiring;
      // The mean firing's bytes in each quarter of the conversation: flat is O(1) per firing.
      row[`${mode}_firing_bytes_mean_by_quarter`] = [0, 1, 2, 3].map(quarter);
      row[`${mode}_append_bytes_total`] = appendBytes;
    }
    results.push(row);
    return results;
  });
}
