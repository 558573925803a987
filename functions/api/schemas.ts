/**
 * Request and response schemas of the HTTP API: zod is the single source of
 * validation and of the OpenAPI document (`GET /v1/openapi.json`).
 */
import * as z from "zod";
import { AutoConfigLayer, RuleLayer } from "../../core/config.ts";
import { Compaction, Entry } from "../../core/events.ts";

/** Conversation ids: URL-safe, bounded. */
export const ConversationId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._~:@-]+$/, "use letters, digits and . _ ~ : @ - only");

/** The model a turn was produced with. */
export const ModelInfoSchema = z.strictObject({
  id: z.string().min(1).optional(),
  context_window: z.number().int().positive().optional(),
});

/** `POST /v1/conversations/{id}/turns`. Events are validated entry by entry afterwards. */
export const TurnBody = z.strictObject({
  turn: z.number({ error: "turn must be a whole number ≥ 0" }).int().nonnegative(),
  model: ModelInfoSchema.optional(),
  events: z.array(z.unknown()).min(1, "a turn needs at least one event"),
});

/** `POST /v1/conversations/{id}/compactions`. */
export const CompactionBody = z.union([
  z.strictObject({ spec: z.string().min(1) }),
  z.strictObject({ rule: RuleLayer }),
]);

/** `PUT /v1/conversations/{id}/config`: the D50 tree. */
export const ConfigBody = z.strictObject({
  conversation: z.strictObject({ compaction: z.strictObject({ auto: AutoConfigLayer }) }),
});

/** `DELETE /v1/conversations/{id}/compactions?source=`. */
export const ResetQuery = z.strictObject({ source: z.enum(["auto", "manual"]).optional() });

/** A compaction as listed, with its 1-based position in stream order. */
export const ListedCompaction = z.intersection(
  z.object({ position: z.number().int().positive() }),
  Compaction,
);

/** Response of `POST …/turns`. */
export const AppendResponse = z.object({
  status: z.enum(["created", "replayed"]),
  turn: z.number().int(),
  turn_count: z.number().int(),
  evaluation_enqueued: z.boolean(),
});

/** Response of `GET /v1/conversations/{id}`. */
export const ConversationSummary = z.object({
  turn_count: z.number().int(),
  evaluated_through: z.number().int().nullable(),
  estimated_tokens: z.number(),
  compactions: z.array(ListedCompaction),
});

/** Response of `GET …/projection`. */
export const ProjectionResponse = z.object({
  events: z.array(Entry),
  turns: z.array(
    z.union([
      z.object({ kept: z.number().int() }),
      z.object({ summary: z.object({ from: z.number().int(), to: z.number().int() }) }),
    ]),
  ),
  estimated_tokens: z.number(),
});

/** An RFC 9457 problem. */
export const ProblemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
});
