/**
 * `fromView` answers what the `ai` package accepts: the assignments below
 * compile under `tsc` without a cast, so our own types (core imports no SDK)
 * stay a subset of `ModelMessage`, and every body passes the package's own
 * exported `modelMessageSchema`, uncompacted and under random compactions.
 */
import type { ModelMessage } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aiSdk } from "../../core/formats/ai-sdk.ts";
import { projectedView, rawView } from "../../core/formats/view.ts";
import { aiSdkConversationArb, aiSdkSchemaIssues } from "../helpers/ai-sdk-arbitraries.ts";
import { compactedStreamArb, compactionArb } from "../helpers/arbitraries.ts";
import { at } from "../helpers/builders.ts";
import { propertyRuns } from "../helpers/property.ts";

const timestamp = "2026-01-01T00:00:00Z";

describe("ai-sdk output type", () => {
  it("is assignable to the package's ModelMessage[] and carries every kind of part", async () => {
    const options = { anthropic: { cacheControl: { type: "ephemeral" } } };
    const posted = [
      {
        role: "user",
        content: [
          { type: "text", text: "look", providerOptions: options },
          { type: "image", image: "https://example.com/a.png", mediaType: "image/png" },
          { type: "file", data: "aGVsbG8=", mediaType: "text/plain", filename: "a.txt" },
        ],
        providerOptions: options,
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hmm", providerOptions: { anthropic: { signature: "sig" } } },
          { type: "text", text: "reading" },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } },
          { type: "tool-call", toolCallId: "c2", toolName: "grep", input: {} },
          { type: "tool-call", toolCallId: "c3", toolName: "ls", input: {} },
          // A provider-executed call and its result, in the assistant message (§15 "Hosted tools").
          {
            type: "tool-call",
            toolCallId: "ws_1",
            toolName: "web_search",
            input: { query: "q" },
            providerExecuted: true,
          },
          {
            type: "tool-result",
            toolCallId: "ws_1",
            toolName: "web_search",
            output: { type: "json", value: [{ url: "https://example.com" }] },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "read",
            output: { type: "json", value: { a: [1, null] } },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "grep",
            output: { type: "error-text", value: "boom" },
          },
          {
            type: "tool-result",
            toolCallId: "c3",
            toolName: "ls",
            output: {
              type: "content",
              value: [
                { type: "text", text: "x" },
                { type: "image-url", url: "https://example.com/b.png" },
              ],
            },
          },
        ],
      },
      { role: "assistant", content: "done", providerOptions: options },
    ];
    const { events } = aiSdk.toEvents(posted, { timestamp, dropSystem: false });
    const messages: ModelMessage[] = aiSdk.fromView(rawView(events));
    expect(messages).toEqual(posted);
    expect(await aiSdkSchemaIssues(messages)).toEqual([]);
  });

  it("passes modelMessageSchema for any posted conversation under any compactions", async () => {
    await fc.assert(
      fc.asyncProperty(
        aiSdkConversationArb(6),
        fc.array(compactionArb(7), { maxLength: 4 }),
        async (turns, compactions) => {
          const stream = turns.flatMap(
            (messages, t) =>
              aiSdk.toEvents(messages, { timestamp: at(t), dropSystem: false }).events,
          );
          const messages: ModelMessage[] = aiSdk.fromView(
            projectedView([...stream, ...compactions]),
          );
          expect(await aiSdkSchemaIssues(messages)).toEqual([]);
        },
      ),
      propertyRuns(200),
    );
  });

  it("passes modelMessageSchema for streams posted as JP events", async () => {
    await fc.assert(
      fc.asyncProperty(compactedStreamArb(), async (stream) => {
        const messages: ModelMessage[] = aiSdk.fromView(projectedView(stream));
        expect(await aiSdkSchemaIssues(messages)).toEqual([]);
      }),
      propertyRuns(200),
    );
  });
});
