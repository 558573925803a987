/**
 * `autocompact serve` (`npm start`): the whole service on this machine.
 * Loads the service's dependencies only when run, so the offline commands
 * stay light.
 */
import { mergeLayers } from "../../core/config.ts";
import { InvalidInputError } from "../../core/errors.ts";
import { LOCAL_DEV_KEY } from "../client.ts";
import { defineCommand, EXIT, UsageError, write } from "../command.ts";
import { CONFIG_OPTIONS, configLayers, loadConfigLayer } from "../options.ts";

const OPTIONS = {
  ...CONFIG_OPTIONS,
  port: { type: "string" },
  host: { type: "string" },
  "data-dir": { type: "string" },
  "in-memory": { type: "boolean" },
  endpoint: { type: "string" },
} as const;

/** The key of the dev tenant when `AUTOCOMPACT_DEV_KEY` is not set. */
export const DEFAULT_DEV_KEY = LOCAL_DEV_KEY;

const USAGE = `Usage: autocompact serve [--port N] [--host H] [--data-dir DIR | --in-memory]
                       [--endpoint URL] [--config F]... [--enable]

Runs the whole service on this machine: DynamoDB Local (needs Java 17+), the
HTTP API, and the compactor on an in-process queue with SQS semantics. Logs are
JSON lines on stdout. Ctrl-C stops it cleanly; killed at any moment and started
again on the same data, it loses no acknowledged turn and finishes every
pending evaluation.

  --port N        HTTP port (default $PORT, else 8787)
  --host H        address to bind (default $HOST, else 127.0.0.1)
  --data-dir DIR  where data lives (default $AUTOCOMPACT_DATA_DIR, else .data)
  --in-memory     keep nothing on disk
  --endpoint URL  use a DynamoDB Local already running there instead of
                  starting one (it is neither started nor stopped); the
                  database is the one $AWS_ACCESS_KEY_ID selects, else a new one
  --config F      the service config layer: a TOML file rooted like D50
                  ([conversation.compaction.auto]) or inline JSON; also
                  $AUTOCOMPACT_CONFIG (JSON tree); repeatable, later wins
  --enable        shorthand for enabling automatic compaction service-wide

Models: MODEL_CATALOG='{"my-model":64000}' adds model windows (ids → tokens) over
the bundled catalog, as on Lambda; a tenant's own models win over them.

Summaries: SUMMARIZER=openai-compatible OPENAI_BASE_URL=http://127.0.0.1:8080/v1
(llama.cpp, Ollama, …) or SUMMARIZER=bedrock SUMMARY_MODEL_ID=… enable summary rules.

The dev tenant's API key is $AUTOCOMPACT_DEV_KEY (default "${DEFAULT_DEV_KEY}"); it is
printed at start.`;

/** The summarizer chosen by SUMMARIZER (and OPENAI_BASE_URL, …), as in the Lambdas. */
async function localSummarizer(env: Readonly<Record<string, string | undefined>>) {
  if (!env.SUMMARIZER || env.SUMMARIZER === "none") return undefined;
  const { readEnvironment } = await import("../../functions/env.ts");
  const { SetupError } = await import("../../functions/errors.ts");
  const { summarizerFromEnvironment } = await import("../../functions/summarizers/from-env.ts");
  try {
    return await summarizerFromEnvironment(readEnvironment({ ...env, TABLE_NAME: "autocompact" }));
  } catch (error) {
    if (error instanceof SetupError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * A running DynamoDB Local (`--endpoint`) and the database on it: DynamoDB
 * Local keeps one database per access key id, so the environment's key selects
 * one, and without a key a random one gives the service a new, empty database.
 */
async function existingDatabase(
  endpoint: string,
  env: Readonly<Record<string, string | undefined>>,
) {
  if (!URL.canParse(endpoint)) throw new UsageError(`--endpoint must be a URL (got "${endpoint}")`);
  const { randomCredentials } = await import("../../functions/local/dynamodb-local.ts");
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  const credentials =
    accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : randomCredentials();
  return { endpoint, credentials };
}

export const command = defineCommand(USAGE, OPTIONS, async ({ values, positionals }, io) => {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const portText = values.port ?? io.env.PORT ?? "8787";
  if (!/^\d+$/.test(portText) || Number(portText) > 65_535) {
    throw new UsageError(`--port must be a port number (got "${portText}")`);
  }
  const layers = [
    ...(io.env.AUTOCOMPACT_CONFIG ? [await loadConfigLayer(io.env.AUTOCOMPACT_CONFIG)] : []),
    ...(await configLayers(values)),
  ];
  const { startLocalService } = await import("../../functions/local/runtime.ts");
  const { readLimitDefaults, readModelCatalog } = await import("../../functions/env.ts");
  const { LOCAL_TABLE } = await import("../../functions/local/dynamodb-local.ts");
  const summarizer = await localSummarizer(io.env);
  const devKey = io.env.AUTOCOMPACT_DEV_KEY ?? DEFAULT_DEV_KEY;
  const { SetupError } = await import("../../functions/errors.ts");
  // A bad variable is the user's to fix: one line naming it (exit 2), not an unexpected error.
  const fromEnv = <T>(read: (env: typeof io.env) => T): T => {
    try {
      return read(io.env);
    } catch (error) {
      if (error instanceof SetupError) throw new InvalidInputError(error.message, { cause: error });
      throw error;
    }
  };
  const catalog = fromEnv(readModelCatalog);
  const options = {
    port: Number(portText),
    host: values.host ?? io.env.HOST ?? "127.0.0.1",
    dataDir: values["data-dir"] ?? io.env.AUTOCOMPACT_DATA_DIR ?? ".data",
    inMemory: values["in-memory"] ?? false,
    devKey,
    logLevel: io.env.LOG_LEVEL ?? "INFO",
    limits: fromEnv(readLimitDefaults),
    // The deployment's models, as the Lambdas read them (docs/architecture.md §6).
    ...(catalog ? { catalog } : {}),
    ...(layers.length > 0 ? { config: mergeLayers(...layers) } : {}),
    ...(summarizer ? { summarizer } : {}),
    ...(values.endpoint ? { database: await existingDatabase(values.endpoint, io.env) } : {}),
  };
  let service: Awaited<ReturnType<typeof startLocalService>>;
  try {
    service = await startLocalService(options);
  } catch (error) {
    // Expected trouble at start gets one clear line, not an "unexpected error".
    if (error instanceof SetupError) {
      throw new InvalidInputError(error.message.split("\n")[0] ?? error.message, { cause: error });
    }
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new InvalidInputError(
        `port ${portText} is in use: choose another with --port or PORT`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  await write(
    io.stdout,
    `${JSON.stringify({ level: "INFO", message: "autocompact.started", url: service.url, dev_tenant: "dev", dev_key: devKey, dynamodb: service.dynamoEndpoint, table: LOCAL_TABLE, timestamp: new Date().toISOString() })}\n`,
  );
  await write(
    io.stderr,
    `autocompact listening on ${service.url} (dev key: ${devKey}); Ctrl-C to stop\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await write(io.stderr, "stopping: finishing in-flight evaluations…\n");
  await service.stop();
  return EXIT.ok;
});
