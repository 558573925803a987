/**
 * Conditional and incremental reads (issue 28): a platform that reads the
 * projection through `AutocompactClient` before every call, ~25 KB turns, in
 * process on the memory store. Per conversation length, one more turn is
 * posted (no band fires) and the view read again: `old` is the bytes a
 * full read answers (what every read moved before), `new` the bytes the
 * client's `since` read answers, beside the new turn's own bytes (its
 * events as JSON). The answer's headers and the request are not counted in
 * either. Must show: `new` ≤ 2× the turn.
 */
import { AutocompactClient } from "../client/index.ts";
import { ALICE_KEY, harness } from "../test/helpers/service.ts";
import { turnOfSize } from "./service.ts";

const TURN_BYTES = 25_000;
const LENGTHS = [20, 100, 240];
const FORMATS = ["jp", "openai-chat"] as const;

export async function benchConditionalReads(): Promise<Record<string, unknown>[]> {
  const results: Record<string, unknown>[] = [];
  for (const format of FORMATS) {
    for (const turns of LENGTHS) {
      const h = harness();
      let answered = 0;
      /** A client of the harness that counts the bytes of the bodies it is answered. */
      const client = () =>
        new AutocompactClient({
          url: "http://bench.test",
          key: ALICE_KEY,
          fetch: async (input, init) => {
            const answer = await h.app.request(input, init);
            const text = await answer.text();
            answered += Buffer.byteLength(text);
            return new Response(text, { status: answer.status, headers: answer.headers });
          },
        });
      const holding = client();
      const options = { format } as { format: "openai-chat" };
      const id = `c-${format}-${turns}`;
      for (let turn = 0; turn < turns; turn++) {
        await h.service.appendTurn({ id: "alice" }, id, {
          turn,
          events: turnOfSize(turn, TURN_BYTES, 28),
        });
      }
      await holding.projection(id, options);
      const events = turnOfSize(turns, TURN_BYTES, 28);
      await h.service.appendTurn({ id: "alice" }, id, { turn: turns, events });
      answered = 0;
      await holding.projection(id, options);
      const since = answered;
      answered = 0;
      await client().projection(id, options);
      const full = answered;
      const turnBytes = Buffer.byteLength(JSON.stringify(events));
      results.push({
        bench: "projection read after a no-fire turn",
        format,
        turns: turns + 1,
        turn_bytes: turnBytes,
        old_bytes: full,
        new_bytes: since,
        new_per_turn: Number((since / turnBytes).toFixed(3)),
        old_per_turn: Number((full / turnBytes).toFixed(1)),
      });
    }
  }
  return results;
}
