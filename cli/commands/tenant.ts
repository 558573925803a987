/**
 * `autocompact tenant create|add-key`: creates tenants and API keys in a
 * deployed table (or DynamoDB Local with --endpoint). A key is printed once;
 * only its SHA-256 is stored.
 */

import { InvalidInputError } from "../../core/errors.ts";
import { defineCommand, EXIT, UsageError, write } from "../command.ts";
import { loadConfigLayer } from "../options.ts";

const OPTIONS = {
  table: { type: "string" },
  id: { type: "string" },
  region: { type: "string" },
  endpoint: { type: "string" },
  config: { type: "string" },
  "webhook-secret": { type: "string", multiple: true },
} as const;

const USAGE = `Usage: autocompact tenant create --table TABLE --id TENANT [--config F] [--webhook-secret whsec_…]...
       autocompact tenant add-key --table TABLE --id TENANT

Creates a tenant with a first API key, or adds another key to a tenant (for
rotation), in the service's DynamoDB table (the stack output "TableName"). The
key is printed once on stdout as JSON {"tenant","api_key"}; only its SHA-256 is
stored.

  --table TABLE           the DynamoDB table
  --id TENANT             the tenant id (letters, digits, . _ -)
  --config F              the tenant's auto config layer (TOML or inline JSON)
  --webhook-secret S      require Standard Webhooks signatures with this secret
                          (repeatable, for rotation)
  --region R              AWS region (default from the environment)
  --endpoint URL          a DynamoDB endpoint (e.g. DynamoDB Local)

Credentials come from the default AWS chain.`;

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const action = positionals[0];
  if (action !== "create" && action !== "add-key")
    throw new UsageError("say `tenant create` or `tenant add-key`");
  if (!values.table) throw new UsageError("give the table with --table");
  if (!values.id || !/^[A-Za-z0-9._-]{1,64}$/.test(values.id)) {
    throw new UsageError("give the tenant id with --id (letters, digits, . _ -; at most 64)");
  }
  for (const secret of values["webhook-secret"] ?? []) {
    if (!secret.startsWith("whsec_"))
      throw new UsageError("--webhook-secret must look like whsec_<base64>");
  }
  const { DynamoDBClient } = await import("@aws-sdk/client-dynamodb");
  const { DynamoTenantDirectory } = await import("../../functions/store/tenants-dynamodb.ts");
  const { ConditionFailedError } = await import("../../functions/errors.ts");
  const { dynamoClientConfig } = await import("../../functions/store/dynamodb-client.ts");
  const client = new DynamoDBClient(
    dynamoClientConfig({
      ...(values.region ? { region: values.region } : {}),
      ...(values.endpoint
        ? {
            endpoint: values.endpoint,
            region: values.region ?? "local",
            credentials: { accessKeyId: "local", secretAccessKey: "local" },
          }
        : {}),
    }),
  );
  try {
    const directory = new DynamoTenantDirectory(client, values.table);
    let key: string;
    if (action === "create") {
      const config = values.config ? await loadConfigLayer(values.config) : undefined;
      try {
        key = await directory.createTenant(values.id, {
          ...(config ? { config } : {}),
          ...(values["webhook-secret"] ? { webhookSecrets: values["webhook-secret"] } : {}),
        });
      } catch (error) {
        if (error instanceof ConditionFailedError)
          throw new InvalidInputError(`${error.message}: use \`tenant add-key\` for another key`);
        throw error;
      }
    } else {
      key = await directory.addApiKey(values.id);
    }
    await write(io.stdout, `${JSON.stringify({ tenant: values.id, api_key: key })}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    throw new InvalidInputError(`tenant ${action}: ${(error as Error).message}`, { cause: error });
  } finally {
    client.destroy();
  }
});
