/**
 * `Idempotency-Key` on `POST …/compactions` (docs/architecture.md §8): a
 * request sent again under the same key, with the same body, is answered
 * with the first one's answer (status and body) and runs nothing again (no
 * second band, no second summary); the key with another body is a 409
 * `idempotency-key-reused`, and while the first request still runs, a 409
 * `idempotency-key-in-progress` with `Retry-After`.
 *
 * The record is the store's (`claimIdempotencyKey` and the rest): claimed
 * pending before the request runs, for {@link PENDING_SECONDS} (longer than
 * any request may take), then answered for {@link IDEMPOTENCY_TTL_SECONDS};
 * a request that fails releases its claim, so its retry runs again. Keeping
 * an answer that cannot be kept never fails the request that wrote the band:
 * it is reported (`onUnkept`), and retries find the key in progress until the
 * claim expires, then run again.
 */
import { createHash } from "node:crypto";
import { IDEMPOTENCY_CONFLICTS, IdempotencyConflictError } from "../errors.ts";
import type { ConversationRef, ConversationStore, IdempotentAnswer } from "../ports.ts";

/** How long an answer is kept under its key: 24 hours. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** How long a claim holds a key before its request answered: past API Gateway's 30 s and a summary's 120 s. */
export const PENDING_SECONDS = 180;

/** The digest of a request as it decides "the same request": SHA-256 of its JSON. */
export function requestDigest(request: unknown): string {
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

/** An answer, and whether it is a kept one given again. */
export type OnceAnswer = IdempotentAnswer & { readonly replayed: boolean };

/**
 * Runs `run` once per `key` of the conversation: the first request's answer
 * is kept and given to every retry with the same `digest`.
 *
 * @example
 * const answer = await runOnce(store, ref, "retry-1", requestDigest(body), now, async () => ({
 *   status: 201,
 *   body: await service.compact(tenant, conversation, body),
 * }));
 */
export async function runOnce(
  store: ConversationStore,
  ref: ConversationRef,
  key: string,
  digest: string,
  nowSeconds: number,
  run: () => Promise<IdempotentAnswer>,
  onUnkept: (error: unknown) => void = () => {},
): Promise<OnceAnswer> {
  const claim = await store.claimIdempotencyKey(
    ref,
    key,
    digest,
    nowSeconds,
    nowSeconds + PENDING_SECONDS,
  );
  if (!claim.claimed) {
    const { record } = claim;
    if (record.digest !== digest) {
      throw new IdempotencyConflictError(
        IDEMPOTENCY_CONFLICTS.reused,
        `Idempotency-Key ${JSON.stringify(key)} was already used for another request to this conversation: send each request under a key of its own (only a retry of the same body keeps its key)`,
      );
    }
    if (!record.answer) {
      throw new IdempotencyConflictError(
        IDEMPOTENCY_CONFLICTS.inProgress,
        `the request under Idempotency-Key ${JSON.stringify(key)} is still running: ask again after Retry-After for its answer`,
      );
    }
    return { ...record.answer, replayed: true };
  }
  let answer: IdempotentAnswer;
  try {
    answer = await run();
  } catch (error) {
    await store.releaseIdempotencyKey(ref, key, digest).catch(onUnkept);
    throw error;
  }
  try {
    await store.finishIdempotencyKey(
      ref,
      key,
      digest,
      answer,
      nowSeconds + IDEMPOTENCY_TTL_SECONDS,
    );
  } catch (error) {
    onUnkept(error);
  }
  return { ...answer, replayed: false };
}
