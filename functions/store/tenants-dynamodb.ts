/**
 * Tenants and their API keys in the service's table: `pk = TENANT#<id>`
 * holds the tenant (default config layer, models, webhook secrets, limits), `pk = KEY#<sha256>` maps
 * a key's hash to its tenant. Keys themselves are never stored; webhook
 * secrets only sealed (functions/secrets/): sealed on write, opened on read.
 * A plain-text secret an earlier version wrote still opens (reported through
 * `onPlaintextSecret`) and is sealed by the tenant's next secrets write.
 * The tenant's notification endpoint sits on the same item (`notifications`:
 * url, events, and its signing secret, sealed the same way).
 */
import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import * as z from "zod";
import { type ModelCatalog, ModelCatalogLayer } from "../../core/catalog.ts";
import { type AutoConfigLayer, parseAutoLayer } from "../../core/config.ts";
import { AutocompactError } from "../../core/errors.ts";
import { issueLines } from "../../core/issues.ts";
import { ConditionFailedError, CorruptDataError, SetupError } from "../errors.ts";
import { checkWebhookSecret, generateApiKey, hashApiKey } from "../keys.ts";
import {
  NOTIFICATION_TYPES,
  type NotificationEndpoints,
  type SignedEndpoint,
  type Tenant,
  type TenantDirectory,
  type TenantLimits,
  type TenantSettings,
} from "../ports.ts";
import { parseSealedSecret, type SealedSecret, type SecretSealer } from "../secrets/sealer.ts";

const tenantKey = (id: string) => ({ pk: `TENANT#${id}`, sk: "TENANT" });
const apiKeyKey = (hash: string) => ({ pk: `KEY#${hash}`, sk: "KEY" });

/**
 * For a process that never reads or writes webhook secrets (the compactor):
 * its tenants come without them, and it needs no key.
 */
export const SECRETS_NOT_READ = "secrets-not-read";

/** A stored webhook secret: sealed, or a plain string an earlier version wrote. */
type StoredSecret = SealedSecret | string;

export interface TenantDirectoryOptions {
  /**
   * Called when a tenant read still has plain-text secrets (with their count,
   * never them); once per tenant and directory (a cold start), not per request.
   */
  readonly onPlaintextSecret?: (tenant: string, count: number) => void;
}

export class DynamoTenantDirectory
  implements TenantDirectory, TenantSettings, NotificationEndpoints
{
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly secrets: SecretSealer | typeof SECRETS_NOT_READ,
    private readonly options: TenantDirectoryOptions = {},
  ) {}

  /** Tenants whose plain-text secrets were reported already. */
  readonly #reported = new Set<string>();

  #sealer(): SecretSealer {
    if (this.secrets === SECRETS_NOT_READ) {
      throw new SetupError("this tenant directory was built without a secret sealer");
    }
    return this.secrets;
  }

  /** The item under `key`, read strongly consistent (only `projection`, if given), unmarshalled. */
  async #read(
    key: { readonly pk: string; readonly sk: string },
    projection?: string,
  ): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: marshall(key),
        ConsistentRead: true,
        ...(projection === undefined ? {} : { ProjectionExpression: projection }),
      }),
    );
    return Item && unmarshall(Item);
  }

  /** One conditional UpdateItem of the tenant item; false when its condition failed. */
  async #updateTenant(
    id: string,
    update: Omit<UpdateItemCommandInput, "TableName" | "Key">,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(tenantKey(id)),
          ...update,
        }),
      );
      return true;
    } catch (error) {
      if ((error as { name?: string }).name === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }

  /**
   * The stored secrets of a tenant item, opened. Reads fail closed on a
   * secret that does not open; a secrets write (`skipUnreadable`) leaves out
   * those that never will (sealed under a replaced key, or altered), so
   * re-adding secrets after a key change works, and counts them.
   */
  async #openSecrets(
    id: string,
    stored: unknown,
    skipUnreadable = false,
  ): Promise<{ stored: StoredSecret[]; opened: { stored: StoredSecret; plain: string }[] }> {
    if (!Array.isArray(stored) || stored.length === 0) return { stored: [], opened: [] };
    const sealer = this.#sealer();
    const items = stored.map(
      (item): StoredSecret => (typeof item === "string" ? item : parseSealedSecret(item)),
    );
    const opened = await Promise.all(
      items.map(async (item) => {
        if (typeof item === "string") return { stored: item, plain: item };
        try {
          return { stored: item, plain: await sealer.open(item, id) };
        } catch (error) {
          // Not transient trouble (KMS throttling, a missing grant): a key that is gone.
          if (skipUnreadable && error instanceof AutocompactError) return undefined;
          throw error;
        }
      }),
    );
    const legacy = items.filter((item) => typeof item === "string").length;
    if (legacy > 0 && !this.#reported.has(id)) {
      this.#reported.add(id);
      this.options.onPlaintextSecret?.(id, legacy);
    }
    return { stored: items, opened: opened.filter((o) => o !== undefined) };
  }

  async findByKeyHash(keyHash: string): Promise<Tenant | undefined> {
    const key = await this.#read(apiKeyKey(keyHash));
    return key ? this.getTenant(String(key.tenant)) : undefined;
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    const record = await this.#read(tenantKey(id));
    if (!record) return undefined;
    const secrets =
      this.secrets === SECRETS_NOT_READ
        ? []
        : (await this.#openSecrets(id, record.webhook_secrets)).opened.map((o) => o.plain);
    return {
      id,
      ...(record.config ? { config: parseAutoLayer(record.config) } : {}),
      ...(record.models === undefined ? {} : { models: storedModels(id, record.models) }),
      ...(secrets.length > 0 ? { webhook_secrets: secrets } : {}),
      ...(record.limits === undefined ? {} : { limits: storedLimits(id, record.limits) }),
    };
  }

  /** Creates a tenant with a first API key; returns the key (the only time it is visible). */
  async createTenant(
    id: string,
    options: {
      config?: AutoConfigLayer;
      models?: ModelCatalog;
      webhookSecrets?: string[];
      limits?: TenantLimits;
    } = {},
  ): Promise<string> {
    for (const secret of options.webhookSecrets ?? []) checkWebhookSecret(secret);
    const sealer = options.webhookSecrets?.length ? this.#sealer() : undefined;
    const sealed = await Promise.all(
      (options.webhookSecrets ?? []).map((secret) => (sealer as SecretSealer).seal(secret, id)),
    );
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
                    ...(options.config && Object.keys(options.config).length > 0
                      ? { config: options.config }
                      : {}),
                    ...(options.models && Object.keys(options.models).length > 0
                      ? { models: ModelCatalogLayer.parse(options.models) }
                      : {}),
                    ...(sealed.length > 0 ? { webhook_secrets: sealed } : {}),
                    ...(options.limits && Object.keys(options.limits).length > 0
                      ? { limits: TenantLimitsSchema.parse(options.limits) }
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

  /**
   * Sets the given limits of an existing tenant (docs/architecture.md §8),
   * keeping the others; returns them all. A limit it does not have takes the
   * deployment's default.
   */
  async setLimits(id: string, limits: TenantLimits): Promise<TenantLimits> {
    const set = Object.entries(TenantLimitsSchema.parse(limits));
    if (set.length === 0) return (await this.getTenant(id))?.limits ?? {};
    const names = Object.fromEntries(set.map(([name], i) => [`#l${i}`, name]));
    const values = Object.fromEntries(set.map(([, value], i) => [`:l${i}`, value]));
    try {
      // The map first (a member can be set only in one that exists), then its members.
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(tenantKey(id)),
          UpdateExpression: "SET limits = if_not_exists(limits, :empty)",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: marshall({ ":empty": {} }),
        }),
      );
      const { Attributes: after } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(tenantKey(id)),
          UpdateExpression: `SET ${set.map((_, i) => `limits.#l${i} = :l${i}`).join(", ")}`,
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: marshall(values),
          ReturnValues: "ALL_NEW",
        }),
      );
      return storedLimits(id, after && unmarshall(after).limits);
    } catch (error) {
      if ((error as { name?: string }).name === "ConditionalCheckFailedException") {
        throw new ConditionFailedError(`no tenant "${id}"`, { cause: error });
      }
      throw error;
    }
  }

  async setConfig(id: string, config: AutoConfigLayer): Promise<void> {
    await this.#setSetting(id, "config", parseAutoLayer(config));
  }

  async setModels(id: string, models: ModelCatalog): Promise<void> {
    await this.#setSetting(id, "models", ModelCatalogLayer.parse(models));
  }

  /** Sets (or, when empty, removes) one attribute of an existing tenant item. */
  async #setSetting(id: string, name: "config" | "models", value: object): Promise<void> {
    const written = await this.#updateTenant(id, {
      ...(Object.keys(value).length === 0
        ? { UpdateExpression: "REMOVE #setting" }
        : {
            UpdateExpression: "SET #setting = :value",
            ExpressionAttributeValues: marshall(
              { ":value": value },
              { removeUndefinedValues: true },
            ),
          }),
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: { "#setting": name },
    });
    if (!written) throw new ConditionFailedError(`no tenant "${id}"`);
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

  /**
   * Removes an API key of a tenant: a new lookup no longer finds it; an API
   * instance that found it in the last 5 s keeps it until then (tenants-cache.ts).
   */
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
  async addWebhookSecret(id: string, secret: string): Promise<{ dropped: number }> {
    checkWebhookSecret(secret);
    return this.#updateSecrets(id, (secrets) => {
      if (secrets.includes(secret))
        throw new ConditionFailedError(`tenant "${id}" already has that webhook secret`);
      return [...secrets, secret];
    });
  }

  /** Removes a webhook signing secret; with none left, turn posts need no signature. */
  async removeWebhookSecret(id: string, secret: string): Promise<{ dropped: number }> {
    return this.#updateSecrets(id, (secrets) => {
      if (!secrets.includes(secret))
        throw new ConditionFailedError(`tenant "${id}" has no such webhook secret`);
      return secrets.filter((s) => s !== secret);
    });
  }

  /**
   * Rewrites the tenant's secrets, conditional on the list it read (a
   * concurrent change is retried). Secrets kept are stored as they were;
   * new ones and plain-text ones of an earlier version are sealed; those that
   * no longer open are dropped (`dropped` counts them).
   */
  async #updateSecrets(
    id: string,
    change: (secrets: string[]) => string[],
  ): Promise<{ dropped: number }> {
    const sealer = this.#sealer();
    for (;;) {
      const record = await this.#read(tenantKey(id));
      if (!record) throw new ConditionFailedError(`no tenant "${id}"`);
      const read = await this.#openSecrets(id, record.webhook_secrets, true);
      const before = read.stored;
      const plain = read.opened.map((o) => o.plain);
      const after = await Promise.all(
        change([...plain]).map((secret) => {
          const kept = read.opened[plain.indexOf(secret)]?.stored;
          return kept !== undefined && typeof kept !== "string" ? kept : sealer.seal(secret, id);
        }),
      );
      const written = await this.#updateTenant(id, {
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
      });
      if (written) return { dropped: before.length - read.opened.length };
    }
  }

  /**
   * Makes `key` the dev tenant's key of the local runtime, creating the
   * tenant if needed. The dev key follows the variable: the previous dev key
   * (its hash is kept on the tenant) stops authenticating.
   */
  async setDevKey(id: string, key: string): Promise<void> {
    const hash = hashApiKey(key);
    const previous = (await this.#read(tenantKey(id)))?.dev_key_hash;
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

  /** The tenant's notification endpoint with its signing secret opened, if it has one. */
  async getEndpoint(id: string): Promise<SignedEndpoint | undefined> {
    const stored = (await this.#read(tenantKey(id), "notifications"))?.notifications;
    if (stored === undefined) return undefined;
    const endpoint = StoredEndpoint.safeParse(stored);
    if (!endpoint.success) {
      throw new CorruptDataError(
        `the notification endpoint of tenant "${id}" does not read back: ${issueLines(endpoint.error.issues)[0]}`,
      );
    }
    const { url, events, secret } = endpoint.data;
    return {
      url,
      ...(events ? { events } : {}),
      secret: await this.#sealer().open(parseSealedSecret(secret), id),
    };
  }

  /** Sets the tenant's notification endpoint, its secret sealed; the tenant must exist. */
  async putEndpoint(id: string, endpoint: SignedEndpoint): Promise<void> {
    checkWebhookSecret(endpoint.secret);
    const secret = await this.#sealer().seal(endpoint.secret, id);
    const written = await this.#updateTenant(id, {
      UpdateExpression: "SET notifications = :endpoint",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: marshall({
        ":endpoint": {
          url: endpoint.url,
          ...(endpoint.events ? { events: [...endpoint.events] } : {}),
          secret,
        },
      }),
    });
    if (!written) throw new ConditionFailedError(`no tenant "${id}"`);
  }

  /** Removes the tenant's notification endpoint; false when it had none. */
  async deleteEndpoint(id: string): Promise<boolean> {
    return this.#updateTenant(id, {
      UpdateExpression: "REMOVE notifications",
      ConditionExpression: "attribute_exists(notifications)",
    });
  }
}

/** A tenant's limits (the tenant item's `limits`): whole numbers from 1, each optional. */
export const TenantLimitsSchema = z.strictObject({
  requests_per_second: z.number().int().positive().optional(),
  burst: z.number().int().positive().optional(),
  waiting_reads: z.number().int().positive().optional(),
  summary_tokens_per_day: z.number().int().positive().optional(),
});

/** The stored `what` of tenant `id` as `schema` reads it; a value that does not read back is corrupt data. */
function readBack<T extends z.ZodType>(
  schema: T,
  what: string,
  id: string,
  stored: unknown,
): z.output<T> {
  const result = schema.safeParse(stored);
  if (!result.success) {
    throw new CorruptDataError(
      `the ${what} of tenant "${id}" do not read back: ${issueLines(result.error.issues)[0]}`,
    );
  }
  return result.data;
}

/** The stored limits of tenant `id`. */
const storedLimits = (id: string, stored: unknown): TenantLimits =>
  readBack(TenantLimitsSchema, "limits", id, stored);

/** The stored models of tenant `id`. */
const storedModels = (id: string, stored: unknown): ModelCatalog =>
  readBack(ModelCatalogLayer, "models", id, stored);

/** A notification endpoint as stored on the tenant item. */
const StoredEndpoint = z.object({
  url: z.string(),
  events: z.array(z.enum(NOTIFICATION_TYPES)).optional(),
  secret: z.unknown(),
});
