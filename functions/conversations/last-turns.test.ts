import { describe, expect, it, vi } from "vitest";
import { ZERO_TOTALS } from "../../core/sizes.ts";
import { storedTurn } from "../../test/contract/conversation-store.contract.ts";
import { message, request, turnStart } from "../../test/helpers/builders.ts";
import type { ConversationRef } from "../ports.ts";
import { MemoryConversationStore } from "../store/memory.ts";
import { LastTurns } from "./last-turns.ts";
import { ConversationLog } from "./log.ts";

const ref: ConversationRef = { tenant: "t", conversation: "c" };

/** Turn `n`: a request and an answer of `chars` characters each. */
const turn = (n: number, chars: number) =>
  storedTurn(n, [
    ...(n > 0 ? [turnStart(n)] : []),
    request("q".repeat(chars), n),
    message("a".repeat(chars), n),
  ]);

/** Appends turn `n` as the API does: the head read beside the write. */
const post = (log: ConversationLog, store: MemoryConversationStore, n: number, chars = 100) =>
  log.appendUncovered(ref, turn(n, chars), Number.NEGATIVE_INFINITY, () => store.getHead(ref));

describe("ConversationLog.appendUncovered with the turns it appended", () => {
  it("reads the size record before a turn only when this log did not append that turn", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    const reads = vi.spyOn(store, "getTurnSizes");
    for (let n = 0; n < 6; n++) expect(await post(log, store, n)).toBe(true);
    // Turn 0 reads nothing; turn 1 reads turn 0's record (and learns the life
    // from the head read beside it); turns 2..5 chain from the kept turns.
    expect(reads.mock.calls).toEqual([[ref, [0]]]);
    const [last] = await store.getTurnSizes(ref, [5]);
    // Six turns of 200 characters of text each.
    expect(last?.totals?.text).toBe(1_200);
    // Another log (another instance) has kept nothing: it reads turn 5's record.
    expect(await post(new ConversationLog(store), store, 6)).toBe(true);
    expect(reads.mock.calls.at(-1)).toEqual([ref, [5]]);
  });

  it("chains from the stored turns, not the kept one, after another instance deleted and re-created the conversation", async () => {
    const store = new MemoryConversationStore();
    const here = new ConversationLog(store);
    const there = new ConversationLog(store);
    for (let n = 0; n < 3; n++) expect(await post(here, store, n)).toBe(true);
    await there.delete(ref);
    // The new life: three turns of 2 × 1,000 characters.
    for (let n = 0; n < 3; n++) expect(await post(there, store, n, 1_000)).toBe(true);
    // This instance kept turn 2 of the old life: its append must not land on
    // the new one, whose turn 2 it never saw.
    expect(await post(here, store, 3)).toBe(false);
    expect((await store.getHead(ref))?.turn_count).toBe(3);
    // Forgotten: the next try reads turn 2's record and chains from the new life.
    expect(await post(here, store, 3)).toBe(true);
    const [record] = await store.getTurnSizes(ref, [3]);
    expect(record?.totals?.text).toBe(3 * 2_000 + 200);
  });

  it("never appends on a kept turn whose life the head read beside did not name", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    const reads = vi.spyOn(store, "getTurnSizes");
    expect(await log.appendUncovered(ref, turn(0, 100))).toBe(true);
    // Without the head read, turn 1 cannot learn the life: turn 2 reads again.
    expect(await log.appendUncovered(ref, turn(1, 100))).toBe(true);
    expect(await post(log, store, 2)).toBe(true);
    expect(reads.mock.calls).toEqual([
      [ref, [0]],
      [ref, [1]],
    ]);
  });
});

describe("LastTurns", () => {
  const kept = (n: number) => ({
    turn: n,
    incarnation: "life",
    size: turn(n, 1).size,
    totals: ZERO_TOTALS,
  });
  it("keeps the latest turn of at most `max` conversations, the least recently written leaving first", () => {
    const last = new LastTurns(2);
    const a = { tenant: "t", conversation: "a" };
    const b = { tenant: "t", conversation: "b" };
    const c = { tenant: "t", conversation: "c" };
    last.remember(a, kept(1));
    last.remember(b, kept(1));
    last.remember(a, kept(2));
    last.remember(c, kept(1));
    expect(last.before(a, 3)?.turn).toBe(2);
    expect(last.before(a, 2)).toBeUndefined();
    expect(last.before(b, 2)).toBeUndefined();
    expect(last.before(c, 2)?.turn).toBe(1);
    last.forget(c);
    expect(last.before(c, 2)).toBeUndefined();
  });
});
