/**
 * Tool approvals in the AI SDK format (docs/architecture.md §5 "Tool pairs"):
 * what a posted turn's approval parts leave on its tool events, and which
 * stored approvals a view writes back. Round trips of whole turns are in
 * ./ai-sdk.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  approvalResponse as answer,
  approvalRequest as ask,
} from "../../test/helpers/ai-sdk-parts.ts";
import { at, toolCall, toolResult, turnStart } from "../../test/helpers/builders.ts";
import { InvalidInputError } from "../errors.ts";
import type { Entry } from "../events.ts";
import { aiSdk } from "./ai-sdk.ts";
import { rawView } from "./view.ts";

const META = "ai-sdk";

const convert = (messages: unknown[]) =>
  aiSdk.toEvents(messages, { timestamp: at(0), dropSystem: false }).events;

const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });
const tool = (...content: unknown[]) => ({ role: "tool", content });
const call = (id: string) => ({ type: "tool-call", toolCallId: id, toolName: "read", input: {} });
const result = (id: string) => ({
  type: "tool-result",
  toolCallId: id,
  toolName: "read",
  output: { type: "text", value: "ok" },
});

const withMeta = (entry: Entry, metadata: unknown): Entry =>
  ({ ...entry, metadata: { [META]: metadata } }) as Entry;

describe("approvals posted in the AI SDK format", () => {
  it("refuses a second approval request for the same call, at its toolCallId", () => {
    const posted = [user("go"), assistant([call("c1"), ask("a1", "c1"), ask("a2", "c1")])];
    expect(() => convert(posted)).toThrow(InvalidInputError);
    expect(() => convert(posted)).toThrow(
      'messages[1].content[2].toolCallId: tool call "c1" already has an approval request',
    );
  });

  it("puts responses in the result's own message on that result only, as parts", () => {
    const events = convert([
      user("go"),
      assistant([call("c1"), call("c2"), ask("a1", "c1")]),
      tool(answer("a1", true), result("c1"), result("c2")),
    ]);
    expect(events.map((e) => e.metadata)).toEqual([
      undefined,
      undefined,
      { [META]: { approval: ask("a1", "c1") } },
      undefined,
      { [META]: { approvals: { parts: [answer("a1", true)] } } },
      undefined,
    ]);
  });

  it("puts a tool message of responses on the next result only, as a message", () => {
    const events = convert([
      user("go"),
      assistant([call("c1"), call("c2"), ask("a1", "c1")]),
      tool(answer("a1", false)),
      tool(result("c1"), result("c2")),
    ]);
    expect(events.slice(4).map((e) => e.metadata)).toEqual([
      { [META]: { split: true, approvals: { messages: [tool(answer("a1", false))] } } },
      undefined,
    ]);
  });
});

describe("approvals written back in the AI SDK format", () => {
  it("writes only the valid tool messages of responses a result carries, before its message", () => {
    const valid = tool(answer("a1", true));
    const events = [
      turnStart(0),
      toolCall("c1", "read", {}),
      withMeta(toolResult("c1", "ok"), {
        split: true,
        approvals: {
          messages: [
            { role: "tool", content: [] },
            { role: "user", content: [answer("a0", true)] },
            valid,
            "not a message",
          ],
        },
      }),
    ];
    expect(aiSdk.fromView(rawView(events))).toEqual([
      assistant([call("c1")]),
      valid,
      tool(result("c1")),
    ]);
  });

  it.each([
    ["a user message", { type: "chat_request", timestamp: at(0), content: "go" }, user("go")],
    ["a tool call", toolCall("c1", "read", {}), assistant([call("c1")])],
  ])("writes no approval responses stored on %s: only results carry them", (_, entry, alone) => {
    const approvals = { messages: [tool(answer("a1", true))], parts: [answer("a2", true)] };
    const view = rawView([turnStart(0), withMeta(entry as Entry, { approvals })]);
    expect(aiSdk.fromView(view)).toEqual([alone]);
  });
});
