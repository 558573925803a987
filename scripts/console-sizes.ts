/**
 * `npm run console-sizes`: the sizes docs/operate.md ("The console") quotes,
 * measured. Each browser asset as the app serves it (functions/console/build.ts,
 * minified) and gzipped (gzip -9, about what a browser downloads), and the
 * bytes of the console's code in the API's Lambda bundle, built as the stack
 * builds it (infra/bundles.ts): what a turn post carries of the console.
 *
 *   npx tsx scripts/console-sizes.ts           the table
 *   npx tsx scripts/console-sizes.ts --json    one JSON object on stdout
 */
import { gzipSync } from "node:zlib";
import { buildAssets } from "../functions/console/build.ts";
import { bundleMetafile } from "../infra/bundles.ts";

/** One asset's size as served and gzipped, bytes. */
interface AssetSize {
  readonly path: string;
  readonly bytes: number;
  readonly gzipBytes: number;
}

async function assetSizes(): Promise<AssetSize[]> {
  return [...(await buildAssets())].map(([path, { body }]) => ({
    path,
    bytes: Buffer.byteLength(body),
    gzipBytes: gzipSync(body, { level: 9 }).byteLength,
  }));
}

/** The bytes the API's bundle holds of functions/console/ (its routes and the lazy asset loader). */
async function consoleBytesInApi(): Promise<number> {
  const { metafile } = await bundleMetafile("api");
  const inputs = metafile.outputs["index.mjs"]?.inputs ?? {};
  return Object.entries(inputs)
    .filter(([input]) => input.startsWith("functions/console/"))
    .reduce((total, [, { bytesInOutput }]) => total + bytesInOutput, 0);
}

const kb = (bytes: number) =>
  bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : `${(bytes / 1024).toFixed(1)} KB`;

async function main(argv: readonly string[]): Promise<void> {
  const assets = await assetSizes();
  const inApi = await consoleBytesInApi();
  if (argv.includes("--json")) {
    console.log(JSON.stringify({ assets, console_bytes_in_api_bundle: inApi }));
    return;
  }
  for (const { path, bytes, gzipBytes } of assets)
    console.log(`${kb(bytes).padStart(9)}  (gzip ${kb(gzipBytes).padStart(8)})  ${path}`);
  console.log(`${kb(inApi).padStart(9)}  of functions/console/ in the api Lambda bundle`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
