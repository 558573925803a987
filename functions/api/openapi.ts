/** The OpenAPI 3.1 document, generated from the zod schemas the routes validate with. */
import * as z from "zod";
import { Entry } from "../../core/events.ts";
import {
  AppendResponse,
  CompactionBody,
  ConfigBody,
  ConversationSummary,
  ListedCompaction,
  ProblemSchema,
  ProjectionResponse,
  TurnBody,
} from "./schemas.ts";

const json = (schema: z.ZodType, io: "input" | "output" = "output") => ({
  "application/json": { schema: z.toJSONSchema(schema, { io, unrepresentable: "any" }) },
});
const problems = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: "Problem (RFC 9457)",
        content: { "application/problem+json": { schema: z.toJSONSchema(ProblemSchema) } },
      },
    ]),
  );
const id = { name: "id", in: "path", required: true, schema: { type: "string" } };

/** Builds the document (cheap; cached by the caller). */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "autocompact",
      version: "0.1.0",
      description:
        "Automatic, non-destructive compaction of agent conversations (RFD D50 over RFD 064).",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths: {
      "/v1/conversations/{id}/turns": {
        post: {
          summary: "Store a completed turn and enqueue its evaluation",
          parameters: [id],
          requestBody: { required: true, content: json(TurnBody, "input") },
          responses: {
            "202": { description: "Stored; evaluation enqueued", content: json(AppendResponse) },
            "200": { description: "Identical replay", content: json(AppendResponse) },
            ...problems(400, 401, 409, 413),
          },
        },
      },
      "/v1/conversations/{id}": {
        get: {
          summary: "Turn count, evaluation progress, estimate, compactions",
          parameters: [id],
          responses: {
            "200": { description: "OK", content: json(ConversationSummary) },
            ...problems(401, 404),
          },
        },
      },
      "/v1/conversations/{id}/events": {
        get: {
          summary: "The raw stream, compactions included",
          parameters: [id],
          responses: {
            "200": { description: "OK", content: json(z.object({ events: z.array(Entry) })) },
            ...problems(401, 404),
          },
        },
      },
      "/v1/conversations/{id}/projection": {
        get: {
          summary: "The projected view for the next LLM call",
          parameters: [id],
          responses: {
            "200": { description: "OK", content: json(ProjectionResponse) },
            ...problems(401, 404),
          },
        },
      },
      "/v1/conversations/{id}/compactions": {
        get: {
          summary: "List compactions",
          parameters: [id],
          responses: {
            "200": {
              description: "OK",
              content: json(z.object({ compactions: z.array(ListedCompaction) })),
            },
            ...problems(401, 404),
          },
        },
        post: {
          summary: "Add a manual compaction from a DSL spec or a rule",
          parameters: [id],
          requestBody: { required: true, content: json(CompactionBody, "input") },
          responses: {
            "201": { description: "Created", content: json(ListedCompaction) },
            ...problems(400, 401, 404, 422),
          },
        },
        delete: {
          summary: "Reset: remove all compactions, or all of one source",
          parameters: [
            id,
            { name: "source", in: "query", required: false, schema: { enum: ["auto", "manual"] } },
          ],
          responses: {
            "200": {
              description: "Removed",
              content: json(z.object({ removed: z.array(ListedCompaction) })),
            },
            ...problems(400, 401, 404),
          },
        },
      },
      "/v1/conversations/{id}/compactions/{position}": {
        delete: {
          summary: "Remove one compaction by its 1-based position",
          parameters: [
            id,
            {
              name: "position",
              in: "path",
              required: true,
              schema: { type: "integer", minimum: 1 },
            },
          ],
          responses: {
            "200": {
              description: "Removed",
              content: json(z.object({ removed: z.array(ListedCompaction) })),
            },
            ...problems(400, 401, 404, 422),
          },
        },
      },
      "/v1/conversations/{id}/config": {
        get: {
          summary: "The conversation's auto config layer and the effective config",
          parameters: [id],
          responses: { "200": { description: "OK" }, ...problems(401) },
        },
        put: {
          summary: "Set the conversation's auto config layer",
          parameters: [id],
          requestBody: { required: true, content: json(ConfigBody, "input") },
          responses: { "200": { description: "OK" }, ...problems(400, 401) },
        },
      },
      "/healthz": {
        get: { summary: "Liveness", security: [], responses: { "200": { description: "OK" } } },
      },
    },
  };
}
