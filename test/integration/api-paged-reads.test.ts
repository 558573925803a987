/**
 * Paged reads on DynamoDB Local (issue 25 item 4): `GET …/events` reads only
 * the page's range of turns (chunked items included) and answers pages of at
 * most 5 MiB with `next_cursor`, joined the stored stream.
 */
import { describe, expect, it } from "vitest";
import { DynamoConversationStore } from "../../functions/store/dynamodb.ts";
import { bigToolTurn } from "../helpers/builders.ts";
import { freshTable, localClient } from "../helpers/dynamodb.ts";
import { harness } from "../helpers/service.ts";

/** 5 MiB: what no answer may pass (Lambda answers at most 6 MB). */
const FIVE_MIB = 5_242_880;

describe("paged reads on DynamoDB", () => {
  it("answers a 7.5 MB conversation's events and projection in pages of at most 5 MiB", async () => {
    const client = localClient();
    const store = new DynamoConversationStore(client, await freshTable(client, "paged"));
    const h = harness({ store });
    for (const turn of [0, 1, 2]) {
      const posted = await h.request("POST", "/v1/conversations/big/turns", {
        turn,
        events: bigToolTurn(turn, 2_500_000),
      });
      expect(posted.status).toBe(202);
    }
    const compacted = await h.request("POST", "/v1/conversations/big/compactions", {
      spec: "r:0..0",
    });
    expect(compacted.status).toBe(201);
    const stored = (await store.readTurns({ tenant: "alice", conversation: "big" })).flatMap(
      (t) => t.events,
    );
    for (const view of ["events", "projection"]) {
      const bodies: { events: unknown[]; next_cursor?: string }[] = [];
      let cursor: string | undefined;
      do {
        const answer = await h.request(
          "GET",
          `/v1/conversations/big/${view}${cursor ? `?cursor=${cursor}` : ""}`,
        );
        const text = await answer.text();
        expect(answer.status).toBe(200);
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(FIVE_MIB);
        const body = JSON.parse(text) as { events: unknown[]; next_cursor?: string };
        bodies.push(body);
        cursor = body.next_cursor;
      } while (cursor !== undefined);
      expect(bodies.length, view).toBe(2);
      if (view === "events") {
        // The band, added after turn 2, ends the last page.
        const joined = bodies.flatMap((b) => b.events);
        expect(joined.slice(0, -1)).toEqual(stored);
        expect(joined.at(-1)).toMatchObject({ type: "compaction", from_turn: 0, to_turn: 0 });
      }
    }
  });
});
