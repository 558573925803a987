/**
 * {@link WebhookReceipts} in memory: the tests' fake, and the API's default
 * when nothing else is wired (one process only: the Lambda and the local
 * runtime keep receipts in the table, webhook-receipts-dynamodb.ts).
 * Expired receipts are dropped as later calls pass them.
 */
import type { WebhookReceipt, WebhookReceiptMatch, WebhookReceipts } from "../ports.ts";

interface Kept {
  readonly digest: string;
  readonly expiresAtSeconds: number;
}

export class MemoryWebhookReceipts implements WebhookReceipts {
  // Insertion order is (roughly) expiry order: the sweep stops at the first live one.
  readonly #kept = new Map<string, Kept>();

  async remember(
    receipt: WebhookReceipt,
    nowSeconds: number,
    expiresAtSeconds: number,
  ): Promise<WebhookReceiptMatch> {
    this.#sweep(nowSeconds);
    // JSON of the pair: no separator can make two (tenant, id) pairs collide.
    const key = JSON.stringify([receipt.tenant, receipt.id]);
    const kept = this.#kept.get(key);
    if (kept && kept.expiresAtSeconds > nowSeconds)
      return kept.digest === receipt.digest ? "same" : "different";
    this.#kept.delete(key);
    this.#kept.set(key, { digest: receipt.digest, expiresAtSeconds });
    return "new";
  }

  #sweep(nowSeconds: number): void {
    for (const [key, kept] of this.#kept) {
      if (kept.expiresAtSeconds > nowSeconds) return;
      this.#kept.delete(key);
    }
  }
}
