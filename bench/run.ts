/**
 * `npm run bench`: runs every benchmark and prints one JSON line per result.
 * `npm run bench -- core` (or `service`, `cli`, `limits`, `burst`, `calibration`, `firing`, `reads`, `projection`) runs one group;
 * `webhook` runs only the webhook latencies of `service`.
 */
import { benchCore } from "./core.ts";

const groups: Record<string, () => Promise<Record<string, unknown>[]> | Record<string, unknown>[]> =
  {
    core: benchCore,
    service: async () => (await import("./service.ts")).benchService(),
    webhook: async () => (await import("./service.ts")).benchWebhook(),
    cli: async () => (await import("./cli.ts")).benchCli(),
    limits: async () => (await import("./limits.ts")).benchLimits(),
    burst: async () => (await import("./burst.ts")).benchBurst(),
    calibration: async () => (await import("./calibration.ts")).benchCalibration(),
    firing: async () => (await import("./firing.ts")).benchFiring(),
    reads: async () => (await import("./conditional-reads.ts")).benchConditionalReads(),
    projection: async () => (await import("./projection.ts")).benchProjection(),
  };

const wanted = process.argv.slice(2).filter((arg) => arg !== "--");
for (const [name, run] of Object.entries(groups)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  for (const result of await run()) process.stdout.write(`${JSON.stringify(result)}\n`);
}
