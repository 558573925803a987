/**
 * The lives part of the {@link ConversationStore} contract: a head's
 * `incarnation`, named by the write that creates it and kept by every later
 * one, and the writes that name a life failing on another one created under
 * the same id since. Run against every implementation beside the rest of
 * the contract; each test works on conversations of its own.
 */
import { describe, expect, it } from "vitest";
import { ConditionFailedError } from "../../functions/errors.ts";
import type {
  ConversationHead,
  ConversationRef,
  ConversationStore,
} from "../../functions/ports.ts";
import {
  appendAll,
  freshRef,
  simpleTurn,
  storedCompaction,
} from "./conversation-store.contract.ts";

export function incarnationContract(
  name: string,
  makeStore: () => Promise<ConversationStore>,
  { concurrent = false }: { concurrent?: boolean } = {},
): void {
  describe(`ConversationStore contract, lives (incarnation): ${name}`, { concurrent }, () => {
    const incarnationOf = async (store: ConversationStore, ref: ConversationRef) =>
      (await store.getHead(ref))?.incarnation;

    it("names a head from the write that creates it, a first turn or a config, and every later write keeps it", async () => {
      const store = await makeStore();
      const [byTurn, byConfig] = [freshRef(), freshRef()];
      await store.appendTurn(byTurn, simpleTurn(0), { compactions_version: 0 }, {});
      await store.putConfig(byConfig, { min_turns: 1 });
      const life = await incarnationOf(store, byTurn);
      const configured = await incarnationOf(store, byConfig);
      expect(life).toEqual(expect.stringMatching(/^\S+$/));
      expect(configured).toEqual(expect.stringMatching(/^\S+$/));
      expect(configured).not.toBe(life);

      await store.appendTurn(byConfig, simpleTurn(0), { compactions_version: 0 }, {});
      await store.putConfig(byTurn, { min_turns: 2 });
      await store.appendTurn(
        byTurn,
        simpleTurn(1),
        { uncompacted: true, add_projected_chars: 4 },
        {},
      );
      await store.addCompaction(
        byTurn,
        storedCompaction("AUTO#000001", 1, 1),
        { turn_count: 2, compactions_version: 0 },
        { max_compacted_turn: 0 },
      );
      await store.markEvaluated(byTurn, 1);
      await store.removeCompactions(
        byTurn,
        ["AUTO#000001"],
        { turn_count: 2, compactions_version: 1 },
        { max_compacted_turn: -1 },
      );
      expect(await incarnationOf(store, byConfig)).toBe(configured);
      expect(await incarnationOf(store, byTurn)).toBe(life);
      // The tombstone is still that life.
      expect(await store.beginDelete(byTurn)).toBe(true);
      expect(await store.getHead(byTurn)).toMatchObject({ deleting: true, incarnation: life });
    });

    it("refuses a compaction or reset decided on an earlier life, at the same numbers", async () => {
      const store = await makeStore();
      const ref = freshRef();
      await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
      const earlier = (await store.getHead(ref)) as ConversationHead;
      expect(await store.beginDelete(ref)).toBe(true);
      await store.finishDelete(ref);
      await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
      const now = (await store.getHead(ref)) as ConversationHead;
      expect([now.turn_count, now.compactions_version]).toEqual([
        earlier.turn_count,
        earlier.compactions_version,
      ]);
      const band = storedCompaction("AUTO#000001", 1, 1);
      await expect(
        store.addCompaction(ref, band, earlier, { max_compacted_turn: 0 }),
      ).rejects.toBeInstanceOf(ConditionFailedError);
      expect(await store.listCompactions(ref)).toEqual([]);
      await store.addCompaction(ref, band, now, { max_compacted_turn: 0 });
      const stale = { ...earlier, compactions_version: 1 };
      await expect(
        store.removeCompactions(ref, [band.key], stale, { max_compacted_turn: -1 }),
      ).rejects.toBeInstanceOf(ConditionFailedError);
      expect(await store.listCompactions(ref)).toEqual([band]);
    });

    it("refuses an uncompacted append that names an earlier life, at the same turn count", async () => {
      const store = await makeStore();
      const ref = freshRef();
      await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
      const earlier = await incarnationOf(store, ref);
      expect(await store.beginDelete(ref)).toBe(true);
      await store.finishDelete(ref);
      await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
      const now = await incarnationOf(store, ref);
      const append = (incarnation: string | undefined) =>
        store.appendTurn(
          ref,
          simpleTurn(2),
          { uncompacted: true, add_projected_chars: 4, incarnation },
          {},
        );
      await expect(append(earlier)).rejects.toBeInstanceOf(ConditionFailedError);
      expect((await store.getHead(ref))?.turn_count).toBe(2);
      await append(now);
      expect(await store.getHead(ref)).toMatchObject({ turn_count: 3, incarnation: now });
    });

    it("marks only the life a mark names: one decided on an earlier life does nothing", async () => {
      const store = await makeStore();
      const ref = freshRef();
      await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
      const earlier = await incarnationOf(store, ref);
      expect(await store.beginDelete(ref)).toBe(true);
      await store.finishDelete(ref);
      await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
      const now = await incarnationOf(store, ref);
      const decision = { turn: 1, outcome: "skipped", reason: "min_turns" } as const;
      const measures = { projected_chars: 4, threshold: 100 };
      await store.markEvaluated({ ...ref, incarnation: earlier }, 1, decision, measures);
      expect(await store.getHead(ref)).toMatchObject({ evaluated_through: -1 });
      expect((await store.getHead(ref))?.decided_through).toBeUndefined();
      expect((await store.listTurnSizes(ref))[1]?.evaluation).toBeUndefined();
      await store.markEvaluated({ ...ref, incarnation: now }, 1, decision, measures);
      expect(await store.getHead(ref)).toMatchObject({
        evaluated_through: 1,
        decided_through: 1,
        last_decision: decision,
      });
      expect((await store.listTurnSizes(ref))[1]?.evaluation).toEqual({
        ...decision,
        ...measures,
      });
    });

    it("gives a conversation created again under its id after a delete a new one", async () => {
      const store = await makeStore();
      const ref = freshRef();
      const lives: (string | undefined)[] = [];
      for (let life = 0; life < 3; life++) {
        await appendAll(store, ref, [simpleTurn(0), simpleTurn(1)]);
        lives.push(await incarnationOf(store, ref));
        expect(await store.beginDelete(ref)).toBe(true);
        await store.finishDelete(ref);
        expect(await store.getHead(ref)).toBeUndefined();
      }
      await store.putConfig(ref, { min_turns: 1 });
      lives.push(await incarnationOf(store, ref));
      expect(lives.every((life) => typeof life === "string" && life.length > 0)).toBe(true);
      expect(new Set(lives).size).toBe(4);
    });
  });
}
