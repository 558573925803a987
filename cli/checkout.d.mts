// Types of cli/checkout.mjs (plain JavaScript: cli/bin.mjs imports it before any TypeScript loader).

/** The folders a bundle is built from (their tests aside). */
export declare const SOURCE_FOLDERS: readonly string[];
/** The files a bundle is built from besides. */
export declare const SOURCE_FILES: readonly string[];
/** The folder the bundles of `root`'s sources are kept in. */
export declare function cacheFolder(root: string): string;
/** The hash of the sources under `root` that a bundle is built from. */
export declare function sourceKey(root: string): string;
/** Builds the CLI into a folder with scripts/build.ts under tsx. */
export declare function buildWithTsx(root: string): (folder: string) => void;
/** The file URL of the CLI bundle of `root`'s sources as they are now, built by `build` first when none is kept. */
export declare function checkoutCli(root: string, build?: (folder: string) => void): string;
