/**
 * The deployable app, synthesized once as `cdk synth` does it: real esbuild
 * bundles (local, no Docker), cdk.json's flags, cdk-nag's packs as
 * validation plugins. Takes a few seconds; every test here shares the one
 * synth. Prints each bundle's size (`npm run bundles` explains them).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../infra/build-app.ts";
import { bundleMetafile, bundleReport, staticInputs } from "../../infra/bundles.ts";
import { type FunctionName, RUNTIME } from "../../infra/bundling.ts";
import type { AutocompactStack } from "../../infra/stack.ts";
import { cdkJsonContext } from "./synth.ts";

/** Far above today's bundles; a bundle this big has pulled in something it should not. */
const GENEROUS_LIMIT_BYTES = 3 * 1024 * 1024;

let outdir: string;
let stack: AutocompactStack;
let missingContext: unknown[];
let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), "autocompact-cdk-"));
  const built = buildApp({ context: cdkJsonContext(), outdir });
  stack = built.stack;
  // Throws with the report if a validation plugin (cdk-nag) finds anything.
  const assembly = built.app.synth();
  template = assembly.getStackByName(stack.stackName).template;
  missingContext = assembly.manifest.missing ?? [];
}, 180_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/** The asset directory of a function's code. */
function assetDir(name: FunctionName): string {
  const fn = {
    api: stack.apiFunction,
    compactor: stack.compactorFunction,
    notifier: stack.notifierFunction,
  }[name];
  const resource = template.Resources[stack.getLogicalId(fn.node.defaultChild as never)];
  const code = resource?.Properties.Code as { S3Key?: string; ZipFile?: string };
  expect(code.ZipFile, `${name} must not be inline code`).toBeUndefined();
  const hash = code.S3Key?.replace(/\.zip$/, "");
  expect(hash).toMatch(/^[0-9a-f]{64}$/);
  return join(outdir, `asset.${hash}`);
}

describe.each(["api", "compactor", "notifier"] as const)("the %s bundle", (name) => {
  it("is a minified ESM file with a linked source map, the AWS SDK inside", () => {
    const dir = assetDir(name);
    const file = join(dir, "index.mjs");
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(dir, "index.mjs.map"))).toBe(true);
    const code = readFileSync(file, "utf8");
    expect(code.trimEnd().endsWith("//# sourceMappingURL=index.mjs.map")).toBe(true);
    // Nothing left to the runtime's node_modules (infra/bundling.ts EXTERNAL_MODULES).
    expect(code).not.toMatch(/from\s*"@(aws-sdk|smithy)\//);
    expect(code).not.toMatch(/import\(\s*"@(aws-sdk|smithy)\//);
    // Built-ins whose ESM namespace is costly on Node 24 come through `require` (infra/node/require.ts).
    expect(code).not.toMatch(/from\s*"(node:)?(http|http2|crypto|process|util|child_process)"/);
    // No CommonJS `require` inside the ESM bundle (else: ESM_REQUIRE_BANNER, infra/bundling.ts).
    expect(code).not.toContain("Dynamic require of");
    // Minified: long lines, not source formatting.
    expect(code.length / code.split("\n").length).toBeGreaterThan(1000);
    const bytes = statSync(file).size;
    expect(bytes).toBeGreaterThan(1024);
    expect(bytes).toBeLessThan(GENEROUS_LIMIT_BYTES);
    const mapBytes = statSync(join(dir, "index.mjs.map")).size;
    console.log(
      `[bundle] ${name}: ${(bytes / 1024).toFixed(1)} KB minified, source map ${(mapBytes / 1024).toFixed(1)} KB (${RUNTIME.name}, arm64)`,
    );
  });

  it("is what the size report (npm run bundles) measures", async () => {
    const report = await bundleReport(name);
    const deployed = statSync(join(assetDir(name), "index.mjs")).size;
    // Same options; only the output path in esbuild's comments may differ.
    expect(Math.abs(report.bytes - deployed)).toBeLessThan(256);
    const top = report.origins
      .slice(0, 4)
      .map((o) => `${o.origin} ${(o.bytes / 1024).toFixed(1)} KB`)
      .join(", ");
    console.log(`[bundle] ${name}: largest parts: ${top}`);
  });

  it("holds none of zod's translations but English (infra/zod/index.ts)", async () => {
    const { metafile } = await bundleMetafile(name);
    const inputs = metafile.outputs["index.mjs"]?.inputs ?? {};
    const locales = Object.entries(inputs).flatMap(([input, { bytesInOutput }]) => {
      const at = input.lastIndexOf("/locales/");
      return at >= 0 && bytesInOutput > 0
        ? [[input.slice(at + "/locales/".length), bytesInOutput]]
        : [];
    });
    // English, and what is left of the index of the locales: a declaration (17 bytes today).
    expect(locales.filter(([file]) => file !== "en.js" && file !== "index.js")).toEqual([]);
    expect(Object.fromEntries(locales)["index.js"] ?? 0).toBeLessThan(100);
  });
});

describe.each(["api", "compactor"] as const)("the %s bundle's cold start", (name) => {
  it("loads no summarizer: each is a dynamic import, evaluated only when configured", async () => {
    const { metafile, entry } = await bundleMetafile(name);
    const bundled = Object.keys(metafile.outputs["index.mjs"]?.inputs ?? {});
    const eager = [...staticInputs(metafile, entry)];
    const summarizerCode = (input: string) =>
      input.includes("@aws-sdk/client-bedrock-runtime/") ||
      /functions\/summarizers\/(bedrock|openai)\.ts$/.test(input);
    // In the file (SUMMARIZER=bedrock or openai-compatible loads it), outside the static graph.
    expect(bundled.filter(summarizerCode).length).toBeGreaterThan(3);
    expect(eager.filter(summarizerCode)).toEqual([]);
    expect(eager).toContain("functions/summarizers/from-env.ts");
  });
});

describe("infra/zod, the bundles' zod", () => {
  it("exports what zod exports, its locales English alone", async () => {
    const lean = await import("../../infra/zod/index.ts");
    const zod = await import("zod");
    expect(Object.keys(lean).sort()).toEqual(Object.keys(zod).sort());
    expect(Object.keys(lean.core).sort()).toEqual(Object.keys(zod.core).sort());
    expect(Object.keys(lean.locales)).toEqual(["en"]);
    expect(lean.core.locales).toBe(lean.locales);
    expect(lean.z.object).toBe(zod.z.object);
    expect(lean.z.locales.en).toBe(zod.locales.en);
  });
});

describe("the synthesized app", () => {
  it("passes cdk-nag's validation with nothing to report", () => {
    const reportFile = join(outdir, "policy-validation-report.json");
    if (!existsSync(reportFile)) return; // no plugin had anything to say
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
      pluginReports?: Array<{
        summary?: { pluginName?: string; status?: string };
        violations?: unknown[];
      }>;
    };
    for (const plugin of report.pluginReports ?? []) {
      expect(plugin.violations ?? [], plugin.summary?.pluginName).toEqual([]);
    }
  });

  it("records each acknowledgment's reason in the template (audit trail)", () => {
    const reasons = Object.values(template.Resources).flatMap((resource) => {
      const metadata = (
        resource as {
          Metadata?: { cdk_nag?: { rules_to_suppress: Array<{ id: string; reason: string }> } };
        }
      ).Metadata;
      return metadata?.cdk_nag?.rules_to_suppress ?? [];
    });
    expect(reasons.map((r) => r.id)).toEqual(
      expect.arrayContaining([
        "AwsSolutions-APIG4",
        "AwsSolutions-IAM5[Resource::*]",
        "Serverless-LambdaDLQ",
      ]),
    );
  });

  it("is environment-agnostic (no account, region or lookups)", () => {
    expect(stack.environment).toBe("aws://unknown-account/unknown-region");
    expect(missingContext).toEqual([]);
  });
});
