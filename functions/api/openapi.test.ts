import { readFileSync } from "node:fs";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { describe, expect, it } from "vitest";
import { harness } from "../../test/helpers/service.ts";

type Operation = {
  responses: Record<
    string,
    { content?: Record<string, unknown>; headers?: Record<string, unknown> }
  >;
};

const document = (await (await harness().app.request("/v1/openapi.json")).json()) as {
  info: { version: string; license: { name: string; identifier?: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

// Redocly's recommended rules, in-process (no network).
const problems = await lintFromString({
  source: JSON.stringify(document),
  absoluteRef: "openapi.json",
  config: await createConfig({ extends: ["recommended"] }),
});
const errors = problems.filter((p) => p.severity === "error");
const warnings = problems.filter((p) => p.severity === "warn");
const listing = problems
  .map((p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? "?"})`)
  .join("\n");

/** The package's manifest: the license and version the document must state. */
const manifest = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as { license: string; version: string };

describe("the OpenAPI document", () => {
  it("states the package's license (an SPDX identifier) and version", () => {
    expect(document.info.license).toEqual({ name: manifest.license, identifier: manifest.license });
    expect(document.info.version).toBe(manifest.version);
  });

  it(`passes Redocly's recommended rules (${errors.length} errors, ${warnings.length} warnings)`, () => {
    expect(errors, listing).toEqual([]);
    expect(warnings.length, listing).toBeLessThanOrEqual(3);
  });

  it("declares every error as an RFC 9457 problem, and the gateway's 429 beside the tenant limits", () => {
    const errorResponses = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .flatMap((operation) => Object.entries(operation.responses))
      .filter(([status]) => Number(status) >= 400);
    expect(errorResponses.length).toBeGreaterThan(0);
    for (const [status, response] of errorResponses) {
      if (status === "429") {
        // Unauthenticated routes have only the gateway's; the others the tenant limits' too.
        expect([
          ["application/json"],
          ["application/json", "application/problem+json"],
        ]).toContainEqual(Object.keys(response.content ?? {}));
      } else {
        expect(Object.keys(response.content ?? {})).toEqual(["application/problem+json"]);
      }
    }
  });

  it("declares the tenant limits' 429s with Retry-After, and the summary budget's on manual compactions", () => {
    const paths = document.paths;
    expect(paths["/healthz"]?.get?.responses["429"]?.content).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/GatewayMessage" } },
    });
    const read = paths["/v1/conversations/{id}/projection"]?.get?.responses["429"];
    expect(read?.content?.["application/problem+json"]).toEqual({
      schema: { $ref: "#/components/schemas/RateLimitedProblem" },
    });
    expect(Object.keys(read?.headers ?? {})).toEqual(["Retry-After"]);
    expect(
      paths["/v1/conversations/{id}/compactions"]?.post?.responses["429"]?.content?.[
        "application/problem+json"
      ],
    ).toEqual({
      schema: {
        anyOf: [
          { $ref: "#/components/schemas/RateLimitedProblem" },
          { $ref: "#/components/schemas/SummaryBudgetProblem" },
        ],
      },
    });
  });

  it("names the expected turn, or a reused webhook-id, in the 409 of a turn post", () => {
    const conflict = document.paths["/v1/conversations/{id}/turns"]?.post?.responses["409"];
    expect(conflict?.content).toEqual({
      "application/problem+json": {
        schema: {
          anyOf: [
            { $ref: "#/components/schemas/TurnConflictProblem" },
            { $ref: "#/components/schemas/WebhookIdReusedProblem" },
          ],
        },
      },
    });
    expect(JSON.stringify(document.components.schemas.TurnConflictProblem)).toContain(
      '"required":["expected_turn"]',
    );
    expect(JSON.stringify(document.components.schemas.WebhookIdReusedProblem)).toContain(
      '"type":{"type":"string","enum":["/problems/webhook-id-reused"]}',
    );
  });
});
