import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { propertyRuns } from "../test/helpers/property.ts";
import {
  describeJsonTextIssue,
  jsonTextIssues,
  lossyBodyError,
  numberProblem,
} from "./json-text.ts";

describe("jsonTextIssues", () => {
  it("finds a duplicate key at its object, whatever the nesting", () => {
    expect(jsonTextIssues('{"a":1,"b":{"c":[{"d":0,"d":1}]},"a":2}')).toEqual([
      { problem: "duplicate-key", path: ["b", "c", 0, "d"], token: "d" },
      { problem: "duplicate-key", path: ["a"], token: "a" },
    ]);
  });

  it("compares keys as JSON reads them: escapes are decoded", () => {
    expect(jsonTextIssues('{"a":1,"\\u0061":2}')).toEqual([
      { problem: "duplicate-key", path: ["a"], token: "a" },
    ]);
    expect(jsonTextIssues('{"a\\"":1,"a\\\\":2,"x":"\\\\"}')).toEqual([]);
  });

  it("takes the same key in sibling objects and array items as distinct", () => {
    expect(jsonTextIssues('[{"a":1},{"a":1}]')).toEqual([]);
    expect(jsonTextIssues('{"x":{"a":1},"y":{"a":1}}')).toEqual([]);
  });

  it("never reads keys or numbers inside strings", () => {
    expect(jsonTextIssues('{"s":"{\\"a\\":1,\\"a\\":1e999}","t":"12345678901234567890"}')).toEqual(
      [],
    );
  });

  it("finds numbers a 64-bit float does not hold, with their array index", () => {
    expect(jsonTextIssues('{"n":[1, 1e999, -1E400, 12345678901234567890, 1e-400]}')).toEqual([
      { problem: "non-finite", path: ["n", 1], token: "1e999" },
      { problem: "non-finite", path: ["n", 2], token: "-1E400" },
      { problem: "inexact", path: ["n", 3], token: "12345678901234567890" },
      { problem: "inexact", path: ["n", 4], token: "1e-400" },
    ]);
  });

  it("locates a number at the root or as a key's value after literals", () => {
    expect(jsonTextIssues("1e999")).toEqual([{ problem: "non-finite", path: [], token: "1e999" }]);
    expect(jsonTextIssues('{"t":true,"f":false,"z":null,"n":9007199254740993}')).toEqual([
      { problem: "inexact", path: ["n"], token: "9007199254740993" },
    ]);
  });

  it("holds a property: every double's own JSON text is exact", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(jsonTextIssues(JSON.stringify([value]))).toEqual([]);
      }),
      propertyRuns(200),
    );
  });

  it("holds a property: an integer is inexact exactly when the float's text reads back as another integer", () => {
    // The reference: the float's shortest text read back as an integer with BigInt arithmetic.
    const readBack = (text: string): bigint => {
      const [mantissa = "", exponent = "0"] = text.split("e");
      const [whole = "", fraction = ""] = mantissa.split(".");
      const power = Number(exponent) - fraction.length;
      const digits = BigInt(whole + fraction);
      return power >= 0 ? digits * 10n ** BigInt(power) : digits / 10n ** BigInt(-power);
    };
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (integer) => {
        const kept = readBack(String(Number(integer))) === integer;
        expect(numberProblem(String(integer))).toBe(kept ? undefined : "inexact");
      }),
      propertyRuns(200),
    );
  });

  it("holds a property: the duplicate keys are the ones written twice", () => {
    const entries = fc.array(
      fc.tuple(fc.constantFrom("a", "b", "é", "\u0000", "__proto__"), fc.nat()),
      {
        maxLength: 8,
      },
    );
    fc.assert(
      fc.property(entries, (pairs) => {
        const text = `{${pairs.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`;
        const seen = new Set<string>();
        const expected: string[] = [];
        for (const [key] of pairs) {
          if (seen.has(key)) expected.push(key);
          seen.add(key);
        }
        expect(jsonTextIssues(text).map((issue) => issue.token)).toEqual(expected);
      }),
      propertyRuns(100),
    );
  });
});

describe("jsonTextIssues on the text between tokens", () => {
  it("counts array items by their commas only, whatever the spaces and literals between", () => {
    expect(jsonTextIssues("[true, null ,\n 1e999]")).toEqual([
      { problem: "non-finite", path: [2], token: "1e999" },
    ]);
  });

  it("reads no string value as a key, at the root or in an object", () => {
    expect(jsonTextIssues('"a"')).toEqual([]);
    expect(jsonTextIssues('{"a":"a","b":"a"}')).toEqual([]);
  });
});

describe("jsonTextIssues on number literals", () => {
  it.each([
    ["a fraction of several digits", "[1.5e999]", "1.5e999", "non-finite"],
    ["an exponent with a plus sign", "[1e+400]", "1e+400", "non-finite"],
    ["a leading zero", "[0.1e999]", "0.1e999", "non-finite"],
    [
      "more fraction digits than a float holds",
      "[1.00000000000000000001]",
      "1.00000000000000000001",
      "inexact",
    ],
  ])("reads %s as one number", (_, text, token, problem) => {
    expect(jsonTextIssues(text)).toEqual([{ problem, path: [0], token }]);
  });

  it("locates a number after a closed object by its own key", () => {
    expect(jsonTextIssues('{"a":{"b":1},"c":1e999}')).toEqual([
      { problem: "non-finite", path: ["c"], token: "1e999" },
    ]);
    expect(jsonTextIssues('[[1],{"b":2},1e999]')).toEqual([
      { problem: "non-finite", path: [2], token: "1e999" },
    ]);
  });
});

describe("lossyBodyError", () => {
  it("is the located 400 of a body with issues, each with its JSON pointer", () => {
    const error = lossyBodyError('{"a":[1,{"b":1e999}],"a":2}');
    expect(error?.status).toBe(400);
    expect(error?.message).toBe(
      'the request body would not be kept as sent: a[1].b: 1e999 is beyond a 64-bit float\'s range (JSON readers take it as Infinity or refuse it): send it as a string; a: duplicate key "a": keys must be unique within an object (a JSON reader keeps only one of them)',
    );
    expect(error?.issues).toEqual([
      {
        pointer: "/a/1/b",
        detail:
          "1e999 is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
      },
      {
        pointer: "/a",
        detail:
          'duplicate key "a": keys must be unique within an object (a JSON reader keeps only one of them)',
      },
    ]);
  });

  it("calls a value at the root the body", () => {
    expect(lossyBodyError("1e999")?.message).toBe(
      "the request body would not be kept as sent: the body: 1e999 is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
    );
  });

  it("is undefined for a body JSON.parse keeps as sent", () => {
    expect(lossyBodyError('{"a":[1,2.5,{"b":null}]}')).toBeUndefined();
  });
});

describe("numberProblem", () => {
  it("compares values, not spellings: zeros and exponents written another way", () => {
    for (const literal of ["1.2300e-5", "1.0500", "5e-1", "1e2", "0.00120e1", "120e-2"]) {
      expect(numberProblem(literal)).toBeUndefined();
    }
  });

  it("takes every spelling of a float's own value", () => {
    for (const literal of ["0", "-0", "0.0", "1.0", "1E2", "0.1", "0.30000000000000004", "1e308"]) {
      expect(numberProblem(literal)).toBeUndefined();
    }
    expect(numberProblem("100000000000000000000")).toBeUndefined();
    // 1e21 is the first power of ten a float's shortest text writes with an exponent.
    expect(numberProblem("1000000000000000000000")).toBeUndefined();
    expect(numberProblem("9007199254740992")).toBeUndefined();
  });

  it("refuses more digits than a float holds, overflow and underflow", () => {
    expect(numberProblem("9007199254740993")).toBe("inexact");
    expect(numberProblem("3.141592653589793238462643383279")).toBe("inexact");
    expect(numberProblem("2e-324")).toBe("inexact");
    expect(numberProblem("1.8e308")).toBe("non-finite");
  });
});

describe("describeJsonTextIssue", () => {
  it("says what is wrong and what to send instead", () => {
    expect(describeJsonTextIssue({ problem: "duplicate-key", path: ["a"], token: "a" })).toBe(
      'duplicate key "a": keys must be unique within an object (a JSON reader keeps only one of them)',
    );
    expect(describeJsonTextIssue({ problem: "non-finite", path: [], token: "1e999" })).toBe(
      "1e999 is beyond a 64-bit float's range (JSON readers take it as Infinity or refuse it): send it as a string",
    );
    expect(
      describeJsonTextIssue({ problem: "inexact", path: [], token: "12345678901234567890" }),
    ).toBe(
      "12345678901234567890 has more digits than a 64-bit float holds, so it would read back as another number: send it as a string",
    );
  });
});
