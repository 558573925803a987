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

/**
 * An OpenAI Chat turn of 40 + `size` bytes as D50 counts them: a question
 * (10), a `read_file` call (9 + 13 of arguments), its `size`-byte result, an
 * answer (8).
 */
export function chatToolTurn(turn: number, size: number) {
  return [
    { role: "user", content: `Question ${turn}` },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: `call_${turn}`,
          type: "function",
          function: { name: "read_file", arguments: `{"path":"f${turn}"}` },
        },
      ],
    },
    { role: "tool", tool_call_id: `call_${turn}`, content: "x".repeat(size) },
    { role: "assistant", content: `Answer ${turn}` },
  ];
}
