/**
 * {@link WebhookReceipts} in the service's table: one item per tenant and
 * `webhook-id`, `pk = WEBHOOK#<tenant>#<id>` (`%` and `#` in either escaped
 * as `%25` and `%23`, so pairs never collide), `sk = WEBHOOK`, holding the
 * message's `digest` (SHA-256) and `expires_at`, the table's TTL attribute
 * (infra/stack.ts TTL_ATTRIBUTE), so DynamoDB deletes receipts some time
 * after they expire.
 *
 * One conditional PutItem per delivery: it writes the receipt unless an
 * unexpired one is there (TTL deletes lazily, so an expired item still
 * present counts as absent and is overwritten); when the condition fails,
 * the kept receipt comes back with the failure (`ALL_OLD`) and its digest
 * decides. Strongly consistent, and concurrent first deliveries of one id
 * cannot both find it new.
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { ConditionFailedError } from "../errors.ts";
import type { WebhookReceipt, WebhookReceiptMatch, WebhookReceipts } from "../ports.ts";
import { tableDefinition } from "./table-definition.ts";

/** The table's TTL attribute, the one the chunks of an uncommitted turn use too. */
const RECEIPT_TTL_ATTRIBUTE = tableDefinition.timeToLiveAttribute;
/** The sort key of every receipt. */
const RECEIPT_SK = "WEBHOOK";

const escapeKeyPart = (part: string) => part.replaceAll("%", "%25").replaceAll("#", "%23");

/** The key of the receipt of `id` for `tenant`. */
export function receiptKey(tenant: string, id: string): Record<string, AttributeValue> {
  return {
    pk: { S: `WEBHOOK#${escapeKeyPart(tenant)}#${escapeKeyPart(id)}` },
    sk: { S: RECEIPT_SK },
  };
}

export class DynamoWebhookReceipts implements WebhookReceipts {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async remember(
    receipt: WebhookReceipt,
    nowSeconds: number,
    expiresAtSeconds: number,
  ): Promise<WebhookReceiptMatch> {
    const key = receiptKey(receipt.tenant, receipt.id);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...key,
            digest: { S: receipt.digest },
            [RECEIPT_TTL_ATTRIBUTE]: { N: String(expiresAtSeconds) },
          },
          ConditionExpression: "attribute_not_exists(pk) OR #expires <= :now",
          ExpressionAttributeNames: { "#expires": RECEIPT_TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ":now": { N: String(nowSeconds) } },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return "new";
    } catch (error) {
      if ((error as { name?: string }).name !== "ConditionalCheckFailedException") throw error;
      const old = (error as { Item?: Record<string, AttributeValue> }).Item;
      const kept = old ?? (await this.#read(key));
      const digest = kept?.digest?.S;
      if (digest === undefined) {
        throw new ConditionFailedError(
          `webhook receipt ${key.pk?.S} failed its condition but holds no digest`,
        );
      }
      return digest === receipt.digest ? "same" : "different";
    }
  }

  async #read(key: Record<string, AttributeValue>) {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    return Item;
  }
}
