/**
 * Tenants and their API keys in the service's table: `pk = TENANT#<id>`
 * holds the tenant (config layer, webhook secrets), `pk = KEY#<sha256>` maps
 * a key's hash to its tenant. Keys themselves are never stored.
 */
import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { type AutoConfigLayer, parseAutoLayer } from "../../core/config.ts";
import { ConditionFailedError } from "../errors.ts";
import { checkWebhookSecret, generateApiKey, hashApiKey } from "../keys.ts";
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
    for (const secret of options.webhookSecrets ?? []) checkWebhookSecret(secret);
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

  /** Removes an API key of a tenant; the key stops authenticating at once. */
  async revokeApiKey(id: string, keyHash: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: marshall(apiKeyKey(keyHash)),
          ConditionExpression: "tenant = :tenant",
          ExpressionAttributeValues: marshall({ ":tenant": id }),
        }),
      );
    } catch (error) {
      if ((error as { name?: string }).name === "ConditionalCheckFailedException") {
        throw new ConditionFailedError(`tenant "${id}" has no such API key`, { cause: error });
      }
      throw error;
    }
  }

  /**
   * Adds a webhook signing secret (rotation: old and new are both valid until
   * the old is removed). The secret is checked as Standard Webhooks checks it.
   */
  async addWebhookSecret(id: string, secret: string): Promise<void> {
    checkWebhookSecret(secret);
    await this.#updateSecrets(id, (secrets) => {
      if (secrets.includes(secret))
        throw new ConditionFailedError(`tenant "${id}" already has that webhook secret`);
      return [...secrets, secret];
    });
  }

  /** Removes a webhook signing secret; with none left, turn posts need no signature. */
  async removeWebhookSecret(id: string, secret: string): Promise<void> {
    await this.#updateSecrets(id, (secrets) => {
      if (!secrets.includes(secret))
        throw new ConditionFailedError(`tenant "${id}" has no such webhook secret`);
      return secrets.filter((s) => s !== secret);
    });
  }

  /** Rewrites the tenant's secrets, conditional on the list it read (a concurrent change is retried). */
  async #updateSecrets(id: string, change: (secrets: string[]) => string[]): Promise<void> {
    for (;;) {
      const tenant = await this.getTenant(id);
      if (!tenant) throw new ConditionFailedError(`no tenant "${id}"`);
      const before = [...(tenant.webhook_secrets ?? [])];
      const after = change(before);
      try {
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: marshall(tenantKey(id)),
            UpdateExpression: "SET webhook_secrets = :after",
            ConditionExpression:
              before.length === 0
                ? "attribute_exists(pk) AND (attribute_not_exists(webhook_secrets) OR size(webhook_secrets) = :zero)"
                : "webhook_secrets = :before",
            ExpressionAttributeValues: marshall(
              before.length === 0
                ? { ":after": after, ":zero": 0 }
                : { ":after": after, ":before": before },
            ),
          }),
        );
        return;
      } catch (error) {
        if ((error as { name?: string }).name !== "ConditionalCheckFailedException") throw error;
      }
    }
  }

  /**
   * Makes `key` the dev tenant's key of the local runtime, creating the
   * tenant if needed. The dev key follows the variable: the previous dev key
   * (its hash is kept on the tenant) stops authenticating.
   */
  async setDevKey(id: string, key: string): Promise<void> {
    const hash = hashApiKey(key);
    const item = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: marshall(tenantKey(id)),
        ConsistentRead: true,
      }),
    );
    const previous = item.Item ? unmarshall(item.Item).dev_key_hash : undefined;
    await this.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: marshall(tenantKey(id)),
              UpdateExpression: "SET created = if_not_exists(created, :now), dev_key_hash = :hash",
              ExpressionAttributeValues: marshall({
                ":now": new Date().toISOString(),
                ":hash": hash,
              }),
            },
          },
          {
            Put: { TableName: this.tableName, Item: marshall({ ...apiKeyKey(hash), tenant: id }) },
          },
          ...(typeof previous === "string" && previous !== hash
            ? [{ Delete: { TableName: this.tableName, Key: marshall(apiKeyKey(previous)) } }]
            : []),
        ],
      }),
    );
  }
}
