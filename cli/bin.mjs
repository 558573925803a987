#!/usr/bin/env node
// Launcher of the `autocompact` command. In a checkout, where the TypeScript
// sources sit beside this file, it runs them through tsx (a devDependency):
// no build step, and `npm start` and the tests always run the sources as
// they are. The published package ships no sources, only the build
// (`npm run build`: dist/cli.js), which it runs with plain Node.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The SDK's "Node 22 after January 2027" notice is known (README) and only noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

let main;
if (existsSync(new URL("./main.ts", import.meta.url))) {
  const { register } = await import("tsx/esm/api");
  // Our own tsconfig, whatever directory the command is run from.
  register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
  main = await import("./main.ts");
} else {
  main = await import("../dist/cli.js");
}
process.exitCode = await main.run(process.argv.slice(2), main.nodeIo());
