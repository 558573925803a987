/**
 * An older checkout beside this one, for the benchmarks that measure old and
 * new in one run (`burst`, `webhook`): the files of a commit exported with
 * `git archive` into a temporary directory, this checkout's node_modules
 * linked, so both import the same packages; and the webhook bench's app of
 * either, built from its own files.
 */
import { execFile } from "node:child_process";
import { mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";

const run = promisify(execFile);

/** This checkout's root. */
export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The files of `ref` in a temporary directory (remove it after), with this checkout's node_modules linked. */
export async function exportCheckout(ref: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "autocompact-baseline-"));
  const tar = join(dir, "checkout.tar");
  await run("git", ["-C", ROOT, "archive", "--format=tar", "-o", tar, ref]);
  await run("tar", ["-xf", tar, "-C", dir]);
  await rm(tar);
  await symlink(await realpath(join(ROOT, "node_modules")), join(dir, "node_modules"), "dir");
  return dir;
}

/** What the webhook bench asks of an app: `app.request`, as Hono answers it. */
export interface WebhookApp {
  request(path: string, init: RequestInit): Response | Promise<Response>;
}

/**
 * The API app of the checkout at `root` (this one's or an exported one's),
 * wired as the webhook bench's handler: the store and the tenants in
 * DynamoDB on `client` (the tenants behind the per-instance cache, as the
 * Lambda has them), the queue recording. Imported from `root`'s own files,
 * so an older checkout runs its own code in this process.
 */
export async function webhookAppOf(
  root: string,
  client: DynamoDBClient,
  table: string,
): Promise<WebhookApp> {
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  const [app, service, store, cache, tenants, receipts, helpers] = await Promise.all([
    from("functions/api/app.ts"),
    from("functions/conversations/service.ts"),
    from("functions/store/dynamodb.ts"),
    from("functions/store/tenants-cache.ts"),
    from("functions/store/tenants-dynamodb.ts"),
    from("functions/store/webhook-receipts-memory.ts"),
    from("test/helpers/service.ts"),
  ]);
  return app.createApp({
    webhookReceipts: new receipts.MemoryWebhookReceipts(),
    notifications: helpers.memoryNotifications(),
    service: new service.ConversationService({
      store: new store.DynamoConversationStore(client, table),
      queue: new helpers.RecordingQueue(),
    }),
    tenants: new cache.CachedTenantDirectory(
      new tenants.DynamoTenantDirectory(client, table, tenants.SECRETS_NOT_READ),
    ),
  });
}
