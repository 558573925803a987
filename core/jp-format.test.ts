import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateConversation } from "../test/helpers/conversation.ts";
import { propertyRuns } from "../test/helpers/property.ts";
import { decodeBase64Text, decodeIfJp, decodeJpEntries, encodeJpEntries } from "./jp-format.ts";

/** The format `decodeIfJp` decides on. */
const formatOf = (entries: readonly unknown[]) => decodeIfJp(entries).format;

const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value));

describe("JP's on-disk form", () => {
  it("encodes exactly the fields JP encodes", () => {
    const [request, response, chat] = encodeJpEntries([
      {
        type: "tool_call_request",
        timestamp: "t",
        id: "c1",
        name: "fs",
        arguments: { path: "a.rs", n: 3, list: ["x"], nested: { ok: true } },
        metadata: { rendered_arguments: "p" },
      },
      {
        type: "tool_call_response",
        timestamp: "t",
        id: "c1",
        content: "ABC",
        is_error: false,
        arguments: { path: "a.rs" },
      },
      { type: "chat_request", timestamp: "t", content: "plain", metadata: { k: "v" } },
    ]) as Record<string, unknown>[];
    expect(request).toMatchObject({
      id: "c1",
      name: "fs",
      arguments: { path: "YS5ycw==", n: 3, list: ["eA=="], nested: { ok: true } },
      metadata: { rendered_arguments: "cA==" },
    });
    expect(response).toMatchObject({ id: "c1", content: "QUJD", arguments: { path: "a.rs" } });
    expect(chat).toMatchObject({ content: "plain", metadata: { k: "dg==" } });
  });

  it("detects and decodes an encoded generated conversation back to the original", () => {
    const plain = roundTrip(generateConversation({ seed: 11, turns: 15 }));
    const encoded = encodeJpEntries(plain);
    expect(formatOf(encoded)).toBe("jp");
    expect(formatOf(plain)).toBe("plain");
    expect(decodeJpEntries(encoded)).toEqual(plain);
    expect(decodeIfJp(encoded)).toEqual({ format: "jp", entries: plain });
    expect(decodeIfJp(plain).entries).toBe(plain);
  });

  it("encodes and decodes the metadata of inquiries, which JP counts as conversation events", () => {
    const plain = [
      { type: "inquiry_request", timestamp: "t", id: "q1", metadata: { note: "ok?" } },
      { type: "inquiry_response", timestamp: "t", id: "q1", metadata: { by: "me" } },
    ];
    const encoded = encodeJpEntries(plain);
    expect(encoded).toEqual([
      { type: "inquiry_request", timestamp: "t", id: "q1", metadata: { note: "b2s/" } },
      { type: "inquiry_response", timestamp: "t", id: "q1", metadata: { by: "bWU=" } },
    ]);
    expect(decodeIfJp(encoded)).toEqual({ format: "jp", entries: plain });
  });

  it("accepts the URL-safe alphabet JP used for tool responses before March 2026", () => {
    const content = "a?b>c~"; // standard: YT9iPmN+, URL-safe: YT9iPmN-
    const entries = [
      { type: "tool_call_request", timestamp: "t", id: "1", name: "x", arguments: {} },
      { type: "tool_call_response", timestamp: "t", id: "1", content: "YT9iPmN-", is_error: false },
    ];
    expect(formatOf(entries)).toBe("jp");
    expect((decodeJpEntries(entries)[1] as { content: string }).content).toBe(content);
  });

  it("treats a file with any non-base64 candidate as plain, and never touches compactions or unknown entries", () => {
    expect(
      formatOf([
        {
          type: "tool_call_response",
          timestamp: "t",
          id: "1",
          content: "not base64!",
          is_error: false,
        },
      ]),
    ).toBe("plain");
    const other = [
      {
        type: "compaction",
        timestamp: "t",
        from_turn: 0,
        to_turn: 1,
        summary: { summary: "QUJD" },
      },
      { type: "x", metadata: { a: "QUJD" } },
    ];
    expect(decodeJpEntries(other)).toEqual(other);
    expect(formatOf(other)).toBe("plain");
  });

  it("rejects non-canonical base64 and invalid UTF-8", () => {
    expect(decodeBase64Text("QUJD")).toBe("ABC");
    expect(decodeBase64Text("QUI=")).toBe("AB");
    expect(decodeBase64Text("w6k=")).toBe("é");
    expect(decodeBase64Text("QUJ")).toBeUndefined();
    expect(decodeBase64Text("QR==")).toBeUndefined();
    expect(decodeBase64Text("QUJ=")).toBeUndefined(); // "AB" with non-zero padding bits
    expect(decodeBase64Text("/w==")).toBeUndefined();
    // What atob forgives: whitespace, missing or surplus padding.
    expect(decodeBase64Text("QU D")).toBeUndefined();
    expect(decodeBase64Text("QUI\n")).toBeUndefined();
    expect(decodeBase64Text("QUI==")).toBeUndefined();
    expect(decodeBase64Text("Q===")).toBeUndefined();
    expect(decodeBase64Text("")).toBe("");
  });

  it("drops one leading byte order mark, as a TextDecoder does, and only a whole one", () => {
    // The behaviour since the first decoder (a TextDecoder), kept as it is.
    expect(decodeBase64Text("77u/YQ==")).toBe("a"); // EF BB BF 61
    expect(decodeBase64Text("77u/77u/")).toBe("\ufeff"); // two marks
    expect(decodeBase64Text("74K/")).toBe("\uf0bf"); // EF 82 BF, a private-use character
    expect(decodeBase64Text("77uA")).toBe("\ufec0"); // EF BB 80, an Arabic letter form
    expect(decodeBase64Text("47u/")).toBe("\u3eff"); // E3 BB BF, a CJK ideograph
  });

  it("accepts the URL-safe alphabet only where asked, padded like the standard one", () => {
    expect(decodeBase64Text("Pz8/")).toBe("???");
    expect(decodeBase64Text("Pz8_")).toBeUndefined();
    expect(decodeBase64Text("Pz8_", true)).toBe("???");
    expect(decodeBase64Text("Pz8_Pw==", true)).toBe("????");
    expect(decodeBase64Text("Pz8_Pz8=", true)).toBe("?????");
    expect(decodeBase64Text("Pz8_Pz8", true)).toBeUndefined();
  });

  it("takes the URL-safe alphabet for tool responses only, not for arguments or metadata", () => {
    const response = { type: "tool_call_response", timestamp: "t", id: "1", is_error: false };
    expect(formatOf([{ ...response, content: "Pz8_", metadata: { k: "Pz8/" } }])).toBe("jp");
    expect(formatOf([{ ...response, content: "Pz8/", metadata: { k: "Pz8_" } }])).toBe("plain");
    const request = { type: "tool_call_request", timestamp: "t", id: "1", name: "x" };
    expect(formatOf([{ ...request, arguments: { a: "Pz8/" } }])).toBe("jp");
    expect(formatOf([{ ...request, arguments: { a: "Pz8_" } }])).toBe("plain");
  });

  it("counts only strings as candidates: other values, and entries that are not events, stay as they are", () => {
    const encoded = [
      null,
      7,
      "QUJD",
      ["QUJD"],
      { type: "turn_start", timestamp: "t" },
      {
        type: "tool_call_request",
        timestamp: "t",
        id: "1",
        name: "x",
        arguments: { path: "YS5ycw==", n: 3, ok: true, none: null, list: [null, "eA=="] },
        metadata: { none: null },
      },
      { type: "tool_call_request", timestamp: "t", id: "2", name: "y" },
      { type: "tool_call_response", timestamp: "t", id: "1", content: null, is_error: false },
    ];
    const plain = [
      null,
      7,
      "QUJD",
      ["QUJD"],
      { type: "turn_start", timestamp: "t" },
      {
        type: "tool_call_request",
        timestamp: "t",
        id: "1",
        name: "x",
        arguments: { path: "a.rs", n: 3, ok: true, none: null, list: [null, "x"] },
        metadata: { none: null },
      },
      { type: "tool_call_request", timestamp: "t", id: "2", name: "y" },
      { type: "tool_call_response", timestamp: "t", id: "1", content: null, is_error: false },
    ];
    expect(decodeIfJp(encoded)).toStrictEqual({ format: "jp", entries: plain });
    expect(decodeJpEntries(encoded)).toStrictEqual(plain);
    expect(encodeJpEntries(plain)).toStrictEqual(encoded);
    expect(formatOf(plain.slice(0, 5))).toBe("plain");
  });

  it("reports a failure while reading entries instead of calling the file plain", () => {
    const unreadable = {
      type: "chat_request",
      timestamp: "t",
      content: "x",
      get metadata(): never {
        throw new Error("unreadable metadata");
      },
    };
    expect(() => decodeIfJp([unreadable])).toThrow("unreadable metadata");
  });

  it("decodes exactly the canonical base64 of UTF-8 text, as Node's Buffer reads it (property)", () => {
    const utf8 = new TextDecoder("utf-8", { fatal: true });
    /** The reference: canonical when Buffer's decode encodes back to the same string. */
    const reference = (text: string): string | undefined => {
      const bytes = Buffer.from(text, "base64");
      if (bytes.toString("base64") !== text) return undefined;
      try {
        return utf8.decode(bytes);
      } catch {
        return undefined;
      }
    };
    const symbol = fc.constantFrom(..."AQgw/+9z=- \n_".split(""));
    const nearlyBase64 = fc.oneof(
      fc.string({ unit: symbol, maxLength: 12 }),
      fc.tuple(fc.uint8Array({ maxLength: 9 }), fc.nat(12), symbol).map(([bytes, at, extra]) => {
        const text = Buffer.from(bytes).toString("base64");
        return text.slice(0, at) + extra + text.slice(at);
      }),
      fc.uint8Array({ maxLength: 9 }).map((bytes) => Buffer.from(bytes).toString("base64")),
    );
    fc.assert(
      fc.property(nearlyBase64, (text) => {
        expect(decodeBase64Text(text)).toBe(reference(text));
      }),
      propertyRuns(2_000),
    );
  });

  it("decodes the bytes of any text, near-UTF-8 and byte order marks as a fatal TextDecoder does (property)", () => {
    const utf8 = new TextDecoder("utf-8", { fatal: true });
    const reference = (bytes: Uint8Array): string | undefined => {
      try {
        return utf8.decode(bytes);
      } catch {
        return undefined;
      }
    };
    const encoder = new TextEncoder();
    const text = fc.string({ unit: "binary", maxLength: 12 }).map((value) => encoder.encode(value));
    const awkward = fc.constantFrom(
      [0xef, 0xbb, 0xbf], // byte order mark
      [0xed, 0xa0, 0x80], // a surrogate
      [0xc0, 0x80], // overlong
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
      [0xe3, 0x81], // cut short
      [0x80],
      [0xff],
    );
    /** Text with awkward byte sequences put in, or one of its bytes replaced. */
    const nearText = fc.oneof(
      fc
        .array(
          fc.oneof(
            text,
            awkward.map((bytes) => Uint8Array.from(bytes)),
          ),
          { maxLength: 4 },
        )
        .map((parts) => Uint8Array.from(parts.flatMap((part) => [...part]))),
      fc
        .tuple(text, fc.nat(40), fc.integer({ min: 0, max: 255 }))
        .map(([bytes, at, byte]) => bytes.map((value, i) => (i === at ? byte : value))),
      fc.uint8Array({ maxLength: 16 }),
    );
    fc.assert(
      fc.property(nearText, (bytes) => {
        expect(decodeBase64Text(Buffer.from(bytes).toString("base64"))).toBe(reference(bytes));
      }),
      propertyRuns(2_000),
    );
  });

  it("round-trips any text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        const [encoded] = encodeJpEntries([
          { type: "tool_call_response", timestamp: "t", id: "1", content: text, is_error: false },
        ]);
        expect(decodeBase64Text((encoded as { content: string }).content)).toBe(text);
      }),
    );
  });
});
