/**
 * Tenants and their API keys in the service's table: `pk = TENANT#<id>`
 * holds the tenant (config layer, webhook secrets), `pk = KEY#<sha256>` maps
 * a key's hash to its tenant. Keys themselves are never stored.
 */
import {
  type DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { type AutoConfigLayer, parseAutoLayer } from "../../core/config.ts";
import { ConditionFailedError } from "../errors.ts";
import { generateApiKey, hashApiKey } from "../keys.ts";
import type { Tenant, TenantDirectory } from "../ports.ts";

const tenantKey = (id: string) => ({ pk: `TENANT#${id}`, sk: "TENANT" });
const apiKeyKey = (hash: string) => ({ pk: `KEY#${hash}`, sk: "KEY" });

export class DynamoTenantDirectory implements TenantDirectory {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async findByKeyHash(keyHash: string): Promise<Tenant | undefined> {
    const key = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: marshall(apiKeyKey(keyHash)),
        ConsistentRead: true,
      }),
    );
    if (!key.Item) return undefined;
    return this.getTenant(String(unmarshall(key.Item).tenant));
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    const item = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: marshall(tenantKey(id)),
        ConsistentRead: true,
      }),
    );
    if (!item.Item) return undefined;
    const record = unmarshall(item.Item);
    return {
      id,
      ...(record.config ? { config: parseAutoLayer(record.config) } : {}),
      ...(Array.isArray(record.webhook_secrets) && record.webhook_secrets.length > 0
        ? { webhook_secrets: record.webhook_secrets as string[] }
        : {}),
    };
  }

  /** Creates a tenant with a first API key; returns the key (the only time it is visible). */
  async createTenant(
    id: string,
    options: { config?: AutoConfigLayer; webhookSecrets?: string[] } = {},
  ): Promise<string> {
    const key = generateApiKey();
    try {
      await this.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: marshall(
                  {
                    ...tenantKey(id),
                    ...(options.config ? { config: options.config } : {}),
                    ...(options.webhookSecrets?.length
                      ? { webhook_secrets: options.webhookSecrets }
                      : {}),
                  },
                  { removeUndefinedValues: true },
                ),
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: marshall({ ...apiKeyKey(hashApiKey(key)), tenant: id }),
              },
            },
          ],
        }),
      );
    } catch (error) {
      if ((error as { name?: string }).name === "TransactionCanceledException") {
        throw new ConditionFailedError(`tenant "${id}" already exists`, { cause: error });
      }
      throw error;
    }
    return key;
  }

  /** Adds another API key to an existing tenant (for rotation); returns it. */
  async addApiKey(id: string): Promise<string> {
    if (!(await this.getTenant(id))) throw new Error(`no tenant "${id}"`);
    const key = generateApiKey();
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: marshall(apiKeyKey(hashApiKey(key))),
        UpdateExpression: "SET tenant = :tenant",
        ExpressionAttributeValues: marshall({ ":tenant": id }),
      }),
    );
    return key;
  }

  /** Adds a key the operator chose (the local runtime's dev key), idempotently. */
  async ensureTenantWithKey(id: string, key: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: marshall(tenantKey(id)),
        UpdateExpression: "SET created = if_not_exists(created, :now)",
        ExpressionAttributeValues: marshall({ ":now": new Date().toISOString() }),
      }),
    );
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: marshall(apiKeyKey(hashApiKey(key))),
        UpdateExpression: "SET tenant = :tenant",
        ExpressionAttributeValues: marshall({ ":tenant": id }),
      }),
    );
  }
}
