/**
 * How a platform's code finds the installed package (issue 31): the
 * client's build and package.json, laid out as `npm install` leaves them
 * (files.test.ts holds what else the tarball ships), then required
 * from CommonJS (Node's `require(esm)`, unflagged from Node 20.19, the
 * `engines` floor) and type-checked under the module resolutions a
 * TypeScript project may have: `node10` reads `typesVersions`, `bundler`
 * and `nodenext` read `exports` (the smoke test, scripts/smoke-package.ts,
 * type-checks under `NodeNext` from the real tarball).
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientBuildOptions, declarations } from "../../scripts/build.ts";
import { typeCheck } from "../helpers/typecheck.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Uses the client and the root's types; the wrong call must be refused (the types are not `any`). */
const CHECK_TS = `import { AutocompactClient, ServiceError } from "autocompact/client";
import type { Projection } from "autocompact";
const client = new AutocompactClient({ url: "http://127.0.0.1:8787", key: "local-dev-key" });
export const view: Promise<Projection> = client.projection("conv-1");
export const isError = (error: unknown) => error instanceof ServiceError;
// @ts-expect-error a turn is a number
client.postTurn("conv-1", { turn: "0", events: [] });
`;

let app: string;
let manifest: { engines: { node: string } };

beforeAll(async () => {
  // The client's build, laid out as `npm install` leaves it, in a folder of
  // this test's own (files.test.ts rebuilds the checkout's dist/ meanwhile).
  app = await mkdtemp(join(tmpdir(), "autocompact-resolution-"));
  const installed = join(app, "node_modules/autocompact");
  await mkdir(installed, { recursive: true });
  await build(clientBuildOptions(join(installed, "dist")));
  await declarations(join(installed, "dist"));
  await copyFile(join(ROOT, "package.json"), join(installed, "package.json"));
  // A CommonJS project: no "type" field.
  await writeFile(join(app, "package.json"), '{"name":"app","private":true}\n');
  await writeFile(join(app, "check.ts"), CHECK_TS);
  manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as typeof manifest;
}, 180_000);

afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

/** `tsc` on check.ts under `resolution` (and the module kind it needs), in the app's folder; its output. */
function typeCheckApp(module: string, resolution: string): string {
  return typeCheck(
    ["check.ts"],
    {
      strict: true,
      target: "ES2022",
      lib: ["ES2022", "DOM"],
      module,
      moduleResolution: resolution,
      // TypeScript's own lib files (lib.dom.d.ts is most of the check) say nothing of
      // this package; its declarations and @types/node are still checked.
      skipDefaultLibCheck: true,
    },
    app,
  );
}

describe("the installed package", () => {
  it("states the Node floor that CommonJS require of it needs (require(esm), Node 20.19)", () => {
    expect(manifest.engines.node).toBe(">=20.19");
  });

  it("can be required from CommonJS", async () => {
    const script = `const { AutocompactClient, ServiceError } = require("autocompact/client");
process.stdout.write(typeof AutocompactClient + " " + typeof ServiceError);`;
    const { stdout } = await run(process.execPath, ["-e", script], { cwd: app });
    expect(stdout).toBe("function function");
  });

  it.each([
    ["CommonJS", "node10"],
    ["ESNext", "bundler"],
    ["NodeNext", "nodenext"],
  ])("has types under --module %s --moduleResolution %s", async (module, resolution) => {
    expect(typeCheckApp(module, resolution)).toBe("");
  });
});
