/**
 * Vitest globalSetup: the launcher's bundle of this checkout (cli/checkout.mjs)
 * built before the tests start, once, rather than by each of the launchers
 * the first tests spawn at the same time. Nothing when it is already kept.
 */
import { fileURLToPath } from "node:url";
import { checkoutCli } from "../../cli/checkout.mjs";

export default function setup(): void {
  checkoutCli(fileURLToPath(new URL("../..", import.meta.url)));
}
