/**
 * Where the console's browser assets come from: a folder beside the bundle
 * that serves them, written by build.ts when the bundle is built (the
 * Lambda's by infra/bundling.ts; the CLI's, which `npm start` runs, by
 * scripts/build.ts), or, when there is none (the sources run as they are, as
 * in the in-process tests), build.ts run in memory once. Loaded on the first
 * console or docs request only.
 */
import { readFile } from "node:fs/promises";

/** A file the app serves. */
export interface Asset {
  readonly type: string;
  readonly body: string;
}

/** The prebuilt folder's index: asset path → file name and content type. */
export type Manifest = Record<string, { file: string; type: string }>;

/** The prebuilt folder's index file. */
export const MANIFEST = "manifest.json";

/** The prebuilt folder, beside the Lambda bundle (`index.mjs`). */
const PREBUILT = new URL("./console-assets/", import.meta.url);

/** The development builder, by a computed name so the Lambda bundle leaves it (and esbuild) out. */
const BUILDER = ["./build", "ts"].join(".");

/** Every asset by path: prebuilt in `folder` when deployed, built in memory otherwise. */
export async function loadAssets(folder: URL = PREBUILT): Promise<Map<string, Asset>> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(new URL(MANIFEST, folder), "utf8")) as Manifest;
  } catch {
    const { buildAssets } = (await import(BUILDER)) as typeof import("./build.ts");
    return buildAssets();
  }
  const assets = new Map<string, Asset>();
  for (const [path, { file, type }] of Object.entries(manifest)) {
    assets.set(path, { type, body: await readFile(new URL(file, folder), "utf8") });
  }
  return assets;
}
