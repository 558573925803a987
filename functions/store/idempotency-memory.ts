/**
 * `Idempotency-Key` records in memory, for {@link MemoryConversationStore}
 * (the port's `claimIdempotencyKey`, `finishIdempotencyKey` and
 * `releaseIdempotencyKey`), with the DynamoDB adapter's conditions: a claim
 * takes a key with no record or an expired one, a finish and a release act
 * only on the pending record of the digest that claimed it. Values are
 * deep-copied in and out.
 */
import { ConditionFailedError } from "../errors.ts";
import type { IdempotencyClaim, IdempotencyRecord, IdempotentAnswer } from "../ports.ts";

interface Kept extends IdempotencyRecord {
  readonly expiresAtSeconds: number;
}

export class MemoryIdempotencyKeys {
  /** The records of each conversation (its store key), by `Idempotency-Key`. */
  readonly #kept = new Map<string, Map<string, Kept>>();

  claim(
    scope: string,
    key: string,
    digest: string,
    nowSeconds: number,
    expiresAtSeconds: number,
  ): IdempotencyClaim {
    const records = this.#kept.get(scope) ?? new Map<string, Kept>();
    this.#kept.set(scope, records);
    const kept = records.get(key);
    if (kept && kept.expiresAtSeconds > nowSeconds) {
      const { expiresAtSeconds: _, ...record } = kept;
      return { claimed: false, record: structuredClone(record) };
    }
    records.set(key, { digest, expiresAtSeconds });
    return { claimed: true };
  }

  finish(
    scope: string,
    key: string,
    digest: string,
    answer: IdempotentAnswer,
    expiresAtSeconds: number,
  ): void {
    const records = this.#kept.get(scope);
    const kept = records?.get(key);
    if (!records || kept?.digest !== digest || kept.answer) {
      throw new ConditionFailedError(`the claim of Idempotency-Key ${JSON.stringify(key)} is gone`);
    }
    records.set(key, { digest, answer: structuredClone(answer), expiresAtSeconds });
  }

  release(scope: string, key: string, digest: string): void {
    const records = this.#kept.get(scope);
    const kept = records?.get(key);
    if (kept?.digest === digest && !kept.answer) records?.delete(key);
  }

  /** Drops every record of a conversation (its delete). */
  forget(scope: string): void {
    this.#kept.delete(scope);
  }
}
