/**
 * `autocompact tenant …`: tenants, their API keys and webhook secrets in a
 * deployed table (or DynamoDB Local with --endpoint). A key is printed once;
 * only its SHA-256 is stored; secrets and keys to revoke come from stdin.
 */

import { toConfigTree } from "../../core/config.ts";
import { InvalidInputError } from "../../core/errors.ts";
import { awsClientSettings } from "../aws.ts";
import { defineCommand, EXIT, type Io, UsageError, write } from "../command.ts";
import { loadConfigLayer, loadModels } from "../options.ts";

const OPTIONS = {
  table: { type: "string" },
  "data-dir": { type: "string" },
  id: { type: "string" },
  region: { type: "string" },
  endpoint: { type: "string" },
  config: { type: "string" },
  models: { type: "string" },
  "webhook-secret-stdin": { type: "boolean" },
  "webhook-secret": { type: "string" },
  "kms-key": { type: "string" },
  "secrets-key-file": { type: "string" },
  "requests-per-second": { type: "string" },
  burst: { type: "string" },
  "waiting-reads": { type: "string" },
  "summary-tokens-per-day": { type: "string" },
} as const;

/** The limit flags and the tenant limits they set (docs/architecture.md §8). */
const LIMIT_FLAGS = {
  "requests-per-second": "requests_per_second",
  burst: "burst",
  "waiting-reads": "waiting_reads",
  "summary-tokens-per-day": "summary_tokens_per_day",
} as const;

/** The limits the flags give: whole numbers from 1. */
function limitFlags(values: Partial<Record<keyof typeof LIMIT_FLAGS, string>>) {
  const limits: Partial<Record<(typeof LIMIT_FLAGS)[keyof typeof LIMIT_FLAGS], number>> = {};
  for (const flag of Object.keys(LIMIT_FLAGS) as (keyof typeof LIMIT_FLAGS)[]) {
    const text = values[flag];
    if (text === undefined) continue;
    if (!/^[1-9]\d{0,14}$/.test(text)) {
      throw new UsageError(`--${flag} must be a whole number from 1 (got "${text}")`);
    }
    limits[LIMIT_FLAGS[flag]] = Number(text);
  }
  return limits;
}

const ACTIONS = [
  "create",
  "set-config",
  "set-models",
  "set-limits",
  "add-key",
  "revoke-key",
  "add-secret",
  "remove-secret",
] as const;
type Action = (typeof ACTIONS)[number];

const USAGE = `Usage: autocompact tenant create --table TABLE --id TENANT [--config F] [--models M]
                                   [--webhook-secret-stdin] [LIMITS]
       autocompact tenant set-config --table TABLE --id TENANT --config F
       autocompact tenant set-models --table TABLE --id TENANT --models M
       autocompact tenant set-limits --table TABLE --id TENANT LIMITS
       autocompact tenant add-key --table TABLE --id TENANT
       autocompact tenant revoke-key --table TABLE --id TENANT      < key
       autocompact tenant add-secret --table TABLE --id TENANT      < whsec_…
       autocompact tenant remove-secret --table TABLE --id TENANT   < whsec_…

Manages tenants in the service's DynamoDB table (the stack output
"TableName"). create makes a tenant with a first API key; add-key adds another
(for rotation); revoke-key removes one, which stops authenticating at once.
A new key is printed once on stdout as JSON {"tenant","api_key"}; only its
SHA-256 is stored.

Webhook signing secrets (Standard Webhooks, whsec_<base64>) and keys to revoke
are read from stdin, never from the command line, so they stay out of shell
history and process lists. A tenant with secrets must sign its turn posts;
rotate by add-secret (old and new both valid) then remove-secret of the old.
Secrets are stored sealed: under the stack's KMS key (envelope encryption;
the key is found by its alias alias/autocompact/<TABLE>, or give --kms-key),
or, with --data-dir, under the data directory's key file. A secret that no
longer opens (its key file replaced) is dropped by the next add-secret or
remove-secret, which says so (dropped_unreadable_secrets): add it again.

  --data-dir DIR          the data directory of \`npm start\` (default $AUTOCOMPACT_DATA_DIR):
                          its table, database credentials and running endpoint
  --table TABLE           the DynamoDB table
  --id TENANT             the tenant id (letters, digits, . _ -)
  --config F              the tenant's default auto config layer, TOML rooted like D50
                          ([conversation.compaction.auto]) or inline JSON: every conversation's,
                          over the service's and under the conversation's own; set-config
                          replaces it ({"conversation":{"compaction":{"auto":{}}}} removes it)
  --models M              the tenant's models, model id → context window in tokens, inline
                          JSON or a JSON file ({"my-model":128000}): over the deployment's
                          MODEL_CATALOG and the bundled catalog, under a turn's
                          model.context_window; set-models replaces them ({} removes them)
  --webhook-secret-stdin  create: read the tenant's first webhook secret from stdin
  LIMITS, each optional (a limit not set takes the deployment's default, docs/architecture.md §8):
  --requests-per-second N requests a second per API instance (token bucket; default 50)
  --burst N               requests at once per API instance (default 100)
  --waiting-reads N       reads holding a wait at once per API instance (default 100)
  --summary-tokens-per-day N  manual and dry-run summary tokens a UTC day (default 2000000)
  --region R              AWS region (default from the environment)
  --endpoint URL          a DynamoDB endpoint (e.g. DynamoDB Local)
  --kms-key KEY           the KMS key sealing webhook secrets (default $AUTOCOMPACT_KMS_KEY,
                          else the stack's alias/autocompact/<TABLE>; output WebhookSecretsKeyArn)
  --secrets-key-file F    seal with this local key file instead (a DynamoDB Local table
                          not run by \`npm start\`; the file must exist)

Credentials come from the default AWS chain (sealing needs kms:GenerateDataKey
and kms:Decrypt on the key), or, with --data-dir, from the local runtime's data
directory (its DynamoDB Local answers no other key).`;

/** Where the secrets of this table are sealed: the data directory's key, a key file, or KMS. */
async function secretSealer(
  values: { "kms-key"?: string; "secrets-key-file"?: string; region?: string },
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string | undefined,
  table: string,
) {
  if (dataDir !== undefined || values["secrets-key-file"] !== undefined) {
    if (values["kms-key"] !== undefined) {
      throw new UsageError("--kms-key seals in a deployed table; a local one has its key file");
    }
    const { dataDirSecretSealer, fileSecretSealer } = await import(
      "../../functions/secrets/local.ts"
    );
    const file = values["secrets-key-file"];
    return file !== undefined
      ? fileSecretSealer(file, { create: false })
      : dataDirSecretSealer(dataDir as string);
  }
  const { KMSClient } = await import("@aws-sdk/client-kms");
  const { KmsSecretSealer } = await import("../../functions/secrets/kms.ts");
  const kms = new KMSClient(awsClientSettings(values.region, env));
  return {
    kms,
    sealer: new KmsSecretSealer(
      kms,
      values["kms-key"] ?? env.AUTOCOMPACT_KMS_KEY ?? `alias/autocompact/${table}`,
    ),
  };
}

/** The local runtime's database under `dataDir`: its table and a client config for it. */
async function localDatabase(dataDir: string, endpoint: string | undefined) {
  const { LOCAL_TABLE, localClientConfig, readLocalDatabase } = await import(
    "../../functions/local/dynamodb-local.ts"
  );
  const found = readLocalDatabase(dataDir);
  if (!found.credentials) {
    throw new InvalidInputError(
      `no local database under ${dataDir}: start the service on it first (npm start)`,
    );
  }
  const at = endpoint ?? found.endpoint;
  if (!at) {
    throw new InvalidInputError(
      `the service on ${dataDir} is not running: start it (npm start), or give its DynamoDB endpoint with --endpoint`,
    );
  }
  return {
    table: LOCAL_TABLE,
    config: localClientConfig({ endpoint: at, credentials: found.credentials }),
  };
}

/** Secrets sealed under a key that is gone, dropped by a secrets write (said, never silent). */
const droppedNote = (dropped: number) =>
  dropped > 0 ? { dropped_unreadable_secrets: dropped } : {};

/** The one line stdin holds (a secret or a key), trimmed. */
async function readSecretLine(io: Io, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Buffer));
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "" || text.includes("\n")) {
    throw new UsageError(
      `give exactly one ${what} on stdin (e.g. from a file or a password manager)`,
    );
  }
  return text;
}

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  const action = positionals[0] as Action | undefined;
  if (action === undefined || !ACTIONS.includes(action)) {
    throw new UsageError(`say \`tenant ${ACTIONS.join("|")}\``);
  }
  const dataDir = values["data-dir"] ?? (values.table ? undefined : io.env.AUTOCOMPACT_DATA_DIR);
  const local = dataDir === undefined ? undefined : await localDatabase(dataDir, values.endpoint);
  const table = values.table ?? local?.table;
  if (!table)
    throw new UsageError("give the table with --table, or a local data directory with --data-dir");
  if (!values.id || !/^[A-Za-z0-9._-]{1,64}$/.test(values.id)) {
    throw new UsageError("give the tenant id with --id (letters, digits, . _ -; at most 64)");
  }
  if (values["webhook-secret"] !== undefined) {
    throw new UsageError(
      "secrets are not taken on the command line (shell history, process lists): pipe it to --webhook-secret-stdin",
    );
  }
  const id = values.id;
  if (action === "set-config" && values.config === undefined) {
    throw new UsageError("give the tenant's default config with --config F");
  }
  if (action === "set-models" && values.models === undefined) {
    throw new UsageError("give the tenant's models with --models M");
  }
  for (const flag of ["config", "models"] as const) {
    if (values[flag] !== undefined && action !== "create" && action !== `set-${flag}`) {
      throw new UsageError(`--${flag} is set by \`tenant create\` or \`tenant set-${flag}\``);
    }
  }
  const config = values.config === undefined ? undefined : await loadConfigLayer(values.config);
  const models = values.models === undefined ? undefined : await loadModels(values.models);
  const limits = limitFlags(values);
  if (action !== "create" && action !== "set-limits" && Object.keys(limits).length > 0) {
    throw new UsageError("limits are set by `tenant create` or `tenant set-limits`");
  }
  if (action === "set-limits" && Object.keys(limits).length === 0) {
    throw new UsageError(
      `give at least one limit: ${Object.keys(LIMIT_FLAGS)
        .map((flag) => `--${flag}`)
        .join(", ")}`,
    );
  }
  const fromStdin =
    action === "revoke-key"
      ? await readSecretLine(io, "API key")
      : action === "add-secret" ||
          action === "remove-secret" ||
          (action === "create" && values["webhook-secret-stdin"])
        ? await readSecretLine(io, "webhook secret")
        : undefined;
  const { DynamoDBClient } = await import("@aws-sdk/client-dynamodb");
  const { DynamoTenantDirectory } = await import("../../functions/store/tenants-dynamodb.ts");
  const { ConditionFailedError } = await import("../../functions/errors.ts");
  const { dynamoClientConfig } = await import("../../functions/store/dynamodb-client.ts");
  const { hashApiKey } = await import("../../functions/keys.ts");
  const client = new DynamoDBClient(
    local
      ? local.config
      : dynamoClientConfig({
          ...awsClientSettings(values.region, io.env),
          ...(values.endpoint ? { endpoint: values.endpoint } : {}),
        }),
  );
  let kms: { destroy(): void } | undefined;
  try {
    const sealing = await secretSealer(values, io.env, dataDir, table);
    const sealer = "sealer" in sealing ? sealing.sealer : sealing;
    kms = "kms" in sealing ? sealing.kms : undefined;
    const directory = new DynamoTenantDirectory(client, table, sealer);
    const answer = async (): Promise<Record<string, unknown>> => {
      switch (action) {
        case "create": {
          const key = await directory.createTenant(id, {
            ...(config ? { config } : {}),
            ...(models ? { models } : {}),
            ...(fromStdin ? { webhookSecrets: [fromStdin] } : {}),
            ...(Object.keys(limits).length > 0 ? { limits } : {}),
          });
          return { tenant: id, api_key: key };
        }
        case "set-config":
          await directory.setConfig(id, config ?? {});
          return { tenant: id, ...toConfigTree(config ?? {}) };
        case "set-models":
          await directory.setModels(id, models ?? {});
          return { tenant: id, models };
        case "set-limits":
          return { tenant: id, limits: await directory.setLimits(id, limits) };
        case "add-key":
          return { tenant: id, api_key: await directory.addApiKey(id) };
        case "revoke-key":
          await directory.revokeApiKey(id, hashApiKey(fromStdin as string));
          return { tenant: id, revoked: "api_key" };
        case "add-secret": {
          const { dropped } = await directory.addWebhookSecret(id, fromStdin as string);
          return { tenant: id, added: "webhook_secret", ...droppedNote(dropped) };
        }
        case "remove-secret": {
          const { dropped } = await directory.removeWebhookSecret(id, fromStdin as string);
          return { tenant: id, removed: "webhook_secret", ...droppedNote(dropped) };
        }
      }
    };
    let result: Record<string, unknown>;
    try {
      result = await answer();
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        const hint = action === "create" ? ": use `tenant add-key` for another key" : "";
        throw new InvalidInputError(`${error.message}${hint}`, { cause: error });
      }
      throw error;
    }
    await write(io.stdout, `${JSON.stringify(result)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof InvalidInputError || error instanceof UsageError) throw error;
    throw new InvalidInputError(`tenant ${action}: ${(error as Error).message}`, { cause: error });
  } finally {
    client.destroy();
    kms?.destroy();
  }
});
