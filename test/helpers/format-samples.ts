/**
 * Small literal conversations in each provider format, shared by the API,
 * CLI and client tests (expected values are written out where they are used).
 */

/** An OpenAI Chat turn: a question, a `read_file` call on README.md and its result, an answer. */
export const CHAT_README_TURN = [
  { role: "user", content: "What is in README.md?" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "call_1",
        type: "function",
        function: { name: "read_file", arguments: '{"path":"README.md"}' },
      },
    ],
  },
  { role: "tool", tool_call_id: "call_1", content: "# autocompact\nKeeps agents small." },
  { role: "assistant", content: "It describes autocompact." },
];

/** A text-only turn, the same in both formats. */
export const THANKS_TURN = [
  { role: "user", content: "Thanks!" },
  { role: "assistant", content: "You're welcome." },
];

/** An Anthropic turn with signed thinking and a tool round trip. */
export const ANTHROPIC_LS_TURN = [
  { role: "user", content: "List the files." },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "I should call ls.", signature: "sig-abc" },
      { type: "tool_use", id: "toolu_1", name: "ls", input: { dir: "." } },
    ],
  },
  {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt b.txt" }],
  },
  { role: "assistant", content: "Two files: a.txt and b.txt." },
];
