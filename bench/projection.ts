/**
 * `GET /projection` with one band (issue 28, materialized bands), on
 * DynamoDB Local with ~25 KB turns, bytes exact from the items every read
 * returns: a conversation of 20, 240 and 1,000 turns whose first firing
 * stripped every turn but the kept ones, then read its view. `old` reads it
 * on a store that lists and keeps no materialized form (every raw turn read,
 * as every read did before); the firing writes no form, so `new_first` (the
 * first read) reads the raw turns and keeps the band's form, and `new` (every
 * read after) reads the band's form and the raw turns outside it.
 * `answer_bytes` is the answer's JSON.
 */
import { performance } from "node:perf_hooks";
import { evaluateTurn } from "../functions/compactor/evaluate-turn.ts";
import { ConversationService } from "../functions/conversations/service.ts";
import { overriding } from "../test/helpers/overriding.ts";
import { RecordingQueue } from "../test/helpers/service.ts";
import { withCountedStore } from "./counted-store.ts";
import { turnOfSize } from "./service.ts";

const TURN_BYTES = 25_000;

export async function benchProjection(): Promise<Record<string, unknown>[]> {
  return withCountedStore(async ({ store, counter, tenants }) => {
    const settings = { config: { enabled: true, min_turns: 5 } };
    const old = overriding(store, {
      listMaterialized: async () => [],
      addMaterialized: async () => false,
    });
    const services = {
      old: new ConversationService({ store: old, queue: new RecordingQueue(), settings }),
      new: new ConversationService({ store, queue: new RecordingQueue(), settings }),
    };
    const results: Record<string, unknown>[] = [];
    for (const atTurn of [20, 240, 1000]) {
      const id = `projection-${atTurn}`;
      for (let t = 0; t <= atTurn; t++) {
        await services.new.appendTurn({ id: "t" }, id, {
          turn: t,
          events: turnOfSize(t, TURN_BYTES, 1),
          model: { context_window: 40_000 },
        });
      }
      const outcome = await evaluateTurn(
        { store, tenants, settings },
        { tenant: "t", conversation: id, turn: atTurn },
      );
      if (outcome.outcome !== "fired") throw new Error(`${id}: ${outcome.outcome}`);
      const row: Record<string, unknown> = { bench: "projection.one_band", turn: atTurn };
      const answers: string[] = [];
      // The band's firing wrote no form: the first read builds it, the ones after read it.
      for (const mode of ["old", "new_first", "new"] as const) {
        counter.bytes = 0;
        counter.requests = 0;
        const start = performance.now();
        const answer = await services[mode === "old" ? "old" : "new"].projection({ id: "t" }, id);
        const ms = performance.now() - start;
        const json = JSON.stringify(answer);
        answers.push(json);
        row[`${mode}_bytes_read`] = counter.bytes;
        row[`${mode}_reads`] = counter.requests;
        row[`${mode}_ms`] = Number(ms.toFixed(2));
        row.answer_bytes = Buffer.byteLength(json);
        row[`${mode}_read_to_answer`] = Number(
          (counter.bytes / Buffer.byteLength(json)).toFixed(2),
        );
      }
      if (new Set(answers).size !== 1) throw new Error(`${id}: old and new answers differ`);
      results.push(row);
    }
    return results;
  });
}
