/**
 * What the OpenAPI 3.1 document says besides its routes: @hono/zod-openapi
 * generates the paths and schemas from the route definitions (routes.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { BODY_SCHEMAS } from "./routes.ts";

/** The document's top level. */
export const DOCUMENT = {
  openapi: "3.1.0",
  info: {
    title: "autocompact",
    version: "0.1.0",
    description:
      "Automatic, non-destructive compaction of agent conversations (RFD D50 over RFD 064). Errors are RFC 9457 problems.",
    // As LICENSE and package.json (openapi.test.ts holds the two together).
    license: { name: "Apache-2.0", identifier: "Apache-2.0" },
  },
  servers: [
    { url: "/", description: "The host serving this document." },
    { url: "http://127.0.0.1:8787", description: "The local runtime (`npm start`)." },
  ],
  security: [{ bearer: [] }],
};

/** Registers what the routes refer to by name: the bearer scheme and the request bodies. */
export function registerComponents(app: Pick<OpenAPIHono, "openAPIRegistry">): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "A tenant API key (stored only as SHA-256).",
  });
  for (const [name, schema] of Object.entries(BODY_SCHEMAS)) {
    app.openAPIRegistry.register(name, schema);
  }
}
