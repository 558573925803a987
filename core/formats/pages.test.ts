import { describe, expect, it } from "vitest";
import { message, request, toolCall, toolResult, turnStart } from "../../test/helpers/builders.ts";
import { PROVIDER_FORMATS } from "./index.ts";
import { messagesOfTurns } from "./pages.ts";
import { rawView } from "./view.ts";

/** Turn 0 ends right after its tool result; turn 1 answers a call turn 2 answers first. */
const stream = [
  turnStart(0),
  request("find it", 1),
  toolCall("c1", "grep", { q: "x" }, 2),
  toolResult("c1", "found", false, 3),
  turnStart(4),
  request("and now?", 5),
  toolCall("c2", "apply", {}, 6),
  turnStart(7),
  toolResult("c2", "applied", false, 8),
  message("done", 9),
];
const view = rawView(stream);

describe("messagesOfTurns", () => {
  it("gives a message that joins two turns, whole, to the first (Anthropic)", () => {
    const format = PROVIDER_FORMATS["anthropic-messages"];
    const whole = format.fromView(view);
    const pages = [0, 1, 2].map((t) => messagesOfTurns(format, view, whole, t, t + 1));
    expect(pages).toEqual([
      [
        { role: "user", content: "find it" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "c1", name: "grep", input: { q: "x" } }],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "c1", content: "found" },
            { type: "text", text: "and now?" },
          ],
        },
      ],
      [{ role: "assistant", content: [{ type: "tool_use", id: "c2", name: "apply", input: {} }] }],
      [
        { role: "user", content: [{ type: "tool_result", tool_use_id: "c2", content: "applied" }] },
        { role: "assistant", content: "done" },
      ],
    ]);
  });

  it("names a result after its call in the turn before (AI SDK), as the whole view does", () => {
    const format = PROVIDER_FORMATS["ai-sdk"];
    const whole = format.fromView(view);
    const last = messagesOfTurns(format, view, whole, 2, 3);
    expect(last[0]).toMatchObject({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c2", toolName: "apply" }],
    });
    expect(messagesOfTurns(format, view, whole, 0, 2).concat(last)).toEqual(whole);
  });

  it("is empty for an empty range, and the whole view for all of it", () => {
    const format = PROVIDER_FORMATS["openai-chat"];
    const whole = format.fromView(view);
    expect(messagesOfTurns(format, view, whole, 1, 1)).toEqual([]);
    expect(messagesOfTurns(format, view, whole, 2, 1)).toEqual([]);
    expect(messagesOfTurns(format, view, whole, 0, 3)).toEqual(whole);
    expect(messagesOfTurns(format, view, whole, 0, 1)).toHaveLength(3);
  });
});
