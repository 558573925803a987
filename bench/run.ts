/**
 * `npm run bench`: runs every benchmark and prints one JSON line per result.
 * `npm run bench -- core` (or `service`, `cli`, `limits`, `firing`) runs one group.
 */
import { benchCore } from "./core.ts";

const groups: Record<string, () => Promise<Record<string, unknown>[]> | Record<string, unknown>[]> =
  {
    core: benchCore,
    service: async () => (await import("./service.ts")).benchService(),
    cli: async () => (await import("./cli.ts")).benchCli(),
    limits: async () => (await import("./limits.ts")).benchLimits(),
    firing: async () => (await import("./firing.ts")).benchFiring(),
  };

const wanted = process.argv.slice(2).filter((arg) => arg !== "--");
for (const [name, run] of Object.entries(groups)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  for (const result of await run()) process.stdout.write(`${JSON.stringify(result)}\n`);
}
