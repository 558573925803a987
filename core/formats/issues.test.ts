import { describe, expect, it } from "vitest";
import * as z from "zod";
import { AutocompactError, InvalidInputError, UnprocessableError } from "../errors.ts";
import { describePath, invalidMessage, parseMessages, unsupportedMessage } from "./issues.ts";

/** The error `run` throws. */
function thrown(run: () => unknown): AutocompactError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AutocompactError);
    return error as AutocompactError;
  }
  throw new Error("expected an error");
}

describe("describePath", () => {
  it("writes the field, then indexes in brackets and keys after dots", () => {
    expect(describePath(["messages", 3, "content", 1, "type"])).toBe("messages[3].content[1].type");
    expect(describePath(["input", 0])).toBe("input[0]");
    expect(describePath(["messages", 0, 1, "a", "b"])).toBe("messages[0][1].a.b");
  });

  it("writes a lone field bare and an empty path as nothing", () => {
    expect(describePath(["messages"])).toBe("messages");
    expect(describePath([])).toBe("");
  });

  it("puts no dot before a leading key, and brackets a leading index", () => {
    expect(describePath(["a", "b"])).toBe("a.b");
    expect(describePath([0, "a"])).toBe("[0].a");
    expect(describePath([2])).toBe("[2]");
  });

  it("writes keys verbatim, symbols by their description", () => {
    expect(describePath(["messages", 0, "a.b", ""])).toBe("messages[0].a.b.");
    expect(describePath(["messages", Symbol("s")])).toBe("messages.Symbol(s)");
    expect(describePath([Symbol("s"), "k"])).toBe("Symbol(s).k");
    // A numeric string is a key, not an index.
    expect(describePath(["messages", "0"])).toBe("messages.0");
  });
});

describe("invalidMessage", () => {
  it("is a 400 invalid-messages error whose detail starts with the path, with one located issue", () => {
    const error = invalidMessage(["messages", 3, "content", 1], "expected a string");
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toBe("messages[3].content[1]: expected a string");
    expect(error.status).toBe(400);
    expect(error.type).toBe("/problems/invalid-messages");
    expect(error.title).toBe("Invalid provider messages");
    expect(error.issues).toEqual([
      { pointer: "/messages/3/content/1", detail: "expected a string" },
    ]);
    expect(error.problemExtensions()).toEqual({
      errors: [{ pointer: "/messages/3/content/1", detail: "expected a string" }],
    });
  });

  it("escapes the pointer and locates the field itself", () => {
    expect(invalidMessage(["input", 0, "a/b~c"], "bad").issues).toEqual([
      { pointer: "/input/0/a~1b~0c", detail: "bad" },
    ]);
    const whole = invalidMessage(["messages"], "needs at least one message");
    expect(whole.message).toBe("messages: needs at least one message");
    expect(whole.issues).toEqual([{ pointer: "/messages", detail: "needs at least one message" }]);
  });
});

describe("unsupportedMessage", () => {
  it("is a 422 unsupported-message error whose detail starts with the path", () => {
    const error = unsupportedMessage(["messages", 0], "a system message is not taken in a turn");
    expect(error).toBeInstanceOf(UnprocessableError);
    expect(error).not.toBeInstanceOf(InvalidInputError);
    expect(error.message).toBe("messages[0]: a system message is not taken in a turn");
    expect(error.status).toBe(422);
    expect(error.type).toBe("/problems/unsupported-message");
    expect(error.title).toBe("Message not supported");
    expect(error.problemExtensions()).toEqual({});
  });

  it("names paths in the input field too", () => {
    expect(unsupportedMessage(["input", 2, "content", 0], "no").message).toBe(
      "input[2].content[0]: no",
    );
  });
});

describe("parseMessages", () => {
  const schema = z.array(
    z.object({
      role: z.string({ error: "needs a role" }),
      n: z.number().default(7),
    }),
    { error: "expected an array" },
  );

  it("answers the parsed value", () => {
    expect(parseMessages(schema, [{ role: "user" }], "messages")).toEqual([{ role: "user", n: 7 }]);
    expect(parseMessages(z.unknown(), undefined, "input")).toBeUndefined();
  });

  it("lists every issue, each located under the field, in one 400", () => {
    const error = thrown(() =>
      parseMessages(schema, [{ role: 1 }, { role: "user" }, {}], "messages"),
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.status).toBe(400);
    expect(error.type).toBe("/problems/invalid-messages");
    expect(error.title).toBe("Invalid provider messages");
    expect(error.message).toBe("messages[0].role: needs a role; messages[2].role: needs a role");
    expect((error as InvalidInputError).issues).toEqual([
      { pointer: "/messages/0/role", detail: "messages[0].role: needs a role" },
      { pointer: "/messages/2/role", detail: "messages[2].role: needs a role" },
    ]);
  });

  it("locates a problem with the whole array at the field", () => {
    const error = thrown(() => parseMessages(schema, "hello", "input")) as InvalidInputError;
    expect(error.message).toBe("input: expected an array");
    expect(error.issues).toEqual([{ pointer: "/input", detail: "input: expected an array" }]);
  });

  it("escapes keys in pointers and writes them verbatim in details", () => {
    const keyed = z.array(z.object({ "a/b~c": z.string({ error: "missing" }) }));
    const error = thrown(() => parseMessages(keyed, [{}], "messages")) as InvalidInputError;
    expect(error.issues).toEqual([
      { pointer: "/messages/0/a~1b~0c", detail: "messages[0].a/b~c: missing" },
    ]);
  });

  it("lists the first hundred issues in the detail and counts the rest", () => {
    const value = Array.from({ length: 102 }, () => ({}));
    const error = thrown(() => parseMessages(schema, value, "messages")) as InvalidInputError;
    expect(error.issues).toHaveLength(102);
    expect(error.message.endsWith("messages[99].role: needs a role (and 2 more)")).toBe(true);
    expect(error.problemExtensions()).toMatchObject({ errors_omitted: 2 });
  });
});
