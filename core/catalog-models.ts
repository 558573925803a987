/**
 * The models the bundled catalog knows (`core/catalog.ts`), each with where
 * its id comes from, what its window rests on, and the day both were read.
 * Ids are those of the model unions in the SDKs the project pins; a dated
 * snapshot (`gpt-5.1-2025-11-13`, `claude-opus-4-5-20251101`) matches its
 * base id, so snapshots are listed only where their window differs.
 * Neither SDK states windows: each number is the provider's documented
 * window as it could best be established, or an assumption said as such.
 */

/** One model of the bundled catalog. */
export interface CatalogEntry {
  /** The model id, as the SDK's union spells it. */
  readonly id: string;
  /** Its context window, in tokens (input and output together). */
  readonly window: number;
  /** The SDK file and version the id was read from, and what the window rests on. */
  readonly source: string;
  /** The day the source was read (YYYY-MM-DD). */
  readonly read: string;
}

const READ = "2026-12-02";
const OPENAI_CHAT = "openai 6.30.1, resources/shared.d.ts `ChatModel`";
const OPENAI_RESPONSES = "openai 6.30.1, resources/shared.d.ts `ResponsesModel`";
const ANTHROPIC = "@anthropic-ai/sdk 1.14.0, resources/messages/messages.d.ts `Model`";
const OTHER = "not in a pinned SDK: kept from the catalog before issue 27";

/** Entries for `ids`, all from `sdk` with `window` on the ground `basis`. */
function family(
  sdk: string,
  window: number,
  basis: string,
  ids: readonly string[],
): CatalogEntry[] {
  return ids.map((id) => ({ id, window, source: `${sdk}; window: ${basis}`, read: READ }));
}

const GPT5 = "OpenAI's model pages: 400,000 (272,000 input + 128,000 output)";
const CHAT_LATEST = "OpenAI's model pages give the ChatGPT snapshots 128,000";
const ANTHROPIC_1M =
  "1,000,000: Anthropic's context-windows page lists Opus 4.6-4.8, Sonnet 4.6, and the 5 generation (Opus 5, Sonnet 5, Fable and Mythos 5 and 5.1) at 1M";
const ANTHROPIC_200K =
  "200,000: Anthropic's models overview (the standard window; the 1M beta needs a header)";
const ASSUMED_1M =
  "1,000,000 assumed: not on the page read; its predecessors in the 5 generation have 1M";

/** The bundled models, newest families first. */
export const BUNDLED_MODELS: readonly CatalogEntry[] = [
  ...family(
    OPENAI_CHAT,
    1_050_000,
    "OpenAI's model page: 1,050,000 (922,000 input + 128,000 output)",
    ["gpt-5.4"],
  ),
  ...family(OPENAI_CHAT, 400_000, GPT5, [
    "gpt-5.2",
    "gpt-5.2-pro",
    "gpt-5.1",
    "gpt-5.1-codex",
    "gpt-5.1-mini",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
  ]),
  ...family(OPENAI_RESPONSES, 400_000, GPT5, ["gpt-5.1-codex-max", "gpt-5-codex", "gpt-5-pro"]),
  ...family(OPENAI_CHAT, 128_000, CHAT_LATEST, [
    "gpt-5.3-chat-latest",
    "gpt-5.2-chat-latest",
    "gpt-5.1-chat-latest",
    "gpt-5-chat-latest",
  ]),
  ...family(OPENAI_CHAT, 1_047_576, "OpenAI's model pages: 1,047,576", [
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
  ]),
  ...family(OPENAI_CHAT, 200_000, "OpenAI's model pages: 200,000", [
    "o4-mini",
    "o3",
    "o3-mini",
    "o1",
    "codex-mini-latest",
  ]),
  ...family(OPENAI_RESPONSES, 200_000, "OpenAI's model pages: 200,000", [
    "o1-pro",
    "o3-pro",
    "o3-deep-research",
    "o4-mini-deep-research",
  ]),
  ...family(OPENAI_CHAT, 128_000, "OpenAI's model pages: 128,000", [
    "o1-preview",
    "o1-mini",
    "gpt-4o",
    "gpt-4o-mini",
    "chatgpt-4o-latest",
    "gpt-4-turbo",
    "gpt-4-0125-preview",
    "gpt-4-1106-preview",
    "gpt-4-vision-preview",
  ]),
  ...family(OPENAI_CHAT, 8_192, "OpenAI's model pages: 8,192", ["gpt-4"]),
  ...family(OPENAI_CHAT, 32_768, "OpenAI's model pages: 32,768", ["gpt-4-32k"]),
  ...family(OPENAI_CHAT, 16_385, "OpenAI's model pages: 16,385", [
    "gpt-3.5-turbo",
    "gpt-3.5-turbo-16k",
  ]),
  ...family(OPENAI_CHAT, 4_096, "OpenAI's model pages: 4,096 (the 2023 snapshots)", [
    "gpt-3.5-turbo-0301",
    "gpt-3.5-turbo-0613",
  ]),
  ...family(OPENAI_RESPONSES, 8_192, "OpenAI's model page: 8,192", ["computer-use-preview"]),
  ...family(ANTHROPIC, 1_000_000, ANTHROPIC_1M, [
    "claude-fable-5-1",
    "claude-mythos-5-1",
    "claude-sonnet-5",
    "claude-opus-5",
    "claude-fable-5",
    "claude-mythos-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
  ]),
  ...family(
    ANTHROPIC,
    1_000_000,
    "1,000,000: Anthropic's context-windows page as quoted by third-party model tables (Haiku 5.5 at 1M)",
    ["claude-haiku-5-5"],
  ),
  ...family(ANTHROPIC, 1_000_000, ASSUMED_1M, [
    "claude-fable-5-2",
    "claude-mythos-5-2",
    "claude-sonnet-5-5",
    "claude-opus-5-5",
  ]),
  ...family(
    ANTHROPIC,
    200_000,
    "200,000 assumed: not among the 1M models Anthropic's context-windows page lists, whose other models have 200,000",
    ["claude-mythos-preview"],
  ),
  ...family(ANTHROPIC, 200_000, ANTHROPIC_200K, [
    "claude-haiku-4-5",
    "claude-opus-4-5",
    "claude-sonnet-4-5",
  ]),
  ...family(OTHER, 200_000, ANTHROPIC_200K, [
    "claude-opus-4-1",
    "claude-opus-4",
    "claude-sonnet-4",
    "claude-3-7-sonnet",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
  ]),
  ...family(OTHER, 1_048_576, "Google's Gemini model pages: 1,048,576 input tokens", [
    "gemini-2.5-pro",
    "gemini-2.5-flash",
  ]),
  ...family(OTHER, 131_072, "Meta's Llama 3.1 model card: 128K (131,072)", ["llama3.1"]),
  ...family(OTHER, 262_144, "Qwen's Qwen3-Coder model card: 256K (262,144) native", [
    "qwen3-coder",
  ]),
];
