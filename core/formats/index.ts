/**
 * The provider formats the service speaks besides JP events (docs/architecture.md
 * §15): adding a format is adding its module here.
 */
import { InvalidInputError, PROBLEM_VARIANTS } from "../errors.ts";
import { aiSdk } from "./ai-sdk.ts";
import { anthropicMessages } from "./anthropic-messages.ts";
import type { ProviderFormat } from "./format.ts";
import { openaiChat } from "./openai-chat.ts";
import { openaiResponses } from "./openai-responses.ts";

/** Every provider format by its wire name. */
export const PROVIDER_FORMATS = {
  "openai-chat": openaiChat,
  "openai-responses": openaiResponses,
  "anthropic-messages": anthropicMessages,
  "ai-sdk": aiSdk,
} as const satisfies Record<string, ProviderFormat>;

/** A provider format's wire name. */
export type ProviderFormatName = keyof typeof PROVIDER_FORMATS;

/** Every format a view can be read in: JP events (the stored form) and each provider format. */
export const FORMAT_NAMES = ["jp", ...Object.keys(PROVIDER_FORMATS)] as readonly string[];

/** The provider format named `name`, or an {@link InvalidInputError} that lists the known ones. */
export function providerFormat(name: string): ProviderFormat {
  if (Object.hasOwn(PROVIDER_FORMATS, name)) return PROVIDER_FORMATS[name as ProviderFormatName];
  throw new InvalidInputError(
    `unknown format "${name}": use one of ${FORMAT_NAMES.join(", ")}`,
    PROBLEM_VARIANTS.invalidMessages,
  );
}
