/**
 * The layer rules of .dependency-cruiser.cjs (docs/architecture.md §3), run
 * through dependency-cruiser's API as `npm run lint` runs them: the tree as it
 * is breaks none, and a small tree that breaks one fails under that rule's name.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cruise,
  type IConfiguration,
  type ICruiseOptions,
  type IViolation,
} from "dependency-cruiser";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const config = createRequire(import.meta.url)(
  join(ROOT, ".dependency-cruiser.cjs"),
) as IConfiguration;
const RULE_NAMES = (config.forbidden ?? []).map((rule) => rule.name);

/** The violations of the repository's rules in the tree at `baseDir`. */
async function violations(
  baseDir: string,
  options: Partial<ICruiseOptions> = {},
  transpile?: Parameters<typeof cruise>[3],
): Promise<IViolation[]> {
  const { output } = await cruise(
    ["."],
    {
      ...config.options,
      ...options,
      baseDir,
      ruleSet: { forbidden: config.forbidden ?? [] },
      validate: true,
    },
    undefined,
    transpile,
  );
  if (typeof output === "string") throw new Error("expected a cruise result, got a report");
  return output.summary.violations;
}

const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) rmSync(dir, { recursive: true, force: true });
});

/** A tree of `files` (path → source) in a fresh temporary folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "layers-"));
  fixtures.push(dir);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

/** The rule names and the from → to of each violation. */
const broken = (found: IViolation[]) =>
  found.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`).sort();

/** Options for a fixture: the repository's, less its tsconfig (a fixture has none) and the cache (each fixture is new). */
const FIXTURE_OPTIONS: Partial<ICruiseOptions> = { tsConfig: undefined, cache: false };

describe("layer rules (npm run lint)", () => {
  // About 2 s alone, unless the files are those of the last cruise (the cache
  // of .dependency-cruiser.cjs); CPU-bound, so it has room on a loaded machine.
  it("the repository breaks none of them", async () => {
    const tsConfig = join(ROOT, "tsconfig.json");
    // As `depcruise .` runs from the root (the config's relative tsconfig, its
    // rules file named), so each reuses the other's cached result.
    const found = await violations(
      ROOT,
      { rulesFile: ".dependency-cruiser.cjs" },
      { tsConfig: extractTSConfig(tsConfig) },
    );
    expect(broken(found)).toEqual([]);
  }, 60_000);

  it("has the five rules docs/architecture.md §3 lists", () => {
    expect(RULE_NAMES).toEqual([
      "core-imports-only-core",
      "adapters-import-no-use-case-or-http",
      "no-import-of-a-lambda-entry-point",
      "console-imports-only-the-client",
      "no-circular-import",
    ]);
  });

  it("forbids importing exactly the entry points infra bundles", () => {
    const bundling = readFileSync(join(ROOT, "infra/bundling.ts"), "utf8");
    const entries = /ENTRY_POINTS = \{([^}]*)\}/.exec(bundling)?.[1] ?? "";
    const bundled = [...entries.matchAll(/"([^"]+\.ts)"/g)].map((match) => match[1]);
    const rule = config.forbidden?.find((r) => r.name === "no-import-of-a-lambda-entry-point") as
      | { to: { path: string[] } }
      | undefined;
    const forbidden = rule?.to.path ?? [];
    expect(bundled.length).toBeGreaterThan(0);
    expect(forbidden.map((pattern) => pattern.slice(1, -1).replaceAll("[.]", "."))).toEqual(
      bundled,
    );
  });

  it("fails core importing functions/, the console importing functions/, and the rest", async () => {
    const dir = tree({
      "core/rules.ts":
        'import { store } from "../functions/store/memory.ts";\nexport const rules = store;\n',
      "core/pure.ts": 'import { rules } from "./rules.ts";\nexport const pure = rules;\n',
      "functions/console/client/main.ts":
        'import { errors } from "../../errors.ts";\nimport { client } from "../../../client/index.ts";\nimport { dom } from "./dom.ts";\nexport const main = [errors, client, dom];\n',
      "functions/console/client/dom.ts": "export const dom = 1;\n",
      "client/index.ts": "export const client = 1;\n",
      "functions/errors.ts": "export const errors = 1;\n",
      "functions/store/memory.ts":
        'import { service } from "../conversations/service.ts";\nimport { app } from "../api/app.ts";\nexport const store = [service, app];\n',
      "functions/conversations/service.ts": "export const service = 1;\n",
      "functions/api/app.ts": "export const app = 1;\n",
      "functions/api/lambda.ts": 'import { app } from "./app.ts";\nexport const handler = app;\n',
      "functions/local/runtime.ts":
        'import { handler } from "../api/lambda.ts";\nexport const run = handler;\n',
      "functions/api/lambda.test.ts":
        'import { handler } from "./lambda.ts";\nexport const t = handler;\n',
      "functions/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
      "functions/b.ts": 'import { a } from "./a.ts";\nexport const b = () => a;\n',
      "functions/c.ts": 'import type { d } from "./d.ts";\nexport const c: typeof d = 1;\n',
      "functions/d.ts": 'import { c } from "./c.ts";\nexport const d = c;\n',
    });
    // A cycle is reported once, at the edge that closes it; the one through
    // a type-only import (c.ts, d.ts), the test importing an entry point and
    // the console's import of client/ are allowed.
    expect(broken(await violations(dir, FIXTURE_OPTIONS))).toEqual([
      "adapters-import-no-use-case-or-http: functions/store/memory.ts -> functions/api/app.ts",
      "adapters-import-no-use-case-or-http: functions/store/memory.ts -> functions/conversations/service.ts",
      "console-imports-only-the-client: functions/console/client/main.ts -> functions/errors.ts",
      "core-imports-only-core: core/rules.ts -> functions/store/memory.ts",
      "no-circular-import: functions/a.ts -> functions/b.ts",
      "no-import-of-a-lambda-entry-point: functions/local/runtime.ts -> functions/api/lambda.ts",
    ]);
  });
});
