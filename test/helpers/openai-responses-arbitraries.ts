/**
 * fast-check arbitraries for OpenAI Responses conversations, turn by turn, as
 * a platform posts its `input` items (format `openai-responses`), and the
 * comparison docs/architecture.md §15 allows for their round trips.
 */
import fc from "fast-check";
import type { ResponsesItem } from "../../core/formats/openai-responses.schema.ts";

const textArb = fc.string({
  unit: fc.constantFrom("a", "b", " ", "é", "日", "🚀", "\n", '"', "{"),
  maxLength: 30,
});
const nonEmptyTextArb = textArb.filter((text) => text !== "");

const toolNameArb = fc.constantFrom("fs_read", "grep", "ütil", "run");

const inputTextArb = textArb.map((text) => ({ type: "input_text" as const, text }));

const imagePartArb = fc
  .record({
    image_url: fc.constantFrom("https://example.com/cat.png", "data:image/png;base64,iVBORw0KGgo="),
    detail: fc.constantFrom("auto", "low", "high"),
  })
  .map((part) => ({ type: "input_image" as const, ...part }));

const filePartArb = fc.constantFrom(
  { type: "input_file" as const, file_id: "file-abc123" },
  {
    type: "input_file" as const,
    filename: "a.pdf",
    file_data: "data:application/pdf;base64,JVBERi0=",
  },
);

/** A user message: the EasyInputMessage string form, or an input message with parts. */
const userArb: fc.Arbitrary<ResponsesItem> = fc.oneof(
  fc
    .record({ content: nonEmptyTextArb, typed: fc.boolean() })
    .map(
      ({ content, typed }): ResponsesItem =>
        typed ? { type: "message", role: "user", content } : { role: "user", content },
    ),
  fc
    .array(fc.oneof({ weight: 3, arbitrary: inputTextArb }, imagePartArb, filePartArb), {
      minLength: 1,
      maxLength: 4,
    })
    .filter((parts) => parts.some((part) => part.type !== "input_text" || part.text !== ""))
    .map((content) => ({ type: "message", role: "user", content }) as ResponsesItem),
);

const annotationArb = fc.constantFrom(
  {
    type: "url_citation",
    url: "https://example.com",
    title: "Example",
    start_index: 0,
    end_index: 1,
  },
  { type: "file_citation", file_id: "file-abc123", filename: "a.pdf", index: 0 },
);

const outputTextArb = fc
  .record({
    text: textArb,
    annotations: fc.array(annotationArb, { maxLength: 2 }),
    logprobs: fc.option(fc.constant([]), { nil: undefined }),
  })
  .map(({ logprobs, ...part }) => ({
    type: "output_text" as const,
    ...part,
    ...(logprobs === undefined ? {} : { logprobs }),
  }));

const argumentsArb = fc.record({
  value: fc.dictionary(fc.constantFrom("path", "q", "n", "opts"), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 3,
  }),
  spaced: fc.boolean(),
});

const outputArb = fc.oneof(
  textArb,
  fc.constantFrom("Error: ENOENT: no such file", "[compacted] grep: error"),
  fc.array(inputTextArb, { minLength: 1, maxLength: 3 }),
);

type Step =
  | { kind: "reasoning"; summary: string[]; content: string[] | undefined; encrypted: boolean }
  | { kind: "message"; parts: { type: "output_text"; text: string }[] | undefined; text: string }
  | {
      kind: "calls";
      calls: { name: string; args: { value: unknown; spaced: boolean }; output: unknown }[];
      withIds: boolean;
      answered: boolean[];
    };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc
    .record({
      summary: fc.array(textArb, { maxLength: 2 }),
      content: fc.option(fc.array(textArb, { minLength: 1, maxLength: 2 }), { nil: undefined }),
      encrypted: fc.boolean(),
    })
    .map((step) => ({ kind: "reasoning" as const, ...step })),
  fc
    .record({
      // An output message (with its id and parts), or the id-less string form.
      parts: fc.option(
        fc
          .array(outputTextArb, { minLength: 1, maxLength: 3 })
          .filter((parts) => parts.map((part) => part.text).join("\n") !== ""),
        { nil: undefined },
      ),
      text: nonEmptyTextArb,
    })
    .map((step) => ({ kind: "message" as const, ...step })),
  fc
    .record({
      calls: fc.array(fc.record({ name: toolNameArb, args: argumentsArb, output: outputArb }), {
        minLength: 1,
        maxLength: 3,
      }),
      withIds: fc.boolean(),
      answered: fc.array(
        fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
        { minLength: 3, maxLength: 3 },
      ),
    })
    .map((step) => ({ kind: "calls" as const, ...step })),
);

/**
 * One valid turn: usually a user message, then reasoning items, assistant
 * messages and function calls (parallel, call ids unique in the turn and
 * reused by every turn) with their outputs (in the last step some left
 * pending).
 */
export const responsesTurnArb: fc.Arbitrary<ResponsesItem[]> = fc
  .record({
    user: fc.option(userArb, { freq: 8, nil: undefined }),
    steps: fc.array(stepArb, { maxLength: 4 }),
  })
  .filter(({ user, steps }) => user !== undefined || steps.length > 0)
  .map(({ user, steps }) => {
    const out: ResponsesItem[] = user === undefined ? [] : [user];
    let next = 0;
    for (const step of steps) {
      const n = next++;
      // Only the turn's last step may leave calls pending (docs/architecture.md §5 "Tool pairs").
      const last = n === steps.length - 1;
      switch (step.kind) {
        case "reasoning": {
          const item: Record<string, unknown> = {
            type: "reasoning",
            id: `rs_${n}`,
            summary: step.summary.map((text) => ({ type: "summary_text", text })),
          };
          if (step.content) {
            item.content = step.content.map((text) => ({ type: "reasoning_text", text }));
          }
          if (step.encrypted) item.encrypted_content = `gAAAA${n}==`;
          out.push(item as ResponsesItem);
          break;
        }
        case "message":
          out.push(
            (step.parts === undefined
              ? { role: "assistant", content: step.text }
              : {
                  id: `msg_${n}`,
                  type: "message",
                  role: "assistant",
                  status: "completed",
                  content: step.parts,
                }) as ResponsesItem,
          );
          break;
        case "calls": {
          const ids = step.calls.map((_, i) => `call_${n}_${i}`);
          step.calls.forEach((call, i) => {
            out.push({
              type: "function_call",
              call_id: ids[i] as string,
              name: call.name,
              arguments: JSON.stringify(call.args.value, null, call.args.spaced ? 2 : undefined),
              ...(step.withIds ? { id: `fc_${n}_${i}`, status: "completed" as const } : {}),
            });
          });
          step.calls.forEach((call, i) => {
            if (last && step.answered[i] === false) return;
            out.push({
              type: "function_call_output",
              call_id: ids[i] as string,
              output: call.output,
            } as ResponsesItem);
          });
          break;
        }
      }
    }
    return out;
  });

/**
 * A conversation as the turns a platform posts, one `input` array per turn:
 * a turn that ends with pending calls is followed by one that begins with
 * their outputs (a tool approval spanning two turns).
 */
export const responsesConversationArb = (maxTurns = 5): fc.Arbitrary<ResponsesItem[][]> =>
  fc.array(responsesTurnArb, { minLength: 1, maxLength: maxTurns }).map((turns) =>
    turns.map((turn, k) => {
      const previous = turns[k - 1];
      if (previous === undefined) return turn;
      const outputs = pendingResponsesCalls(previous).map(
        (id): ResponsesItem => ({
          type: "function_call_output",
          call_id: id,
          output: `approved ${id}`,
        }),
      );
      return [...outputs, ...turn];
    }),
  );

/** The call ids of a turn's function calls that no output of the turn answers, in call order. */
export function pendingResponsesCalls(turn: readonly ResponsesItem[]): string[] {
  const item = (i: ResponsesItem) => i as { type?: string; call_id?: string };
  const answered = new Set(
    turn.flatMap((i) => (item(i).type === "function_call_output" ? [item(i).call_id] : [])),
  );
  return turn
    .flatMap((i) => (item(i).type === "function_call" ? [item(i).call_id as string] : []))
    .filter((id) => !answered.has(id));
}

/**
 * `input` items up to the normalizations docs/architecture.md §15 allows: function
 * arguments as JSON values, and an output message's defaults (`status`
 * `"completed"`, each part's `annotations` and `logprobs` `[]`) filled in.
 */
export function normalizeResponsesItems(items: readonly ResponsesItem[]): unknown[] {
  return items.map((item) => {
    const out: Record<string, unknown> = { ...item };
    if (out.type === "function_call") out.arguments = JSON.parse(out.arguments as string);
    if (out.role === "assistant" && typeof out.id === "string") {
      out.type = "message";
      out.status ??= "completed";
      out.content = (out.content as object[]).map((part) => ({
        annotations: [],
        logprobs: [],
        ...part,
      }));
    }
    return out;
  });
}
