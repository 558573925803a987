import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { ChatRequest, ToolCallRequest } from "../events.ts";
import {
  argumentsText,
  documentedContent,
  dropSystemHint,
  extrasOf,
  fits,
  forEachPostedPart,
  formatMetadata,
  isJsonObject,
  isPlainText,
  joinedText,
  LeadingSystem,
  laterSystemHint,
  locatedContent,
  parsePostedTurn,
  parseToolArguments,
  reportLocated,
  roleError,
  turnOf,
  valid,
  without,
} from "./shared.ts";

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

describe("argumentsText", () => {
  const call = (metadata: Record<string, unknown>): ToolCallRequest => ({
    type: "tool_call_request",
    timestamp: "t",
    id: "c1",
    name: "f",
    arguments: { a: 1.5 },
    metadata,
  });

  it("gives back the string posted in either OpenAI format while it still encodes the arguments", () => {
    const chat = call({ "openai-chat": { arguments: '{ "a": 1.50 }' } });
    expect(argumentsText({ event: chat, rewritten: false })).toBe('{ "a": 1.50 }');
    const responses = call({ "openai-responses": { arguments: '{"a" :1.5}' } });
    expect(argumentsText({ event: responses, rewritten: false })).toBe('{"a" :1.5}');
  });

  it.each([
    ["the event was rewritten", { "openai-chat": { arguments: '{ "a": 1.50 }' } }, true],
    ["the string encodes other arguments", { "openai-chat": { arguments: '{ "a": 2 }' } }, false],
    ["the string is not JSON", { "openai-chat": { arguments: '{ "a": ' } }, false],
    ["the string repeats a key", { "openai-chat": { arguments: '{"a":1.5,"a":1.5}' } }, false],
    ["the stored arguments are not a string", { "openai-chat": { arguments: { a: 1.5 } } }, false],
    ["another format keeps the string", { "ai-sdk": { arguments: '{ "a": 1.50 }' } }, false],
  ])("re-serializes the arguments when %s", (_, metadata, rewritten) => {
    expect(argumentsText({ event: call(metadata), rewritten })).toBe('{"a":1.5}');
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

/** The problem `run` throws: its status, detail and issues. */
function problem(run: () => unknown): { status: number; detail: string; issues?: unknown } {
  try {
    run();
  } catch (error) {
    const { status, message, issues } = error as Error & { status: number; issues?: unknown };
    return { status, detail: message, ...(issues !== undefined && { issues }) };
  }
  throw new Error("expected an error");
}

describe("LeadingSystem", () => {
  const refusal = ({
    role,
    leading,
    dropSystem,
  }: {
    role: string;
    leading: boolean;
    dropSystem: boolean;
  }) => `${role} leading=${leading} drop=${dropSystem}`;

  it("drops system messages while they lead the turn, with dropSystem", () => {
    const system = new LeadingSystem(true, refusal);
    system.system(["messages", 0], "system");
    system.system(["messages", 1], "developer");
    expect(system.dropped).toBe(2);
    system.other();
    expect(problem(() => system.system(["messages", 3], "developer"))).toMatchObject({
      status: 422,
      detail: "messages[3]: developer leading=false drop=true",
    });
    expect(system.dropped).toBe(2);
  });

  it("refuses every system message without dropSystem, leading or not", () => {
    const system = new LeadingSystem(false, refusal);
    expect(problem(() => system.system(["input", 0], "system")).detail).toBe(
      "input[0]: system leading=true drop=false",
    );
    system.other();
    expect(problem(() => system.system(["input", 2], "system")).detail).toBe(
      "input[2]: system leading=false drop=false",
    );
    expect(system.dropped).toBe(0);
  });
});

describe("the system refusals", () => {
  it("add how drop_system applies to a detail that leaves it out", () => {
    const refusal = dropSystemHint("no system");
    expect(refusal({ role: "system", leading: true, dropSystem: false })).toBe(
      'no system; or post with "drop_system": true to drop leading system messages',
    );
    expect(refusal({ role: "system", leading: false, dropSystem: true })).toBe(
      "no system; drop_system drops leading system messages only",
    );
  });

  it("say where a later one stands for a detail that names drop_system", () => {
    const refusal = laterSystemHint("no system (use drop_system)", "item");
    expect(refusal({ role: "developer", leading: true, dropSystem: false })).toBe(
      "no system (use drop_system)",
    );
    expect(refusal({ role: "developer", leading: false, dropSystem: true })).toBe(
      "a developer message after the turn's first other item: no system (use drop_system) (only leading ones are dropped)",
    );
  });
});

describe("parsePostedTurn", () => {
  const Message = z.strictObject({ role: z.literal("user"), content: z.string() });
  const seen: [unknown, number][] = [];
  const turn = {
    field: "messages" as const,
    schema: turnOf(Message),
    refusal: dropSystemHint("no system"),
    refuseUnmodelled: (value: unknown, from: number) => {
      seen.push([value, from]);
      if (Array.isArray(value) && value.includes("unmodelled")) throw new Error("unmodelled");
    },
  };
  const system = { role: "system", content: "s" };
  const user = { role: "user", content: "u" };

  it("drops the leading system messages, keeping every index as posted", () => {
    seen.length = 0;
    const posted = [system, system, user, { role: "user", content: 3 }];
    const issue = problem(() => parsePostedTurn(posted, true, turn));
    expect(issue.status).toBe(400);
    expect(issue.detail).toBe(
      "messages[3].content: Invalid input: expected string, received number",
    );
    expect(seen).toEqual([[posted, 2]]);
    expect(parsePostedTurn([system, user], true, turn)).toEqual({
      messages: [{ role: "user", content: "-" }, user],
      dropped: 1,
    });
  });

  it("refuses system messages before anything else, and what is left of no message", () => {
    expect(problem(() => parsePostedTurn([user, system, "unmodelled"], true, turn))).toMatchObject({
      status: 422,
      detail: "messages[1]: no system; drop_system drops leading system messages only",
    });
    expect(problem(() => parsePostedTurn([system, "unmodelled"], false, turn)).status).toBe(422);
    expect(() => parsePostedTurn([user, "unmodelled"], false, turn)).toThrow("unmodelled");
    const byRole = { ...turn, refusal: ({ role }: { role: string }) => `no ${role} here` };
    expect(problem(() => parsePostedTurn([user, system], false, byRole)).detail).toBe(
      "messages[1]: no system here",
    );
    expect(problem(() => parsePostedTurn([system, system], true, turn))).toMatchObject({
      status: 400,
      detail: "messages: nothing is left once the leading system messages are dropped",
    });
  });

  it("takes what is not an array to the schema as it is", () => {
    seen.length = 0;
    expect(problem(() => parsePostedTurn({ role: "system" }, true, turn)).detail).toBe(
      "messages: Invalid input: expected array, received object",
    );
    expect(seen).toEqual([[{ role: "system" }, 0]]);
    expect(problem(() => parsePostedTurn([], true, turn)).detail).toBe(
      "messages: a turn needs at least one message",
    );
  });
});

describe("forEachPostedPart", () => {
  it("visits each typed part of the content arrays from a message on, with its path", () => {
    const visited: unknown[] = [];
    const posted = [
      { content: [{ type: "a" }] },
      { role: "r", content: [{ type: "b" }, { type: 1 }, null, "x", { type: "c" }] },
      { content: "text" },
      "not a message",
      null,
      { content: [{ type: "d" }] },
    ];
    forEachPostedPart(posted, "messages", 1, (part, at, message) => {
      visited.push([part.type, at, message.role]);
    });
    expect(visited).toEqual([
      ["b", ["messages", 1, "content", 0], "r"],
      ["c", ["messages", 1, "content", 4], "r"],
      ["d", ["messages", 5, "content", 0], undefined],
    ]);
    forEachPostedPart({ content: [{ type: "a" }] }, "messages", 0, () => {
      throw new Error("no part of a non-array is visited");
    });
  });
});

describe("reportLocated", () => {
  const Part = z.strictObject({ type: z.literal("text"), text: z.string() });
  const Content = z.union([z.string(), z.array(Part)]);
  const Message = z.strictObject({ role: z.literal("user"), content: Content });
  const Located = z.unknown().transform((value, ctx) => {
    const result = z.array(Message).safeParse(value);
    if (result.success) return result.data;
    reportLocated(ctx, result.error.issues, ["at"], value);
    return z.NEVER;
  });
  const issues = (value: unknown) =>
    Located.safeParse(value, { reportInput: true }).error?.issues.map(
      ({ code, path, message, input }) => ({ code, path, message, input }),
    );

  it("locates the issues of the one union branch that took the value, as custom issues", () => {
    const posted = [{ role: "user", content: [{ type: "text", text: "a" }, { type: "x" }] }];
    expect(issues(posted)).toEqual([
      {
        code: "custom",
        path: ["at", 0, "content", 1, "type"],
        message: 'Invalid input: expected "text"',
        input: posted,
      },
      {
        code: "custom",
        path: ["at", 0, "content", 1, "text"],
        message: "Invalid input: expected string, received undefined",
        input: posted,
      },
    ]);
  });

  it("keeps a union's own issue when no branch, or every branch, took the value", () => {
    expect(issues([{ role: "user", content: 3 }])?.map((issue) => issue.path)).toEqual([
      ["at", 0, "content"],
    ]);
    const Either = z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]);
    const Both = z.unknown().transform((value, ctx) => {
      const result = Either.safeParse(value);
      if (result.success) return result.data;
      reportLocated(ctx, result.error.issues, [], value);
      return z.NEVER;
    });
    expect(Both.safeParse({}).error?.issues.map((issue) => issue.path)).toEqual([[]]);
    // A branch that took the value may report a root issue too (an unknown key) besides deeper ones.
    const Strict = z.union([z.string(), z.strictObject({ a: z.string() })]);
    const Taken = z.unknown().transform((value, ctx) => {
      const result = Strict.safeParse(value);
      if (result.success) return result.data;
      reportLocated(ctx, result.error.issues, ["m"], value);
      return z.NEVER;
    });
    expect(Taken.safeParse({ a: 1, b: 2 }).error?.issues.map((issue) => issue.path)).toEqual([
      ["m", "a"],
      ["m"],
    ]);
  });
});

describe("roleError", () => {
  it("words a wrong role, and a message that is not an object", () => {
    const error = roleError("wrong role", "not an object");
    expect([{ role: "x" }, [], "m", null].map((input) => error({ input }))).toEqual([
      "wrong role",
      "not an object",
      "not an object",
      "not an object",
    ]);
  });
});

describe("joinedText", () => {
  it("is a string as it is, else its text parts joined by newlines", () => {
    expect(joinedText("as is")).toBe("as is");
    const parts = [
      { type: "text", text: "a" },
      { type: "image" },
      { type: "output_text", text: "b" },
      { type: "text", text: "c" },
    ];
    expect(joinedText(parts)).toBe("a\nc");
    expect(joinedText(parts, ["output_text"])).toBe("b");
    expect(joinedText([])).toBe("");
  });
});

describe("isPlainText", () => {
  it("is a text part with nothing but its text", () => {
    const parts = [
      { type: "text", text: "a" },
      { type: "text", text: "a", cache_control: null },
      { type: "image", image: "a" },
    ];
    expect(parts.map(isPlainText)).toEqual([true, false, false]);
  });
});

describe("without and extrasOf", () => {
  it("keep the other fields as own properties, __proto__ as data", () => {
    const posted = JSON.parse('{"role":"user","__proto__":{"a":1},"tag":2}');
    const rest = without(posted, ["role"]);
    expect(Object.keys(rest)).toEqual(["__proto__", "tag"]);
    expect(JSON.stringify(rest)).toBe('{"__proto__":{"a":1},"tag":2}');
    expect(without(posted, ["role", "__proto__", "tag"])).toEqual({});
  });

  it("store extras only when at least `least` fields are left", () => {
    const block = { type: "text", text: "a", cache_control: null };
    expect(extrasOf(block, ["text", "cache_control"])).toEqual({ type: "text" });
    expect(extrasOf(block, ["type", "text", "cache_control"])).toBeUndefined();
    expect(extrasOf(block, ["text", "cache_control"], 2)).toBeUndefined();
    expect(extrasOf(block, ["text"], 2)).toEqual({ type: "text", cache_control: null });
  });
});

describe("formatMetadata", () => {
  const meta = formatMetadata<{ item?: Record<string, unknown> }>("fmt");
  const event = (): ChatRequest => ({ type: "chat_request", timestamp: "t", content: "c" });

  it("writes metadata under the format's name, unless it holds nothing", () => {
    expect(meta.write(event(), { item: { id: "x" } })).toEqual({
      ...event(),
      metadata: { fmt: { item: { id: "x" } } },
    });
    expect(meta.write(event(), {})).toEqual(event());
    expect(meta.write(event(), undefined)).toEqual(event());
    expect("metadata" in meta.write(event(), {})).toBe(false);
  });

  it("reads back the format's own object only, and none once the event is rewritten", () => {
    const stored = { ...event(), metadata: { fmt: { item: {} }, other: { a: 1 } } };
    expect(meta.read(stored)).toEqual({ item: {} });
    expect(meta.read({ ...event(), metadata: { fmt: [1] } })).toBeUndefined();
    expect(meta.read({ ...event(), metadata: { fmt: "x" } })).toBeUndefined();
    expect(meta.read(event())).toBeUndefined();
    expect(meta.stored({ event: stored, rewritten: false })).toEqual({ item: {} });
    expect(meta.stored({ event: stored, rewritten: true })).toBeUndefined();
  });
});

describe("valid and fits", () => {
  const Text = z.object({ text: z.string() });

  it("answer what the schema takes, and whether it still spells the expected text", () => {
    expect(valid(Text, { text: "a" })).toEqual({ text: "a" });
    expect(valid(Text, { text: 1 })).toBeUndefined();
    const text = (value: { text: string }) => value.text;
    expect(fits(Text, { text: "a" }, text, "a")).toBe(true);
    expect(fits(Text, { text: "a" }, text, "b")).toBe(false);
    expect(fits(Text, { text: 1 }, text, "1")).toBe(false);
  });
});
