/**
 * fast-check arbitraries for OpenAI Chat Completions conversations, turn by
 * turn, as a platform posts them (format `openai-chat`), and the comparison
 * docs/architecture.md §15 allows for their round trips.
 */
import fc from "fast-check";
import type { ChatMessage } from "../../core/formats/openai-chat.schema.ts";

const textArb = fc.string({
  unit: fc.constantFrom("a", "b", " ", "é", "日", "🚀", "\n", '"', "{"),
  maxLength: 30,
});
const nonEmptyTextArb = textArb.filter((text) => text !== "");

const toolNameArb = fc.constantFrom("fs_read", "grep", "ütil", "run");

const imagePartArb = fc
  .record({
    url: fc.constantFrom("https://example.com/cat.png", "data:image/png;base64,iVBORw0KGgo="),
    detail: fc.option(fc.constantFrom("auto", "low", "high"), { nil: undefined }),
  })
  .map(({ url, detail }) => ({
    type: "image_url" as const,
    image_url: detail === undefined ? { url } : { url, detail },
  }));

const textPartArb = textArb.map((text) => ({ type: "text" as const, text }));

/** A user message: plain text, or parts (text and images, never without content). */
const userArb: fc.Arbitrary<ChatMessage> = fc
  .record({
    content: fc.oneof(
      nonEmptyTextArb,
      fc
        .array(fc.oneof({ weight: 3, arbitrary: textPartArb }, imagePartArb), {
          minLength: 1,
          maxLength: 4,
        })
        .filter((parts) => parts.some((part) => part.type !== "text" || part.text !== "")),
    ),
    name: fc.option(fc.constantFrom("alice", "bob"), { nil: undefined }),
  })
  .map(({ content, name }) =>
    name === undefined ? { role: "user", content } : { role: "user", content, name },
  );

/** Assistant text: a string or text/refusal parts (a joined text that is not empty). */
const assistantContentArb = fc.oneof(
  nonEmptyTextArb,
  fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: textPartArb },
        textArb.map((refusal) => ({ type: "refusal" as const, refusal })),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .filter(
      (parts) =>
        parts.length > 1 || (parts[0]?.type === "text" ? parts[0].text : parts[0]?.refusal) !== "",
    ),
);

/** What the OpenAI SDK leaves on a response message a platform appends as is. */
const responseExtrasArb = fc.constantFrom(
  {},
  { refusal: null },
  { refusal: null, annotations: [] },
);

const argumentsArb = fc.record({
  value: fc.dictionary(fc.constantFrom("path", "q", "n", "opts"), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 3,
  }),
  spaced: fc.boolean(),
});

const toolResultArb = fc.oneof(
  textArb,
  fc.constantFrom("Error: ENOENT: no such file", "error: exit status 1", "[compacted] grep: error"),
  fc.array(textPartArb, { minLength: 1, maxLength: 3 }),
);

type Step =
  | { kind: "text"; content: unknown; extras: object }
  | {
      kind: "calls";
      text: string | null | undefined;
      extras: object;
      calls: { name: string; args: { value: unknown; spaced: boolean }; result: unknown }[];
      answered: boolean[];
      order: readonly number[];
    };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc
    .record({ content: assistantContentArb, extras: responseExtrasArb })
    .map((step) => ({ kind: "text" as const, ...step })),
  fc
    .record({
      text: fc.oneof(
        { weight: 3, arbitrary: nonEmptyTextArb },
        fc.constantFrom(null, undefined, ""),
      ),
      extras: responseExtrasArb,
      calls: fc.array(fc.record({ name: toolNameArb, args: argumentsArb, result: toolResultArb }), {
        minLength: 1,
        maxLength: 3,
      }),
      answered: fc.array(
        fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
        { minLength: 3, maxLength: 3 },
      ),
      order: fc.constantFrom([0, 1, 2], [2, 1, 0], [1, 0, 2]),
    })
    .map((step) => ({ kind: "calls" as const, ...step })),
);

/**
 * One valid turn: usually a user message, then assistant texts and tool
 * calls (parallel, ids unique in the turn and reused by every turn) with
 * their results (in any order, some error-looking; in the last step some
 * left pending).
 */
export const chatTurnArb: fc.Arbitrary<ChatMessage[]> = fc
  .record({
    user: fc.option(userArb, { freq: 8, nil: undefined }),
    steps: fc.array(stepArb, { maxLength: 4 }),
  })
  .filter(({ user, steps }) => user !== undefined || steps.length > 0)
  .map(({ user, steps }) => {
    const out: ChatMessage[] = user === undefined ? [] : [user];
    let nextId = 0;
    for (const [k, step] of steps.entries()) {
      // Only the turn's last step may leave calls pending (docs/architecture.md §5 "Tool pairs").
      const last = k === steps.length - 1;
      if (step.kind === "text") {
        out.push({ role: "assistant", content: step.content, ...step.extras } as ChatMessage);
        continue;
      }
      const ids = step.calls.map(() => `call_${nextId++}`);
      const message: Record<string, unknown> = { role: "assistant" };
      if (step.text !== undefined) message.content = step.text;
      Object.assign(message, step.extras);
      message.tool_calls = step.calls.map((call, i) => ({
        id: ids[i],
        type: "function",
        function: {
          name: call.name,
          arguments: JSON.stringify(call.args.value, null, call.args.spaced ? 2 : undefined),
        },
      }));
      out.push(message as ChatMessage);
      for (const i of step.order) {
        const call = step.calls[i];
        if (call === undefined || (last && step.answered[i] === false)) continue;
        out.push({
          role: "tool",
          tool_call_id: ids[i] as string,
          content: call.result,
        } as ChatMessage);
      }
    }
    return out;
  });

/**
 * A conversation as the turns a platform posts, one message array per turn:
 * a turn that ends with pending calls is followed by one that begins with
 * their results (a tool approval spanning two turns).
 */
export const chatConversationArb = (maxTurns = 5): fc.Arbitrary<ChatMessage[][]> =>
  fc.array(chatTurnArb, { minLength: 1, maxLength: maxTurns }).map(answerPending);

/** The ids of a Chat turn's calls that no tool message of the turn answers, in call order. */
export function pendingChatCalls(turn: readonly ChatMessage[]): string[] {
  const answered = new Set(turn.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])));
  return turn
    .flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []))
    .filter((id) => !answered.has(id));
}

function answerPending(turns: ChatMessage[][]): ChatMessage[][] {
  return turns.map((turn, k) => {
    const previous = turns[k - 1];
    if (previous === undefined) return turn;
    const results = pendingChatCalls(previous).map(
      (id): ChatMessage => ({ role: "tool", tool_call_id: id, content: `approved ${id}` }),
    );
    return [...results, ...turn];
  });
}

/**
 * `messages` up to the normalizations docs/architecture.md §15 allows: tool
 * arguments as JSON values, a single text part as its string, and a
 * text-less assistant message's absent `content` as `null`.
 */
export function normalizeChatMessages(messages: readonly ChatMessage[]): unknown[] {
  return messages.map((message) => {
    const out: Record<string, unknown> = { ...message };
    const content = out.content;
    if (
      Array.isArray(content) &&
      content.length === 1 &&
      (content[0] as { type?: unknown }).type === "text" &&
      Object.keys(content[0] as object).length === 2
    ) {
      out.content = (content[0] as { text: string }).text;
    }
    if (message.role === "assistant") {
      if (!("content" in out)) out.content = null;
      if (Array.isArray(out.tool_calls)) {
        out.tool_calls = out.tool_calls.map((call: { function: { arguments: string } }) => ({
          ...call,
          function: { ...call.function, arguments: JSON.parse(call.function.arguments) },
        }));
      }
    }
    return out;
  });
}
