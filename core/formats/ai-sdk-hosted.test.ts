/**
 * Provider-executed tools in the AI SDK format (docs/architecture.md §15
 * "Hosted tools"): how a posted provider-executed call is checked, and when a
 * stored part goes back verbatim rather than as text. Round trips are in
 * ./hosted.test.ts and ./ai-sdk.test.ts.
 */
import { describe, expect, it } from "vitest";
import { at, toolCall, toolResult, turnStart } from "../../test/helpers/builders.ts";
import type { Entry } from "../events.ts";
import { aiSdk } from "./ai-sdk.ts";
import { rawView } from "./view.ts";

const META = "ai-sdk";

const hostedCall = (id: string, input: unknown = { query: "x" }) => ({
  type: "tool-call",
  toolCallId: id,
  toolName: "web_search",
  input,
  providerExecuted: true,
});
const hostedResult = (id: string) => ({
  type: "tool-result",
  toolCallId: id,
  toolName: "web_search",
  output: { type: "json", value: ["hit"] },
});

const withHosted = (entry: Entry, hosted: unknown): Entry =>
  ({ ...entry, metadata: { [META]: { hosted } } }) as Entry;

describe("provider-executed calls posted in the AI SDK format", () => {
  it.each([
    ["an object", { n: Number.POSITIVE_INFINITY }, "input.n"],
    ["a nested array", { q: ["a", Number.NaN] }, "input.q[1]"],
  ])("refuses an input, %s, holding a non-finite number, naming where", (_, input, where) => {
    const posted = [
      { role: "user", content: "go" },
      { role: "assistant", content: [hostedCall("h1", input)] },
    ];
    expect(() => aiSdk.toEvents(posted, { timestamp: at(0), dropSystem: false })).toThrow(
      `messages[1].content[0].${where}: is not a finite number: JSON cannot carry it (stored, it would become null)`,
    );
  });
});

describe("provider-executed parts written back in the AI SDK format", () => {
  const call = toolCall("h1", "web_search", { query: "x" });
  const result = toolResult("h1", '["hit"]');
  const callText = '[hosted tool call web_search h1] {"query":"x"}';
  const resultText = '[hosted tool result h1] ["hit"]';

  it("gives a call and its result back verbatim while their stored parts are theirs", () => {
    const view = rawView([
      turnStart(0),
      withHosted(call, hostedCall("h1")),
      withHosted(result, hostedResult("h1")),
    ]);
    expect(aiSdk.fromView(view)).toEqual([
      { role: "assistant", content: [hostedCall("h1"), hostedResult("h1")] },
    ]);
  });

  it.each([
    [
      "the call's part is not a valid tool call",
      { type: "tool-call", toolCallId: "h1" },
      hostedResult("h1"),
    ],
    [
      "the result's part is not a valid tool result",
      hostedCall("h1"),
      { type: "tool-result", toolCallId: "h1" },
    ],
    ["the call's part has another call's id", hostedCall("h2"), hostedResult("h1")],
    ["the result's part has another call's id", hostedCall("h1"), hostedResult("h2")],
  ])("writes the pair as text when %s", (_, callPart, resultPart) => {
    const view = rawView([
      turnStart(0),
      withHosted(call, callPart),
      withHosted(result, resultPart),
    ]);
    expect(aiSdk.fromView(view)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: callText },
          { type: "text", text: resultText },
        ],
      },
    ]);
  });
});
