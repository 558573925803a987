#!/usr/bin/env node
// Launcher of the `autocompact` command. The published package ships no
// sources, only the build (`npm run build`: dist/cli.js), which it runs with
// plain Node. In a checkout, where the TypeScript sources sit beside this
// file, it runs the same bundle built from them as they are now, kept until
// they change (cli/checkout.mjs): no build step, and `npm start` and the
// tests always run the sources as they are.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The SDK's "Node 22 after January 2027" notice is known (README) and only noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

let main;
if (existsSync(new URL("./main.ts", import.meta.url))) {
  const { checkoutCli } = await import("./checkout.mjs");
  // Stack traces (AUTOCOMPACT_DEBUG) and breakpoints name the sources, through the bundle's maps.
  process.setSourceMapsEnabled(true);
  try {
    main = await import(checkoutCli(fileURLToPath(new URL("..", import.meta.url))));
  } catch (error) {
    process.stderr.write(
      `autocompact: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
} else {
  main = await import("../dist/cli.js");
}
process.exitCode = await main.run(process.argv.slice(2), main.nodeIo());
