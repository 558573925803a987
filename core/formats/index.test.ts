import { describe, expect, it } from "vitest";
import { AutocompactError, InvalidInputError } from "../errors.ts";
import { aiSdk } from "./ai-sdk.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import { FORMAT_NAMES, PROVIDER_FORMATS, providerFormat } from "./index.ts";
import { openaiChat } from "./openai-chat.ts";
import { openaiResponses } from "./openai-responses.ts";

/** The error `providerFormat(name)` throws. */
function refusal(name: string): InvalidInputError {
  try {
    providerFormat(name);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error(`expected format "${name}" to be refused`);
}

describe("PROVIDER_FORMATS", () => {
  it("holds each provider format under its own wire name", () => {
    expect(PROVIDER_FORMATS).toEqual({
      "openai-chat": openaiChat,
      "openai-responses": openaiResponses,
      "anthropic-messages": anthropicMessages,
      "ai-sdk": aiSdk,
    });
    for (const [name, format] of Object.entries(PROVIDER_FORMATS)) expect(format.name).toBe(name);
  });

  it("names JP events first, then every provider format", () => {
    expect(FORMAT_NAMES).toEqual([
      "jp",
      "openai-chat",
      "openai-responses",
      "anthropic-messages",
      "ai-sdk",
    ]);
  });
});

describe("providerFormat", () => {
  it("answers each provider format by its name", () => {
    expect(providerFormat("openai-chat")).toBe(openaiChat);
    expect(providerFormat("anthropic-messages")).toBe(anthropicMessages);
    expect(providerFormat("openai-responses")).toBe(openaiResponses);
    expect(providerFormat("ai-sdk")).toBe(aiSdk);
  });

  it("refuses an unknown name with a 400 that lists the known ones", () => {
    const error = refusal("gemini");
    expect(error).toBeInstanceOf(AutocompactError);
    expect(error.message).toBe(
      'unknown format "gemini": use one of jp, openai-chat, openai-responses, anthropic-messages, ai-sdk',
    );
    expect(error.status).toBe(400);
    expect(error.type).toBe("/problems/invalid-messages");
    expect(error.title).toBe("Invalid provider messages");
    expect(error.issues).toEqual([]);
  });

  it("refuses jp (no provider format) and names differing only in case", () => {
    expect(refusal("jp").message).toBe(
      'unknown format "jp": use one of jp, openai-chat, openai-responses, anthropic-messages, ai-sdk',
    );
    expect(refusal("OpenAI-Chat").message).toMatch(/^unknown format "OpenAI-Chat": /);
    expect(refusal("").message).toMatch(/^unknown format "": /);
  });

  it("refuses the names of inherited object properties", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      expect(refusal(name).message).toMatch(new RegExp(`^unknown format "${name}": `));
    }
  });
});
