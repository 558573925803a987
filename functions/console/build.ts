/**
 * Builds the console's and the API reference's browser assets: the console's
 * TypeScript (client/) bundled by esbuild with uPlot and its CSS, and Swagger
 * UI's prebuilt bundle and stylesheet from `swagger-ui-dist`. Where the
 * sources run as they are (the in-process tests) the app builds them in
 * memory on the first console request; the bundles carry them prebuilt (the
 * Lambda's: infra/bundling.ts runs this file after bundling, with the folder
 * to write; the CLI's, which `npm start` runs: scripts/build.ts):
 *
 *   npx tsx functions/console/build.ts <folder>
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { type Asset, MANIFEST, type Manifest } from "./assets.ts";

const require = createRequire(import.meta.url);
const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** Every asset, by its path under the app. */
export async function buildAssets(): Promise<Map<string, Asset>> {
  const result = await build({
    entryPoints: {
      console: fileURLToPath(new URL("./client/main.ts", import.meta.url)),
      docs: fileURLToPath(new URL("./client/docs.ts", import.meta.url)),
    },
    bundle: true,
    minify: true,
    format: "iife",
    target: "es2022",
    platform: "browser",
    outdir: "/assets",
    write: false,
    logLevel: "error",
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = file.path.slice("/assets/".length);
    const [base, extension] = name.split(".");
    const prefix = base === "docs" ? "/docs" : "/console";
    assets.set(`${prefix}/${name}`, {
      type: extension === "css" ? CSS : JS,
      body: file.text,
    });
  }
  const swagger = async (file: string) =>
    readFile(require.resolve(`swagger-ui-dist/${file}`), "utf8");
  assets.set("/docs/swagger-ui-bundle.js", {
    type: JS,
    body: await swagger("swagger-ui-bundle.js"),
  });
  assets.set("/docs/swagger-ui.css", { type: CSS, body: await swagger("swagger-ui.css") });
  return assets;
}

/** Writes the assets and their manifest into `folder`; answers each asset's size. */
export async function writeAssets(folder: string): Promise<Record<string, number>> {
  const assets = await buildAssets();
  await mkdir(folder, { recursive: true });
  const manifest: Manifest = {};
  const sizes: Record<string, number> = {};
  let index = 0;
  for (const [path, asset] of assets) {
    const file = `${index++}.asset`;
    await writeFile(join(folder, file), asset.body);
    manifest[path] = { file, type: asset.type };
    sizes[path] = Buffer.byteLength(asset.body);
  }
  await writeFile(join(folder, MANIFEST), JSON.stringify(manifest));
  return sizes;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const folder = process.argv[2];
  if (!folder) {
    console.error("usage: tsx functions/console/build.ts <folder>");
    process.exit(2);
  }
  writeAssets(folder).then(
    (sizes) => {
      for (const [path, bytes] of Object.entries(sizes))
        console.log(`${(bytes / 1024).toFixed(1).padStart(8)} KB  ${path}`);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
