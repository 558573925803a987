import { describe, expect, it, vi } from "vitest";
import { projectedCharsFromSizes } from "../../core/sizes.ts";
import { indexTurns } from "../../core/turns.ts";
import { storedTurn } from "../../test/contract/conversation-store.contract.ts";
import { compaction, message, request, turnStart } from "../../test/helpers/builders.ts";
import { generateConversation } from "../../test/helpers/conversation.ts";
import { ConditionFailedError, ContentionError } from "../errors.ts";
import type { ConversationRef, StoredCompaction } from "../ports.ts";
import { MemoryConversationStore } from "../store/memory.ts";
import { ConversationLog, type LogWrite } from "./log.ts";

const ref: ConversationRef = { tenant: "t", conversation: "c" };

/** Turn `n`: a request and an answer of `chars` characters each. */
const turn = (n: number, chars = 100) =>
  storedTurn(n, [
    ...(n > 0 ? [turnStart(n)] : []),
    request("q".repeat(chars), n),
    message("a".repeat(chars), n),
  ]);

const band = (
  key: string,
  from: number,
  to: number,
  after: number,
  seq: number,
): StoredCompaction => ({
  key,
  after_turn: after,
  seq,
  compaction: compaction(from, to, seq, {
    source: "manual",
    reasoning: "strip",
    tool_calls: { policy: "omit" },
  }),
});

/** The head's cached numbers, and the same numbers worked out from everything stored. */
async function cachedAndRecomputed(store: MemoryConversationStore) {
  const head = await store.getHead(ref);
  const sizes = (await store.listTurnSizes(ref)).map((r) => r.size);
  const compactions = await store.listCompactions(ref);
  return {
    cached: { projected: head?.projected_chars, maxCompacted: head?.max_compacted_turn },
    recomputed: {
      projected: projectedCharsFromSizes(
        sizes,
        compactions.map((c) => c.compaction),
      ),
      maxCompacted: compactions.reduce((max, c) => Math.max(max, c.compaction.to_turn), -1),
    },
  };
}

/** 24 turns whose tool results often cross into the next turn (some answered, some not). */
const crossingTurns = (() => {
  const entries = generateConversation({ seed: 11, turns: 24, crossTurnRate: 0.5 });
  const { turnOf, turnCount } = indexTurns(entries);
  const names = new Map<string, string>();
  return Array.from({ length: turnCount }, (_, t) =>
    storedTurn(
      t,
      entries.filter((_, i) => turnOf[i] === t),
      undefined,
      names,
    ),
  );
})();

const write = (log: ConversationLog, w: LogWrite) =>
  log.update(ref, "test", async () => ({ write: w, result: undefined }));

describe("ConversationLog", () => {
  it("keeps projected_chars and max_compacted_turn equal to a recomputation after every kind of write", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    const check = async () => {
      const { cached, recomputed } = await cachedAndRecomputed(store);
      expect(cached).toEqual(recomputed);
    };
    for (let n = 0; n < 4; n++) {
      expect(await log.appendUncovered(ref, turn(n))).toBe(true);
      await check();
    }
    // 4 turns of 200 characters (turn 0 has no turn_start): 800 in all.
    expect((await store.getHead(ref))?.projected_chars).toBe(800);
    await write(log, { kind: "add_compaction", compaction: band("MAN#1", 1, 2, 3, 1) });
    await check();
    expect(await store.getHead(ref)).toMatchObject({ max_compacted_turn: 2 });
    await write(log, { kind: "append_turn", turn: turn(4, 50) });
    await check();
    // A compaction reaching past the last turn: the next turn is covered and is recomputed.
    await write(log, {
      kind: "add_compaction",
      compaction: band("MAN#2", 0, 5, 4, 2),
      decision: { turn: 4, outcome: "fired", band: { key: "MAN#2", from_turn: 0, to_turn: 5 } },
    });
    await check();
    expect(await store.getHead(ref)).toMatchObject({
      max_compacted_turn: 5,
      evaluated_through: 4,
      decided_through: 4,
      last_decision: {
        turn: 4,
        outcome: "fired",
        band: { key: "MAN#2", from_turn: 0, to_turn: 5 },
      },
    });
    expect(await log.appendUncovered(ref, turn(5))).toBe(false);
    await write(log, { kind: "append_turn", turn: turn(5, 300) });
    await check();
    await write(log, { kind: "remove_compactions", keys: ["MAN#2"] });
    await check();
    expect(await store.getHead(ref)).toMatchObject({ max_compacted_turn: 2, turn_count: 6 });
    await write(log, { kind: "remove_compactions", keys: ["MAN#1"] });
    await check();
    expect(await store.getHead(ref)).toMatchObject({
      max_compacted_turn: -1,
      projected_chars: 800 + 100 + 600,
    });
  });

  it("removes more compactions than one transaction holds, one consistent batch at a time", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    for (let n = 0; n < 3; n++) await log.appendUncovered(ref, turn(n));
    const keys: string[] = [];
    for (let i = 1; i <= 95; i++) {
      const key = `MAN#${String(i).padStart(3, "0")}`;
      keys.push(key);
      await write(log, { kind: "add_compaction", compaction: band(key, 0, 1, 2, i) });
    }
    const removals = vi.spyOn(store, "removeCompactions");
    await write(log, { kind: "remove_compactions", keys });
    expect(removals.mock.calls.map(([, batch]) => batch.length)).toEqual([90, 5]);
    expect(removals.mock.calls.map(([, , version]) => version.compactions_version)).toEqual([
      95, 96,
    ]);
    expect(await store.getHead(ref)).toMatchObject({
      compactions_version: 97,
      max_compacted_turn: -1,
    });
  });

  /** A conversation of 3 turns and 95 manual bands (more than one transaction removes). */
  async function ninetyFiveBands(log: ConversationLog) {
    for (let n = 0; n < 3; n++) await log.appendUncovered(ref, turn(n));
    const keys: string[] = [];
    for (let i = 1; i <= 95; i++) {
      const key = `MAN#${String(i).padStart(3, "0")}`;
      keys.push(key);
      await write(log, { kind: "add_compaction", compaction: band(key, 0, 1, 2, i) });
    }
    return keys;
  }

  it("reports a reset interrupted after its first batch, and finishes it on the next write", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    const keys = await ninetyFiveBands(log);
    const remove = store.removeCompactions.bind(store);
    let calls = 0;
    const removals = vi.spyOn(store, "removeCompactions").mockImplementation(async (...args) => {
      if (++calls === 2) throw new Error("throttled for good");
      await remove(...args);
    });
    const error = await write(log, { kind: "remove_compactions", keys }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContentionError);
    expect(error).toMatchObject({
      status: 503,
      message:
        "reset interrupted after removing 90 of 95 compactions: the other 5 are recorded on the conversation and removed by its next write; retry the request to finish the reset",
    });
    expect((await store.getHead(ref))?.removing).toEqual(keys.slice(90));
    expect((await store.listCompactions(ref)).map((c) => c.key)).toEqual(keys.slice(90));
    const { cached, recomputed } = await cachedAndRecomputed(store);
    expect(cached).toEqual(recomputed);

    // The next write finishes the reset first, then decides from the head it leaves.
    removals.mockRestore();
    const seen = await log.update(ref, "compaction", async (snapshot) => ({
      write: { kind: "add_compaction", compaction: band("MAN#new", 0, 0, 2, 200) },
      result: { removing: snapshot.head?.removing, compactions: await snapshot.compactions() },
    }));
    expect(seen).toEqual({ removing: undefined, compactions: [] });
    expect((await store.listCompactions(ref)).map((c) => c.key)).toEqual(["MAN#new"]);
    const head = await store.getHead(ref);
    expect(head && "removing" in head).toBe(false);
    const after = await cachedAndRecomputed(store);
    expect(after.cached).toEqual(after.recomputed);
  });

  it("finishes a reset that loses a race after its first batch, without deciding it again", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    const keys = await ninetyFiveBands(log);
    const remove = store.removeCompactions.bind(store);
    let calls = 0;
    vi.spyOn(store, "removeCompactions").mockImplementation(async (...args) => {
      // A turn lands between the first and the second batch.
      if (++calls === 2) await log.appendUncovered(ref, turn(3));
      await remove(...args);
    });
    let decisions = 0;
    const removed = await log.update(ref, "reset", async () => {
      decisions++;
      return { write: { kind: "remove_compactions", keys }, result: keys.length };
    });
    expect({ removed, decisions }).toEqual({ removed: 95, decisions: 1 });
    expect(await store.listCompactions(ref)).toEqual([]);
    expect(await store.getHead(ref)).toMatchObject({ turn_count: 4, max_compacted_turn: -1 });
    expect((await store.getHead(ref))?.removing).toBeUndefined();
    const { cached, recomputed } = await cachedAndRecomputed(store);
    expect(cached).toEqual(recomputed);
  });

  it("refuses a reset of more than 10,000 compactions before removing any", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    await log.appendUncovered(ref, turn(0));
    await write(log, { kind: "add_compaction", compaction: band("MAN#1", 0, 0, 0, 1) });
    const keys = ["MAN#1", ...Array.from({ length: 10_000 }, (_, i) => `MAN#x${i}`)];
    await expect(write(log, { kind: "remove_compactions", keys })).rejects.toMatchObject({
      name: "UnprocessableError",
      status: 422,
      type: "/problems/too-large-to-store",
    });
    expect(await store.listCompactions(ref)).toHaveLength(1);
  });

  it("appends in one round trip only the next turn that no compaction covers", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    const reads = vi.spyOn(store, "getHead");
    expect(await log.appendUncovered(ref, turn(0))).toBe(true);
    expect(await log.appendUncovered(ref, turn(2))).toBe(false);
    expect(await log.appendUncovered(ref, turn(0))).toBe(false);
    expect(reads).not.toHaveBeenCalled();
    expect(await store.getHead(ref)).toMatchObject({ turn_count: 1, projected_chars: 200 });
  });

  it("keeps projected_chars equal to a recomputation when tool pairs cross turns", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    for (const stored of crossingTurns) {
      // Turns without carried results take the one-round-trip path when they can.
      if (!(await log.appendUncovered(ref, stored))) {
        await write(log, { kind: "append_turn", turn: stored });
      }
      const { cached, recomputed } = await cachedAndRecomputed(store);
      expect({ turn: stored.turn, ...cached }).toEqual({ turn: stored.turn, ...recomputed });
    }
  });

  it("writes a band after every compaction from the size records at its ends, equal to a recomputation", async () => {
    const turns = crossingTurns;
    const turnCount = turns.length;
    for (const legacy of [false, true]) {
      const store = new MemoryConversationStore();
      const log = new ConversationLog(store);
      for (const stored of turns) {
        // Records stored before the running totals: the store keeps none.
        if (legacy) await store.appendTurn(ref, stored, { compactions_version: 0 }, {});
        else await write(log, { kind: "append_turn", turn: stored });
      }
      if (legacy) {
        const sizes = (await store.listTurnSizes(ref)).map((r) => r.size);
        await store.repairHead(ref, (await store.getHead(ref)) as never, {
          turn_count: turnCount,
          projected_chars: projectedCharsFromSizes(sizes, []),
          max_compacted_turn: -1,
          compactions_version: 0,
          evaluated_through: -1,
        });
      }
      const lists = vi.spyOn(store, "listTurnSizes");
      const bands = vi.spyOn(store, "listCompactions");
      const ends = vi.spyOn(store, "getTurnSizes");
      let seq = 0;
      for (const [from, to] of [
        [1, 4],
        [5, 5],
        [6, 11],
        [12, 30],
      ] as const) {
        seq++;
        await write(log, {
          kind: "add_compaction",
          compaction: band(`MAN#${seq}`, from, to, turnCount - 1, seq),
        });
        const { cached, recomputed } = await cachedAndRecomputed(store);
        expect({ legacy, ...cached }).toEqual({ legacy, ...recomputed });
      }
      const reads = lists.mock.calls.length + bands.mock.calls.length;
      // cachedAndRecomputed lists each once per band: the writes themselves list nothing.
      if (legacy) expect(reads).toBeGreaterThan(8);
      else expect([reads, ends.mock.calls.length]).toEqual([8, 4]);
    }
  });

  it("reads compactions and sizes at most once per attempt, and only when asked", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store);
    for (let n = 0; n < 3; n++) await log.appendUncovered(ref, turn(n));
    const compactions = vi.spyOn(store, "listCompactions");
    const sizes = vi.spyOn(store, "listTurnSizes");
    await log.update(ref, "read nothing", async () => ({ result: 1 }));
    expect([compactions.mock.calls.length, sizes.mock.calls.length]).toEqual([0, 0]);
    await log.update(ref, "add", async (snapshot) => {
      await snapshot.compactions();
      await snapshot.turnSizes();
      await snapshot.compactions();
      return {
        write: { kind: "add_compaction", compaction: band("MAN#1", 0, 1, 2, 1) },
        result: 2,
      };
    });
    expect([compactions.mock.calls.length, sizes.mock.calls.length]).toEqual([1, 1]);
  });

  it("decides again from a fresh read after a lost race, with a jittered, doubling, capped backoff", async () => {
    const store = new MemoryConversationStore();
    await store.appendTurn(ref, turn(0), { compactions_version: 0 }, { projected_chars: 200 });
    let failures = 9;
    const addCompaction = store.addCompaction.bind(store);
    vi.spyOn(store, "addCompaction").mockImplementation(async (...args) => {
      if (failures-- > 0) throw new ConditionFailedError("lost the race");
      return addCompaction(...args);
    });
    const sleeps: number[] = [];
    const log = new ConversationLog(store, {
      baseDelayMs: 10,
      maxDelayMs: 500,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      now: () => 0,
    });
    const heads: (number | undefined)[] = [];
    const result = await log.update(ref, "add", async ({ head }) => {
      heads.push(head?.compactions_version);
      return {
        write: { kind: "add_compaction", compaction: band("MAN#1", 0, 0, 0, 1) },
        result: "landed",
      };
    });
    expect(result).toBe("landed");
    expect(heads).toHaveLength(10);
    // Half of min(500, 10 * 2^(n-1)) for n = 1..9.
    expect(sleeps).toEqual([5, 10, 20, 40, 80, 160, 250, 250, 250]);
  });

  it("gives up once its time budget is spent: a 503 contention with Retry-After", async () => {
    const store = new MemoryConversationStore();
    await store.appendTurn(ref, turn(0), { compactions_version: 0 }, { projected_chars: 200 });
    vi.spyOn(store, "removeCompactions").mockRejectedValue(new ConditionFailedError("lost"));
    await write(new ConversationLog(store), {
      kind: "add_compaction",
      compaction: band("MAN#1", 0, 0, 0, 1),
    });
    let clock = 0;
    const log = new ConversationLog(store, {
      budgetMs: 3_000,
      sleep: async () => {},
      now: () => {
        clock += 1_000;
        return clock;
      },
    });
    const error = await log
      .update(ref, "reset", async () => ({
        write: { kind: "remove_compactions", keys: ["MAN#1"] },
        result: undefined,
      }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContentionError);
    // now() is read at the start (1,000) and after each loss (2,000, 3,000, 4,000): three attempts.
    expect(error).toMatchObject({
      message: "reset: too many concurrent writes, retry the request",
      status: 503,
      attempts: 3,
    });
    expect((error as ContentionError).responseHeaders()).toEqual({ "Retry-After": "1" });
    expect((error as ContentionError).cause).toBeInstanceOf(ConditionFailedError);
  });

  it("decides once more from a fresh read when a decision that outlasted the budget loses its race", async () => {
    // A summary can take longer than the budget; the race it lost may have made
    // the write needless (a newer turn, a new life), which only a re-read can tell.
    const store = new MemoryConversationStore();
    await store.appendTurn(ref, turn(0), { compactions_version: 0 }, { projected_chars: 200 });
    vi.spyOn(store, "addCompaction").mockRejectedValueOnce(new ConditionFailedError("lost"));
    let clock = 0;
    const log = new ConversationLog(store, {
      budgetMs: 3_000,
      sleep: async () => {},
      now: () => clock,
    });
    const decisions: string[] = [];
    const result = await log.update(ref, "add", async () => {
      if (decisions.push("decided") > 1) return { result: "stale" };
      clock += 10_000;
      return {
        write: { kind: "add_compaction", compaction: band("MAN#1", 0, 0, 0, 1) },
        result: "landed",
      };
    });
    expect(result).toBe("stale");
    expect(decisions).toEqual(["decided", "decided"]);
  });

  it("passes any other failure through at once, without retrying", async () => {
    const store = new MemoryConversationStore();
    const boom = new Error("disk on fire");
    vi.spyOn(store, "appendTurn").mockRejectedValue(boom);
    const log = new ConversationLog(store, { sleep: async () => expect.fail("no retry") });
    let decisions = 0;
    await expect(
      log.update(ref, "append", async () => {
        decisions++;
        return { write: { kind: "append_turn", turn: turn(0) }, result: undefined };
      }),
    ).rejects.toBe(boom);
    expect(decisions).toBe(1);
    await expect(log.appendUncovered(ref, turn(0))).rejects.toBe(boom);
  });

  it("refuses a compaction write on a conversation that does not exist", async () => {
    const store = new MemoryConversationStore();
    const log = new ConversationLog(store, { now: () => 0, budgetMs: 0 });
    await expect(
      write(log, { kind: "add_compaction", compaction: band("MAN#1", 0, 0, 0, 1) }),
    ).rejects.toBeInstanceOf(ContentionError);
    await expect(
      write(log, { kind: "remove_compactions", keys: ["MAN#1"] }),
    ).rejects.toBeInstanceOf(ContentionError);
    expect(await store.getHead(ref)).toBeUndefined();
  });
});
