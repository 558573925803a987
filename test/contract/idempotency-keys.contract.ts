/**
 * The `Idempotency-Key` part of the {@link ConversationStore} contract
 * (claimIdempotencyKey, finishIdempotencyKey, releaseIdempotencyKey), run
 * against every implementation beside the rest of the contract. Each test
 * works on conversations of its own.
 */
import { describe, expect, it } from "vitest";
import { ConditionFailedError } from "../../functions/errors.ts";
import type { ConversationStore } from "../../functions/ports.ts";
import { freshRef, storedTurn } from "./conversation-store.contract.ts";

const NOW = 1_795_000_000;
const PENDING = NOW + 120;
const DAY = NOW + 86_400;

const answer = {
  status: 201,
  body: { position: 1, type: "compaction", summary: { summary: "ü".repeat(50_000) } },
};

export function idempotencyKeysContract(
  name: string,
  makeStore: () => Promise<ConversationStore>,
  { concurrent = false }: { concurrent?: boolean } = {},
): void {
  describe(`ConversationStore contract, Idempotency-Key records: ${name}`, { concurrent }, () => {
    it("claims a free key once; a second claim finds it pending, then answered", async () => {
      const store = await makeStore();
      const ref = freshRef();
      expect(await store.claimIdempotencyKey(ref, "k-1", "d1", NOW, PENDING)).toEqual({
        claimed: true,
      });
      expect(await store.claimIdempotencyKey(ref, "k-1", "d1", NOW + 1, PENDING)).toEqual({
        claimed: false,
        record: { digest: "d1" },
      });
      await store.finishIdempotencyKey(ref, "k-1", "d1", answer, DAY);
      expect(await store.claimIdempotencyKey(ref, "k-1", "d2", NOW + 2, PENDING)).toEqual({
        claimed: false,
        record: { digest: "d1", answer },
      });
      // The answer outlives the pending claim's expiry, until its own.
      expect(await store.claimIdempotencyKey(ref, "k-1", "d1", PENDING + 1, PENDING)).toEqual({
        claimed: false,
        record: { digest: "d1", answer },
      });
      expect(await store.claimIdempotencyKey(ref, "k-1", "d2", DAY, DAY + 120)).toEqual({
        claimed: true,
      });
    });

    it("keeps keys apart by tenant, conversation and key; special characters included", async () => {
      const store = await makeStore();
      const ref = freshRef();
      const other = { tenant: `${ref.tenant}-other`, conversation: ref.conversation };
      const sibling = { tenant: ref.tenant, conversation: `${ref.conversation}-2` };
      for (const [where, key] of [
        [ref, "a#b%23"],
        [ref, "a%23b#"],
        [other, "a#b%23"],
        [sibling, "a#b%23"],
      ] as const) {
        expect(await store.claimIdempotencyKey(where, key, "d", NOW, PENDING)).toEqual({
          claimed: true,
        });
      }
    });

    it("of concurrent claims of one key, exactly one is claimed", async () => {
      const store = await makeStore();
      const ref = freshRef();
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.claimIdempotencyKey(ref, "k", `d${i}`, NOW, PENDING),
        ),
      );
      expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
    });

    it("releases only its own pending claim, so a retry runs again", async () => {
      const store = await makeStore();
      const ref = freshRef();
      await store.claimIdempotencyKey(ref, "k", "d1", NOW, PENDING);
      await store.releaseIdempotencyKey(ref, "k", "other digest");
      expect((await store.claimIdempotencyKey(ref, "k", "d1", NOW, PENDING)).claimed).toBe(false);
      await store.releaseIdempotencyKey(ref, "k", "d1");
      expect(await store.claimIdempotencyKey(ref, "k", "d1", NOW, PENDING)).toEqual({
        claimed: true,
      });
      await store.finishIdempotencyKey(ref, "k", "d1", answer, DAY);
      // An answered record is never released.
      await store.releaseIdempotencyKey(ref, "k", "d1");
      expect(await store.claimIdempotencyKey(ref, "k", "d1", NOW, PENDING)).toEqual({
        claimed: false,
        record: { digest: "d1", answer },
      });
    });

    it("refuses to finish a claim that expired and was taken by another request", async () => {
      const store = await makeStore();
      const ref = freshRef();
      await store.claimIdempotencyKey(ref, "k", "d1", NOW, PENDING);
      expect(await store.claimIdempotencyKey(ref, "k", "d2", PENDING, PENDING + 120)).toEqual({
        claimed: true,
      });
      await expect(store.finishIdempotencyKey(ref, "k", "d1", answer, DAY)).rejects.toThrow(
        ConditionFailedError,
      );
      await expect(
        store.finishIdempotencyKey(freshRef(), "never claimed", "d", answer, DAY),
      ).rejects.toThrow(ConditionFailedError);
    });

    it("go with the conversation's delete", async () => {
      const store = await makeStore();
      const ref = freshRef();
      await store.appendTurn(
        ref,
        storedTurn(0, [{ type: "turn_start", timestamp: "2026-01-01T00:00:00.000000Z" }]),
        { compactions_version: 0 },
        {},
      );
      await store.claimIdempotencyKey(ref, "k", "d1", NOW, PENDING);
      await store.finishIdempotencyKey(ref, "k", "d1", answer, DAY);
      expect(await store.beginDelete(ref)).toBe(true);
      await store.finishDelete(ref);
      expect(await store.claimIdempotencyKey(ref, "k", "d2", NOW, PENDING)).toEqual({
        claimed: true,
      });
    });
  });
}
