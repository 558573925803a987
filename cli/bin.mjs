#!/usr/bin/env node
// Launcher of the `autocompact` command: registers tsx so the TypeScript
// sources run as they are (no build step), then hands over to main.ts.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

// The SDK's "Node 22 after January 2027" notice is known (README) and only noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

// Our own tsconfig, whatever directory the command is run from.
register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });

const { run, nodeIo } = await import("./main.ts");
process.exitCode = await run(process.argv.slice(2), nodeIo());
