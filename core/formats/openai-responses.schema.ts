/**
 * The OpenAI Responses format's zod schemas for `input` items and their
 * parts, and the types inferred from them (the mapping to events is in
 * ./openai-responses.ts).
 */
import * as z from "zod";

/** A URI with its scheme (`https:`, `data:`), as OpenAI's `format: uri`. */
const uri = (message: string) => z.string().regex(/^[A-Za-z][A-Za-z0-9+.-]*:/, message);

/** A text part of a user message or a tool output. */
export const InputTextPart = z.looseObject({ type: z.literal("input_text"), text: z.string() });

/** An image part (kept verbatim in metadata); OpenAI's schema wants its `detail`. */
export const InputImagePart = z.looseObject({
  type: z.literal("input_image"),
  image_url: uri("image_url must be a URL (https: or data:)").nullable().optional(),
  file_id: z.string().nullable().optional(),
  detail: z.enum(["low", "high", "auto", "original"]),
});

/** A file part (kept verbatim in metadata). */
export const InputFilePart = z.looseObject({
  type: z.literal("input_file"),
  file_id: z.string().nullable().optional(),
  filename: z.string().optional(),
  file_data: z.string().optional(),
  file_url: uri("file_url must be a URL").optional(),
});

const index = z.number().int();

/**
 * An annotation of an output text part, as OpenAI's schema defines it (kept
 * verbatim in metadata and re-emitted, so one the API would refuse is
 * refused when posted).
 */
export const Annotation = z.discriminatedUnion(
  "type",
  [
    z.looseObject({
      type: z.literal("file_citation"),
      file_id: z.string(),
      filename: z.string(),
      index,
    }),
    z.looseObject({
      type: z.literal("url_citation"),
      url: uri("url must be a URL"),
      title: z.string(),
      start_index: index,
      end_index: index,
    }),
    z.looseObject({
      type: z.literal("container_file_citation"),
      container_id: z.string(),
      file_id: z.string(),
      filename: z.string(),
      start_index: index,
      end_index: index,
    }),
    z.looseObject({ type: z.literal("file_path"), file_id: z.string(), index }),
  ],
  {
    error:
      "an annotation's type is file_citation, url_citation, container_file_citation or file_path",
  },
);

const logprob = { token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()) };

/** A token's log probability, as OpenAI's schema defines it. */
export const LogProb = z.looseObject({
  ...logprob,
  top_logprobs: z.array(z.looseObject(logprob)),
});

/** An assistant's output text part, with its annotations (kept verbatim in metadata). */
export const OutputTextPart = z.looseObject({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(Annotation).optional(),
  logprobs: z.array(LogProb).optional(),
});

/** A part of a user message or a tool output. */
export const InputPart = z.discriminatedUnion(
  "type",
  [InputTextPart, InputImagePart, InputFilePart],
  {
    error: "a content part takes type input_text, input_image or input_file",
  },
);

/** A string or a non-empty parts array. */
function content<T>(part: z.ZodType<T>) {
  return z.union([z.string(), z.array(part).min(1, "a content array needs at least one part")], {
    error: "expected a string or an array of content parts",
  });
}

const status = z.enum(["in_progress", "completed", "incomplete"]).optional();

/** A user message (an input message, or the EasyInputMessage form without `type`). */
export const ResponsesUserMessage = z.looseObject({
  type: z.literal("message").optional(),
  role: z.literal("user"),
  content: content(InputPart),
  id: z.string().optional(),
  status,
});

/** A system or developer message: refused in a turn unless leading and dropped (`dropSystem`). */
export const ResponsesSystemMessage = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["system", "developer"]),
  content: content(InputPart),
});

/** An assistant message: an output message (`msg_…` id, `output_text` parts) or the EasyInputMessage form. */
export const ResponsesAssistantMessage = z.looseObject({
  type: z.literal("message").optional(),
  role: z.literal("assistant"),
  content: content(OutputTextPart),
  id: z.string().optional(),
  status,
  phase: z
    .enum(["commentary", "final_answer"], { error: 'a phase is "commentary" or "final_answer"' })
    .nullable()
    .optional(),
});

/** A message item, by role. */
export const ResponsesMessage = z.discriminatedUnion(
  "role",
  [ResponsesUserMessage, ResponsesAssistantMessage, ResponsesSystemMessage],
  { error: 'a message\'s role must be "user", "assistant", "system" or "developer"' },
);

/** A reasoning item: its `id` and `summary` are required by OpenAI's schema. */
export const ResponsesReasoning = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: z.array(z.looseObject({ type: z.literal("summary_text"), text: z.string() })),
  content: z
    .array(z.looseObject({ type: z.literal("reasoning_text"), text: z.string() }))
    .optional(),
  encrypted_content: z.string().nullable().optional(),
  status,
});

const callId = z
  .string()
  .min(1, "a call_id must not be empty")
  .max(64, "a call_id is at most 64 characters (OpenAI's limit)");

/** A function tool call. */
export const ResponsesFunctionCall = z.looseObject({
  type: z.literal("function_call"),
  call_id: callId,
  name: z.string(),
  arguments: z.string(),
  id: z.string().optional(),
  status,
});

/** A function tool call's output. */
export const ResponsesFunctionCallOutput = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: callId,
  output: content(InputPart),
  id: z.string().nullable().optional(),
  status: z.enum(["in_progress", "completed", "incomplete"]).nullable().optional(),
});

/** A reference to an item the API stored (`store: true`): carried verbatim, see ./openai-responses.ts. */
export const ResponsesItemReference = z.strictObject({
  type: z.literal("item_reference"),
  id: z.string().min(1, "an item reference needs the id of the item"),
});

/** The parsed value of the `InputPart` schema. */
export type InputPart = z.infer<typeof InputPart>;
/** The parsed value of the `OutputTextPart` schema. */
export type OutputTextPart = z.infer<typeof OutputTextPart>;
/** The parsed value of the `ResponsesMessage` schema. */
export type ResponsesMessage = z.infer<typeof ResponsesMessage>;
/** The parsed value of the `ResponsesReasoning` schema. */
export type ResponsesReasoning = z.infer<typeof ResponsesReasoning>;
/** The parsed value of the `ResponsesFunctionCall` schema. */
export type ResponsesFunctionCall = z.infer<typeof ResponsesFunctionCall>;
/** The parsed value of the `ResponsesFunctionCallOutput` schema. */
export type ResponsesFunctionCallOutput = z.infer<typeof ResponsesFunctionCallOutput>;

/** The parsed value of the `ResponsesItemReference` schema. */
export type ResponsesItemReference = z.infer<typeof ResponsesItemReference>;

/** One Responses `input` item the service models. */
export type ResponsesItem =
  | ResponsesItemReference
  | ResponsesMessage
  | ResponsesReasoning
  | ResponsesFunctionCall
  | ResponsesFunctionCallOutput;
