import { describe, expect, it } from "vitest";
import {
  compaction,
  configDelta,
  message,
  reasoning,
  request,
  toolCall,
  toolResult,
  turnStart,
} from "../test/helpers/builders.ts";
import { entryChars, estimateStream, estimateView } from "./estimate.ts";

describe("the size estimate", () => {
  it("counts each provider-visible kind as UTF-8 bytes", () => {
    expect(entryChars(request("héllo"))).toBe(6);
    expect(entryChars(message("ok"))).toBe(2);
    expect(entryChars(reasoning("hmm"))).toBe(3);
    expect(
      entryChars({
        type: "chat_response",
        timestamp: "2026-01-01T00:00:00Z",
        data: { a: [1, "é"] },
      }),
    ).toBe(JSON.stringify({ a: [1, "é"] }).length + 1);
    expect(entryChars(toolCall("1", "grep", { q: "x" }))).toBe(4 + 9);
    expect(entryChars(toolResult("1", "found"))).toBe(5);
    expect(entryChars(turnStart())).toBe(0);
    expect(entryChars(configDelta({ big: "x".repeat(100) }))).toBe(0);
  });

  it("is chars / 4, unrounded", () => {
    expect(estimateView([request("abcde")])).toEqual({ chars: 5, estimated_tokens: 1.25 });
  });

  it("is taken over the projected view, not the raw stream", () => {
    const stream = [turnStart(), request("q"), reasoning("x".repeat(400)), message("m")];
    expect(estimateStream(stream).chars).toBe(402);
    expect(estimateStream([...stream, compaction(0, 0, 1, { reasoning: "strip" })])).toEqual({
      chars: 2,
      estimated_tokens: 0.5,
      turn_count: 1,
    });
  });
});
