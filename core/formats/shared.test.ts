import { describe, expect, it } from "vitest";
import * as z from "zod";
import { documentedContent, isJsonObject, locatedContent, parseToolArguments } from "./shared.ts";

const AT = ["messages", 1, "arguments"] as const;

/** The detail of what `run` throws. */
function detail(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("parseToolArguments", () => {
  it("answers the object a JSON string encodes", () => {
    expect(parseToolArguments('{"path":"a","n":[1]}', [...AT])).toEqual({ path: "a", n: [1] });
  });

  it("refuses what is not a JSON object, naming the path", () => {
    expect(detail(() => parseToolArguments("[1]", [...AT]))).toBe(
      "messages[1].arguments: must be a JSON object encoded as a string (got an array)",
    );
    expect(detail(() => parseToolArguments("null", [...AT]))).toBe(
      "messages[1].arguments: must be a JSON object encoded as a string (got null)",
    );
    expect(detail(() => parseToolArguments("3", [...AT]))).toBe(
      "messages[1].arguments: must be a JSON object encoded as a string (got a number)",
    );
    expect(detail(() => parseToolArguments("{", [...AT]))).toMatch(
      /^messages\[1\]\.arguments: is not valid JSON \(.+\): arguments must be a JSON object encoded as a string$/,
    );
    const deep = `{"a":${"[".repeat(100)}${"]".repeat(100)}}`;
    expect(detail(() => parseToolArguments(deep, [...AT]))).toBe(
      "messages[1].arguments: nests deeper than 100 levels: flatten the tool's arguments",
    );
  });
});

describe("isJsonObject", () => {
  it("is true for objects only", () => {
    expect([{}, [], null, "x", 1].map(isJsonObject)).toEqual([true, false, false, false, false]);
  });
});

describe("content", () => {
  const wording = { empty: "content must not be empty", items: "parts" };
  const part = z.object({ type: z.literal("text") });

  it("documents a string or a non-empty array", () => {
    const schema = documentedContent(part, wording);
    expect(schema.safeParse("hi").success).toBe(true);
    expect(schema.safeParse([{ type: "text" }]).success).toBe(true);
    expect(schema.safeParse("").error?.issues[0]?.message).toBe("content must not be empty");
  });

  it("locates each issue inside the array, and words the others", () => {
    const schema = locatedContent(part, wording);
    expect(schema.parse("hi")).toBe("hi");
    expect(schema.safeParse([]).error?.issues[0]?.message).toBe("content must not be empty");
    expect(schema.safeParse(3).error?.issues[0]?.message).toBe(
      "content must be a string or an array of parts",
    );
    expect(schema.safeParse([{ type: "text" }, { type: "x" }]).error?.issues[0]?.path).toEqual([
      1,
      "type",
    ]);
  });
});
