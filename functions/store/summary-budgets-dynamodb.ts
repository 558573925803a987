/**
 * Summary tokens per tenant and UTC day in the service's table
 * (docs/architecture.md §8): `pk = BUDGET#<tenant>`, `sk = DAY#<YYYY-MM-DD>`,
 * `tokens` grown by an atomic ADD (concurrent summaries never lose a count),
 * and `expires_at`, the table's TTL attribute, so DynamoDB deletes the item
 * some time after its day.
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import type { SummaryBudgets } from "../ports.ts";
import { tableDefinition } from "./table-definition.ts";

/** The key of the tenant's `day`. */
export function budgetKey(tenant: string, day: string): Record<string, AttributeValue> {
  return { pk: { S: `BUDGET#${tenant}` }, sk: { S: `DAY#${day}` } };
}

export class DynamoSummaryBudgets implements SummaryBudgets {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async used(tenant: string, day: string): Promise<number> {
    const { Item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: budgetKey(tenant, day),
        ConsistentRead: true,
        ProjectionExpression: "tokens",
      }),
    );
    return Number(Item?.tokens?.N ?? 0);
  }

  async add(
    tenant: string,
    day: string,
    tokens: number,
    expiresAtSeconds: number,
  ): Promise<number> {
    const { Attributes } = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: budgetKey(tenant, day),
        UpdateExpression: "ADD tokens :tokens SET #expires = :expires",
        ExpressionAttributeNames: { "#expires": tableDefinition.timeToLiveAttribute },
        ExpressionAttributeValues: {
          ":tokens": { N: String(tokens) },
          ":expires": { N: String(expiresAtSeconds) },
        },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    return Number(Attributes?.tokens?.N ?? 0);
  }
}
