/**
 * fast-check arbitraries for Anthropic Messages API conversations, posted
 * turn by turn: every turn is valid for `anthropicMessages.toEvents` (tool
 * results answer the calls of the message right before them, first in their
 * message), and covers what the format keeps in metadata (signatures,
 * redacted thinking, images, documents, `cache_control`, tool result parts).
 */
import fc from "fast-check";
import type {
  AnthropicMessage,
  AssistantBlock,
  ToolResultBlock,
  UserBlock,
  UserContentBlock,
} from "../../core/formats/anthropic-messages.schema.ts";

/** Text with the characters that matter: multi-byte, newlines (the joiner of parts). */
export const anthropicTextArb = fc.string({
  unit: fc.constantFrom("a", "b", " ", "é", "日", "🚀", "\n"),
  minLength: 1,
  maxLength: 30,
});

const cacheControlArb = fc.option(
  fc.constantFrom(
    { type: "ephemeral" as const },
    { type: "ephemeral" as const, ttl: "1h" as const },
    null,
  ),
  { nil: undefined },
);

/** Sets `key` only when `value` is defined: posted JSON has no `undefined` members. */
function withOptional<T extends object, K extends string, V>(
  object: T,
  key: K,
  value: V | undefined,
): T & Partial<Record<K, V>> {
  return value === undefined ? object : { ...object, [key]: value };
}

const textBlockArb = fc
  .record({ text: anthropicTextArb, cache: cacheControlArb })
  .map(({ text, cache }) => withOptional({ type: "text" as const, text }, "cache_control", cache));

const imageBlockArb: fc.Arbitrary<UserContentBlock> = fc
  .record({
    source: fc.oneof(
      fc.base64String({ minLength: 4, maxLength: 12 }).map((data) => ({
        type: "base64" as const,
        media_type: "image/png" as const,
        data,
      })),
      fc.webUrl().map((url) => ({ type: "url" as const, url })),
    ),
    cache: cacheControlArb,
  })
  .map(({ source, cache }) =>
    withOptional({ type: "image" as const, source }, "cache_control", cache),
  );

const documentBlockArb: fc.Arbitrary<UserContentBlock> = fc
  .record({ data: anthropicTextArb, title: fc.option(anthropicTextArb, { nil: undefined }) })
  .map(({ data, title }) =>
    withOptional(
      {
        type: "document" as const,
        source: { type: "text" as const, media_type: "text/plain" as const, data },
      },
      "title",
      title,
    ),
  );

const userPartArb: fc.Arbitrary<UserContentBlock> = fc.oneof(
  { arbitrary: textBlockArb, weight: 3 },
  { arbitrary: imageBlockArb, weight: 1 },
  { arbitrary: documentBlockArb, weight: 1 },
);

/** The opening of a turn: a string, or one to three text, image or document blocks. */
const userContentArb: fc.Arbitrary<string | UserContentBlock[]> = fc.oneof(
  anthropicTextArb,
  fc.array(userPartArb, { minLength: 1, maxLength: 3 }),
);

/** Opaque signatures and redacted data: any non-empty base64. */
const opaqueArb = fc.base64String({ minLength: 4, maxLength: 24 });

/** What an assistant writes before its calls: thinking (empty text allowed), redacted thinking, text. */
const leadBlockArb: fc.Arbitrary<AssistantBlock> = fc.oneof(
  fc
    .record({ thinking: fc.oneof(fc.constant(""), anthropicTextArb), signature: opaqueArb })
    .map(({ thinking, signature }) => ({ type: "thinking" as const, thinking, signature })),
  opaqueArb.map((data) => ({ type: "redacted_thinking" as const, data })),
  textBlockArb,
);

const toolInputArb = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 6 }),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

const callArb = fc.record({
  name: fc.constantFrom("read", "write", "search"),
  input: toolInputArb,
  cache: cacheControlArb,
});

const resultArb = fc.record({
  content: fc.option(
    fc.oneof(
      anthropicTextArb,
      fc.array(fc.oneof(textBlockArb, imageBlockArb), { minLength: 1, maxLength: 2 }),
    ),
    { nil: undefined },
  ),
  isError: fc.option(fc.boolean(), { nil: undefined }),
  cache: cacheControlArb,
});

/** One model call that uses tools, and the user message of its results. */
const cycleArb = fc
  .record({
    lead: fc.array(leadBlockArb, { maxLength: 2 }),
    calls: fc.array(callArb, { minLength: 1, maxLength: 3 }),
    splitAssistant: fc.boolean(),
    splitResults: fc.boolean(),
    trailing: fc.array(userPartArb, { maxLength: 1 }),
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

/** The final answer: a string, or blocks without calls. */
const finalArb: fc.Arbitrary<string | AssistantBlock[]> = fc.oneof(
  anthropicTextArb,
  fc.array(leadBlockArb, { minLength: 1, maxLength: 3 }),
);

/**
 * One valid turn: a user message, up to three tool-using model calls
 * (parallel calls, results in any order, errors, results split over adjacent
 * user messages, content after the results), then maybe a final answer. Call
 * ids are `toolu_<turn>_<cycle>_<k>`: unique in the conversation, as the API
 * generates them.
 */
export const anthropicTurnArb = (turn: number): fc.Arbitrary<AnthropicMessage[]> =>
  fc
    .record({
      opening: userContentArb,
      cycles: fc.array(cycleArb, { maxLength: 3 }),
      final: fc.option(finalArb, { nil: undefined }),
    })
    .map(({ opening, cycles, final }) => {
      const messages: AnthropicMessage[] = [{ role: "user", content: opening }];
      cycles.forEach(({ cycle, results, order }, c) => {
        const ids = cycle.calls.map((_, k) => `toolu_${turn}_${c}_${k}`);
        const uses: AssistantBlock[] = cycle.calls.map(({ name, input, cache }, k) =>
          withOptional(
            { type: "tool_use" as const, id: ids[k] as string, name, input },
            "cache_control",
            cache,
          ),
        );
        if (cycle.splitAssistant && cycle.lead.length > 0) {
          messages.push({ role: "assistant", content: cycle.lead });
          messages.push({ role: "assistant", content: uses });
        } else {
          messages.push({ role: "assistant", content: [...cycle.lead, ...uses] });
        }
        const answers: ToolResultBlock[] = order.map((k) => {
          const { content, isError, cache } = results[k] as (typeof results)[number];
          let block: ToolResultBlock = { type: "tool_result", tool_use_id: ids[k] as string };
          block = withOptional(block, "content", content);
          block = withOptional(block, "is_error", isError);
          return withOptional(block, "cache_control", cache);
        });
        const tail: UserBlock[] = [...cycle.trailing];
        if (cycle.splitResults && answers.length > 1) {
          messages.push({ role: "user", content: answers.slice(0, 1) });
          messages.push({ role: "user", content: [...answers.slice(1), ...tail] });
        } else {
          messages.push({ role: "user", content: [...answers, ...tail] });
        }
      });
      if (final !== undefined) messages.push({ role: "assistant", content: final });
      return messages;
    });

/** A conversation of one to `maxTurns` turns, as the platform posts them. */
export const anthropicConversationArb = (maxTurns = 5): fc.Arbitrary<AnthropicMessage[][]> =>
  fc
    .integer({ min: 1, max: maxTurns })
    .chain((turns) => fc.tuple(...Array.from({ length: turns }, (_, t) => anthropicTurnArb(t))));

type NormalBlock = { type: string; [key: string]: unknown };

/**
 * `messages` up to §15's normalizations, and only those: adjacent same-role
 * messages merged; a single plain text block as a string; tool input as a
 * JSON value; an optional `is_error: false` as absent. (Shared by the core
 * property tests and the service-level round trips.)
 */
export function normalizeAnthropicMessages(messages: readonly AnthropicMessage[]): unknown[] {
  const merged: { role: string; content: NormalBlock[] }[] = [];
  for (const message of messages) {
    const blocks: NormalBlock[] =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : message.content.map((block) => {
            if (block.type === "tool_use") {
              return { ...block, input: JSON.parse(JSON.stringify(block.input)) };
            }
            if (block.type === "tool_result" && block.is_error === false) {
              const { is_error: _, ...rest } = block;
              return rest;
            }
            return block;
          });
    const last = merged.at(-1);
    if (last?.role === message.role) last.content.push(...blocks);
    else merged.push({ role: message.role, content: blocks });
  }
  return merged.map(({ role, content }) => {
    const only = content.length === 1 ? content[0] : undefined;
    const plain = only?.type === "text" && Object.keys(only).length === 2;
    return { role, content: plain ? only?.text : content };
  });
}
