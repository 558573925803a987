/**
 * fast-check arbitraries for the `ai` package's `ModelMessage` conversations,
 * posted turn by turn (format `ai-sdk`): every turn is valid for
 * `aiSdk.toEvents` (results answer calls made earlier in the turn, call ids
 * unique), and covers what the format keeps in metadata (`providerOptions`
 * on messages and parts, images and files, reasoning, every output type,
 * results' own tool names, adjacent messages of one role).
 */
import { modelMessageSchema } from "ai";
import fc from "fast-check";
import type {
  AiSdkAssistantPart,
  AiSdkMessage,
  AiSdkToolResultOutput,
  AiSdkToolResultPart,
  AiSdkUserPart,
} from "../../core/formats/ai-sdk.schema.ts";

/** Text with the characters that matter: multi-byte, newlines (the joiner of parts), JSON. */
export const aiSdkTextArb = fc.string({
  unit: fc.constantFrom("a", "b", " ", "é", "日", "🚀", "\n", '"', "{"),
  minLength: 1,
  maxLength: 30,
});

/** Sets `key` only when `value` is defined: posted JSON has no `undefined` members. */
function withOptional<T extends object, K extends string, V>(
  object: T,
  key: K,
  value: V | undefined,
): T & Partial<Record<K, V>> {
  return value === undefined ? object : { ...object, [key]: value };
}

type ProviderOptions = NonNullable<AiSdkMessage["providerOptions"]>;

const providerOptionsArb: fc.Arbitrary<ProviderOptions | undefined> = fc.option(
  fc.constantFrom<ProviderOptions>(
    { anthropic: { cacheControl: { type: "ephemeral" } } },
    { openai: { itemId: "msg_1", reasoningEncryptedContent: null } },
    { google: { thoughtSignature: "c2ln", nested: [1, "two", { three: true }] } },
  ),
  { nil: undefined },
);

const textPartArb = fc
  .record({ text: aiSdkTextArb, options: providerOptionsArb })
  .map(({ text, options }) =>
    withOptional({ type: "text" as const, text }, "providerOptions", options),
  );

const imagePartArb: fc.Arbitrary<AiSdkUserPart> = fc
  .record({
    image: fc.constantFrom("https://example.com/cat.png", "iVBORw0KGgo="),
    mediaType: fc.option(fc.constant("image/png"), { nil: undefined }),
  })
  .map(({ image, mediaType }) =>
    withOptional({ type: "image" as const, image }, "mediaType", mediaType),
  );

const filePartArb: fc.Arbitrary<AiSdkUserPart> = fc
  .record({
    data: fc.base64String({ minLength: 4, maxLength: 12 }),
    filename: fc.option(fc.constant("a.pdf"), { nil: undefined }),
  })
  .map(({ data, filename }) =>
    withOptional(
      { type: "file" as const, data, mediaType: "application/pdf" },
      "filename",
      filename,
    ),
  );

/** User content: a string, or parts with text in them or an image or file. */
const userContentArb: fc.Arbitrary<string | AiSdkUserPart[]> = fc.oneof(
  aiSdkTextArb,
  fc.array(fc.oneof({ arbitrary: textPartArb, weight: 3 }, imagePartArb, filePartArb), {
    minLength: 1,
    maxLength: 3,
  }),
);

const reasoningPartArb = fc
  .record({ text: fc.oneof(aiSdkTextArb, fc.constant("")), options: providerOptionsArb })
  .map(({ text, options }) =>
    withOptional({ type: "reasoning" as const, text }, "providerOptions", options),
  );

/** What an assistant says before its calls: text and reasoning. */
const leadPartArb: fc.Arbitrary<AiSdkAssistantPart> = fc.oneof(textPartArb, reasoningPartArb);

const jsonArb = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)));

const callArb = fc.record({
  name: fc.constantFrom("fs_read", "grep", "ütil", "run"),
  input: fc.dictionary(fc.constantFrom("path", "q", "n", "deep"), jsonArb, { maxKeys: 3 }),
  options: providerOptionsArb,
  executed: fc.constantFrom(undefined, false),
});

const outputArb: fc.Arbitrary<AiSdkToolResultOutput> = fc.oneof(
  { arbitrary: aiSdkTextArb.map((value) => ({ type: "text" as const, value })), weight: 3 },
  aiSdkTextArb.map((value) => ({ type: "error-text" as const, value })),
  jsonArb.map((value) => ({ type: "json" as const, value })),
  jsonArb.map((value) => ({ type: "error-json" as const, value })),
  fc
    .option(aiSdkTextArb, { nil: undefined })
    .map((reason) => withOptional({ type: "execution-denied" as const }, "reason", reason)),
  fc
    .array(
      fc.oneof(
        aiSdkTextArb.map((text) => ({ type: "text" as const, text })),
        fc.constant({ type: "image-url" as const, url: "https://example.com/b.png" }),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((value) => ({ type: "content" as const, value })),
  fc
    .record({ value: aiSdkTextArb, options: providerOptionsArb })
    .map(({ value, options }) =>
      withOptional({ type: "text" as const, value }, "providerOptions", options),
    ),
);

const resultArb = fc.record({
  output: outputArb,
  otherName: fc.boolean(),
  options: providerOptionsArb,
});

/** One model call that uses tools, and the tool messages of its results. */
const cycleArb = fc
  .record({
    lead: fc.array(leadPartArb, { maxLength: 2 }),
    calls: fc.array(callArb, { minLength: 1, maxLength: 3 }),
    splitAssistant: fc.boolean(),
    splitResults: fc.boolean(),
    messageOptions: providerOptionsArb,
  })
  .chain((cycle) =>
    fc.record({
      cycle: fc.constant(cycle),
      results: fc.tuple(...cycle.calls.map(() => resultArb)),
      order: fc.shuffledSubarray(
        cycle.calls.map((_, k) => k),
        { minLength: cycle.calls.length, maxLength: cycle.calls.length },
      ),
    }),
  );

/** The final answer: a string, or text and reasoning parts. */
const finalArb: fc.Arbitrary<string | AiSdkAssistantPart[]> = fc.oneof(
  aiSdkTextArb,
  fc.array(leadPartArb, { minLength: 1, maxLength: 3 }),
);

/**
 * One valid turn: a user message, up to three tool-using model calls
 * (parallel calls, results in any order, split over adjacent tool messages),
 * then maybe a final answer. Call ids are `call_<turn>_<cycle>_<k>`.
 */
export const aiSdkTurnArb = (turn: number): fc.Arbitrary<AiSdkMessage[]> =>
  fc
    .record({
      opening: userContentArb,
      openingOptions: providerOptionsArb,
      cycles: fc.array(cycleArb, { maxLength: 3 }),
      final: fc.option(finalArb, { nil: undefined }),
    })
    .map(({ opening, openingOptions, cycles, final }) => {
      const messages: AiSdkMessage[] = [
        withOptional(
          { role: "user" as const, content: opening },
          "providerOptions",
          openingOptions,
        ),
      ];
      cycles.forEach(({ cycle, results, order }, c) => {
        const ids = cycle.calls.map((_, k) => `call_${turn}_${c}_${k}`);
        const calls: AiSdkAssistantPart[] = cycle.calls.map(
          ({ name, input, options, executed }, k) =>
            withOptional(
              withOptional(
                { type: "tool-call" as const, toolCallId: ids[k] as string, toolName: name, input },
                "providerOptions",
                options,
              ),
              "providerExecuted",
              executed,
            ),
        );
        const assistant = (content: AiSdkAssistantPart[]): AiSdkMessage =>
          withOptional(
            { role: "assistant" as const, content },
            "providerOptions",
            cycle.messageOptions,
          );
        if (cycle.splitAssistant && cycle.lead.length > 0) {
          messages.push(assistant(cycle.lead), assistant(calls));
        } else {
          messages.push(assistant([...cycle.lead, ...calls]));
        }
        const answers: AiSdkToolResultPart[] = order.map((k) => {
          const { output, otherName, options } = results[k] as (typeof results)[number];
          const toolName = otherName ? "renamed" : (cycle.calls[k]?.name as string);
          return withOptional(
            { type: "tool-result" as const, toolCallId: ids[k] as string, toolName, output },
            "providerOptions",
            options,
          );
        });
        if (cycle.splitResults && answers.length > 1) {
          messages.push({ role: "tool", content: answers.slice(0, 1) });
          messages.push(
            withOptional(
              { role: "tool" as const, content: answers.slice(1) },
              "providerOptions",
              cycle.messageOptions,
            ),
          );
        } else {
          messages.push({ role: "tool", content: answers });
        }
      });
      if (final !== undefined) messages.push({ role: "assistant", content: final });
      return messages;
    });

/** A conversation of one to `maxTurns` turns, as the platform posts them. */
export const aiSdkConversationArb = (maxTurns = 5): fc.Arbitrary<AiSdkMessage[][]> =>
  fc
    .integer({ min: 1, max: maxTurns })
    .chain((turns) => fc.tuple(...Array.from({ length: turns }, (_, t) => aiSdkTurnArb(t))));

/**
 * `messages` up to §15's normalizations, and only those: a single plain text
 * part as a string; tool input as a JSON value. (Shared by the core property
 * tests and the type tests.)
 */
export function normalizeAiSdkMessages(messages: readonly AiSdkMessage[]): unknown[] {
  return messages.map((message) => {
    if (typeof message.content === "string") return message;
    const parts = message.content.map((part) =>
      part.type === "tool-call" ? { ...part, input: JSON.parse(JSON.stringify(part.input)) } : part,
    );
    const [only] = parts;
    const plain =
      message.role !== "tool" &&
      parts.length === 1 &&
      only?.type === "text" &&
      Object.keys(only).length === 2 &&
      only.text !== "";
    return { ...message, content: plain ? only.text : parts };
  });
}

/**
 * Why `messages` is no valid `ModelMessage[]` by the `ai` package's own
 * exported `modelMessageSchema` (one line per issue); empty when it is valid.
 */
export async function aiSdkSchemaIssues(messages: unknown): Promise<string[]> {
  const result = await modelMessageSchema.array().safeParseAsync(messages);
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}
