/**
 * Importing `autocompact/client` loads nothing of the service (issue 18): no
 * AWS SDK, Powertools, Hono, zod; in fact no package and no Node built-in.
 * Checked twice: esbuild's module graph of the client entries (what the
 * build bundles), and the built client loaded by Node in a child process
 * with a resolve hook that records every module it resolves.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { build, type Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientBuildOptions } from "../../scripts/build.ts";

const run = promisify(execFile);

/** Writes each URL Node resolves to stderr, one a line (hooks run off the main thread). */
const RECORDING_HOOK = `data:text/javascript,${encodeURIComponent(
  `import { writeSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  writeSync(2, "resolved " + resolved.url + "\\n");
  return resolved;
}`,
)}`;

let outdir: string;
let metafile: Metafile;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), "autocompact-client-graph-"));
  metafile = (await build(clientBuildOptions(outdir))).metafile as Metafile;
}, 60_000);

afterAll(async () => {
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

describe("autocompact/client's module graph", () => {
  it("bundles only the client's own files, core/errors.ts and core/splice.ts", () => {
    expect(Object.keys(metafile.inputs).sort()).toEqual([
      "client/errors.ts",
      "client/index.ts",
      "client/pages.ts",
      "client/paths.ts",
      "client/tenant.ts",
      "client/types.ts",
      "client/views.ts",
      "client/warnings.ts",
      "core/errors.ts",
      "core/splice.ts",
    ]);
  });

  it("leaves no import in the built files (nothing to load at run time)", () => {
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports);
    expect(imports).toEqual([]);
  });

  it("resolves nothing but itself when Node imports it", async () => {
    const client = pathToFileURL(join(outdir, "client/index.js")).href;
    const script = `
      import { register } from "node:module";
      register(${JSON.stringify(RECORDING_HOOK)});
      const { AutocompactClient } = await import(${JSON.stringify(client)});
      process.stdout.write(typeof AutocompactClient);`;
    const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", script]);
    expect(stdout).toBe("function");
    const resolved = stderr
      .split("\n")
      .filter((line) => line.startsWith("resolved "))
      .map((line) => line.slice("resolved ".length));
    expect(resolved).toEqual([client]);
  });
});
