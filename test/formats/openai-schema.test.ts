/**
 * The OpenAI schema validator is real: OpenAI's published definitions
 * (test/fixtures/openai/, extracted by scripts/openai-schemas.ts) accept
 * well-formed Chat Completions messages and reject malformed ones, and the
 * extraction does what it says on a small hand-written OpenAPI document.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DIALECT, extractSchema, openapiVersion, type Root } from "../../scripts/openai-schemas.ts";
import { openaiChatMessageErrors } from "../helpers/openai-schema.ts";

const toolCall = {
  id: "call_1",
  type: "function",
  function: { name: "fs_read_file", arguments: '{"path":"app.log"}' },
};

describe("openaiChatMessageErrors: valid by OpenAI's schema", () => {
  it.each([
    ["a user message with string content", [{ role: "user", content: "hello" }]],
    [
      "a system and a developer message",
      [
        { role: "system", content: "You are terse." },
        { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
        { role: "user", content: "hi", name: "ann" },
      ],
    ],
    [
      "user content parts with text and image_url (https and data URLs)",
      [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in these?" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
      ],
    ],
    [
      "an assistant message with tool_calls and null content, then the tool message",
      [
        { role: "user", content: "read the log" },
        { role: "assistant", content: null, tool_calls: [toolCall] },
        { role: "tool", tool_call_id: "call_1", content: "INFO ok" },
        { role: "assistant", content: "The log says ok." },
      ],
    ],
    [
      "a tool message with text parts",
      [{ role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "INFO ok" }] }],
    ],
  ])("%s", (_name, messages) => {
    expect(openaiChatMessageErrors(messages)).toEqual([]);
  });
});

describe("openaiChatMessageErrors: invalid by OpenAI's schema", () => {
  it("a tool message without tool_call_id", () => {
    expect(openaiChatMessageErrors([{ role: "tool", content: "INFO ok" }])).toContain(
      "/0 must have required property 'tool_call_id'",
    );
  });

  it("an assistant tool call whose arguments are not a string", () => {
    const call = { ...toolCall, function: { name: "fs_read_file", arguments: { path: "a" } } };
    expect(
      openaiChatMessageErrors([{ role: "assistant", content: null, tool_calls: [call] }]),
    ).toContain("/0/tool_calls/0/function/arguments must be string");
  });

  it("an unknown role", () => {
    expect(openaiChatMessageErrors([{ role: "robot", content: "beep" }])).toEqual([
      '/0 value of tag "role" must be in oneOf (got "robot")',
    ]);
  });

  it("user content that is a number", () => {
    const errors = openaiChatMessageErrors([{ role: "user", content: 42 }]);
    expect(errors).toContain("/0/content must be string");
    expect(errors).toContain("/0/content must be array");
  });

  it("an empty array, a non-array, a message that is not an object", () => {
    expect(openaiChatMessageErrors([])).toEqual(["(root) must NOT have fewer than 1 items"]);
    expect(openaiChatMessageErrors({ role: "user", content: "hi" })).toEqual([
      "(root) must be array",
    ]);
    expect(openaiChatMessageErrors(["hi"])).not.toEqual([]);
  });

  it("an image detail outside its enum", () => {
    const part = { type: "image_url", image_url: { url: "https://x.io/a.png", detail: "ultra" } };
    expect(openaiChatMessageErrors([{ role: "user", content: [part] }])).toContain(
      '/0/content/0/image_url/detail must be equal to one of the allowed values (["auto","low","high"])',
    );
  });

  it("a tool call without id, an image part without url, a system message with an image", () => {
    const { id: _id, ...noId } = toolCall;
    expect(
      openaiChatMessageErrors([{ role: "assistant", content: null, tool_calls: [noId] }]),
    ).toContain("/0/tool_calls/0 must have required property 'id'");
    expect(
      openaiChatMessageErrors([{ role: "user", content: [{ type: "image_url", image_url: {} }] }]),
    ).toContain("/0/content/0/image_url must have required property 'url'");
    expect(
      openaiChatMessageErrors([
        { role: "system", content: [{ type: "image_url", image_url: { url: "https://x.io/a" } }] },
      ]),
    ).not.toEqual([]);
  });
});

describe("the committed fixture", () => {
  const fixture = JSON.parse(
    readFileSync(new URL("../fixtures/openai/chat-messages.schema.json", import.meta.url), "utf8"),
  ) as Record<string, unknown>;

  it("is OpenAI's messages array, generated from a recorded openai-openapi commit", () => {
    expect(fixture.$schema).toBe(DIALECT);
    expect(fixture.$comment).toMatch(
      /^Generated by scripts\/openai-schemas\.ts from openai\/openai-openapi openapi\.json \(commit [0-9a-f]{40}, info\.version [^,]+, OpenAPI 3\.1\.\d+, sha256 [0-9a-f]{64}\): CreateChatCompletionRequest\.messages, array of ChatCompletionRequestMessage,/,
    );
    expect(fixture).toMatchObject({
      type: "array",
      minItems: 1,
      items: { $ref: "#/$defs/ChatCompletionRequestMessage" },
    });
    expect(Object.keys(fixture.$defs as object)).toEqual(
      expect.arrayContaining([
        "ChatCompletionRequestMessage",
        "ChatCompletionRequestDeveloperMessage",
        "ChatCompletionRequestSystemMessage",
        "ChatCompletionRequestUserMessage",
        "ChatCompletionRequestAssistantMessage",
        "ChatCompletionRequestToolMessage",
        "ChatCompletionRequestFunctionMessage",
      ]),
    );
  });

  it("references only its own $defs", () => {
    const refs = JSON.stringify(fixture).match(/"\$ref":"[^"]*"/g) ?? [];
    const defs = fixture.$defs as Record<string, unknown>;
    for (const ref of refs) {
      expect(ref).toMatch(/^"\$ref":"#\/\$defs\/[^/"]+"$/);
      expect(defs).toHaveProperty([ref.slice('"$ref":"#/$defs/'.length, -1)]);
    }
  });
});

/** A tiny OpenAPI 3.1 document with each construct the extraction translates. */
const TINY = {
  openapi: "3.1.0",
  info: { title: "tiny", version: "9.9.9" },
  paths: {},
  components: {
    schemas: {
      CreateThingRequest: {
        allOf: [
          { $ref: "#/components/schemas/Base" },
          {
            type: "object",
            properties: {
              messages: {
                type: "array",
                description: "The messages.",
                minItems: 1,
                "x-oaiExpandable": true,
                items: { $ref: "#/components/schemas/Msg" },
              },
            },
            required: ["messages"],
          },
        ],
      },
      Base: { type: "object", properties: { model: { type: "string" } } },
      Unused: { type: "string" },
      Msg: {
        oneOf: [{ $ref: "#/components/schemas/A" }, { $ref: "#/components/schemas/B" }],
        discriminator: { propertyName: "role" },
      },
      A: {
        type: "object",
        properties: {
          role: { type: "string", enum: ["a"], "x-stainless-const": true },
          count: { type: "integer", minimum: 0, exclusiveMinimum: true },
          note: { type: "string", nullable: true, example: "hi" },
          "x-meta": { type: "string" },
          nullable: { type: "boolean" },
          discriminator: { type: "string" },
        },
        required: ["role", "role"],
      },
      B: {
        type: "object",
        properties: {
          role: { const: "b" },
          tree: { $ref: "#/components/schemas/Tree" },
          when: { anyOf: [{ type: "integer" }, { type: "string" }], nullable: true },
          level: { type: "string", enum: ["low", "high"], nullable: true },
        },
        required: ["role"],
        min_items: 1,
      },
      Tree: {
        $recursiveAnchor: true,
        type: "object",
        properties: {
          kids: {
            type: "array",
            items: {
              oneOf: [{ $ref: "#/components/schemas/Leaf" }, { $recursiveRef: "#" }],
              discriminator: { propertyName: "kind" },
            },
          },
        },
      },
      Leaf: {
        type: "object",
        properties: { kind: { type: "string", enum: ["leaf"] } },
        required: ["kind"],
      },
    },
  },
};

const TINY_ROOT: Root = {
  file: "things.schema.json",
  title: "Things",
  container: { schema: "CreateThingRequest", property: "messages" },
  element: "Msg",
};

describe("extractSchema (scripts/openai-schemas.ts)", () => {
  it("gives the closure of the element's $refs as a self-contained 2020-12 schema", () => {
    expect(extractSchema(TINY, TINY_ROOT, { commit: "abc123", sha256: "00ff" })).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $comment:
        "Generated by scripts/openai-schemas.ts from openai/openai-openapi openapi.json " +
        "(commit abc123, info.version 9.9.9, OpenAPI 3.1.0, sha256 00ff): " +
        "CreateThingRequest.messages, array of Msg, and every schema it references. " +
        "Do not edit; regenerate. " +
        "Dropped keywords: discriminator (not usable by ajv) ×1, example ×1, min_items ×1, x-* ×2. " +
        'Added type "object" beside 1 discriminator(s).',
      title: "Things",
      description: "The messages.",
      type: "array",
      minItems: 1,
      items: { $ref: "#/$defs/Msg" },
      $defs: {
        A: {
          type: "object",
          properties: {
            role: { type: "string", enum: ["a"] },
            count: { type: "integer", exclusiveMinimum: 0 },
            note: { type: ["string", "null"] },
            "x-meta": { type: "string" },
            nullable: { type: "boolean" },
            discriminator: { type: "string" },
          },
          required: ["role"],
        },
        B: {
          type: "object",
          properties: {
            role: { const: "b" },
            tree: { $ref: "#/$defs/Tree" },
            when: {
              anyOf: [{ anyOf: [{ type: "integer" }, { type: "string" }] }, { type: "null" }],
            },
            level: { type: ["string", "null"], enum: ["low", "high", null] },
          },
          required: ["role"],
        },
        Leaf: {
          type: "object",
          properties: { kind: { type: "string", enum: ["leaf"] } },
          required: ["kind"],
        },
        Msg: {
          type: "object",
          oneOf: [{ $ref: "#/$defs/A" }, { $ref: "#/$defs/B" }],
          discriminator: { propertyName: "role" },
        },
        Tree: {
          type: "object",
          properties: {
            kids: {
              type: "array",
              items: { oneOf: [{ $ref: "#/$defs/Leaf" }, { $ref: "#/$defs/Tree" }] },
            },
          },
        },
      },
    });
  });

  it("lists $defs in name order and says when the commit is unknown", () => {
    const schema = extractSchema(TINY, TINY_ROOT);
    expect(Object.keys(schema.$defs as object)).toEqual(["A", "B", "Leaf", "Msg", "Tree"]);
    expect(schema.$comment).toContain("(commit unknown, info.version 9.9.9, OpenAPI 3.1.0):");
  });

  it("refuses what it cannot translate", () => {
    expect(() => openapiVersion({ swagger: "2.0" })).toThrow(/unsupported OpenAPI version/);
    expect(() => openapiVersion({ openapi: "3.0.3" })).not.toThrow();
    expect(() => extractSchema(TINY, { ...TINY_ROOT, element: "Leaf" })).toThrow(
      "CreateThingRequest.messages holds no array of Leaf",
    );
    expect(() => extractSchema(TINY, { ...TINY_ROOT, element: "Nope" })).toThrow(
      "no schema Nope in the document",
    );
    const external = structuredClone(TINY);
    external.components.schemas.Leaf.properties.kind = { $ref: "other.json#/Kind" } as never;
    expect(() => extractSchema(external, TINY_ROOT)).toThrow(
      /unsupported \$ref other\.json#\/Kind/,
    );
  });
});
