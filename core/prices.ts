/**
 * The dated price table `autocompact tune` bills with when `--prices` is not
 * given, and the pricing profiles (a provider's cache rules). Prices are USD
 * per million tokens, base input (uncached) and output, as the providers'
 * public pricing pages stated them on the day in `read`; nothing here is
 * fetched, so a price that has moved since is wrong until this table is
 * edited. docs/tuning.md states the billing model they feed.
 */
import { InvalidInputError } from "./errors.ts";

/** One model's prices, where they come from, and when they were read. */
export interface PriceEntry {
  /** The model id, as the catalog spells it (a dated snapshot matches its base id). */
  readonly id: string;
  /** USD per million uncached input tokens. */
  readonly input: number;
  /** USD per million output tokens. */
  readonly output: number;
  /** The page the prices were read from. */
  readonly source: string;
  /** The month they were read (YYYY-MM). */
  readonly read: string;
}

const ANTHROPIC = "https://docs.anthropic.com/en/docs/about-claude/pricing (base input, output)";
const OPENAI = "https://openai.com/api/pricing/ (input, output; Standard tier)";
const READ = "2025-11";

const entry = (id: string, input: number, output: number, source: string): PriceEntry => ({
  id,
  input,
  output,
  source,
  read: READ,
});

/** The bundled price table; the first entry is the default for a model it does not list. */
export const PRICE_TABLE: readonly PriceEntry[] = Object.freeze([
  entry("claude-sonnet-4-5", 3, 15, ANTHROPIC),
  entry("claude-sonnet-4", 3, 15, ANTHROPIC),
  entry("claude-3-7-sonnet", 3, 15, ANTHROPIC),
  entry("claude-opus-4-5", 5, 25, ANTHROPIC),
  entry("claude-opus-4-1", 15, 75, ANTHROPIC),
  entry("claude-opus-4", 15, 75, ANTHROPIC),
  entry("claude-haiku-4-5", 1, 5, ANTHROPIC),
  entry("claude-3-5-haiku", 0.8, 4, ANTHROPIC),
  entry("gpt-5", 1.25, 10, OPENAI),
  entry("gpt-5.1", 1.25, 10, OPENAI),
  entry("gpt-5-mini", 0.25, 2, OPENAI),
  entry("gpt-5-nano", 0.05, 0.4, OPENAI),
  entry("gpt-4.1", 2, 8, OPENAI),
  entry("gpt-4.1-mini", 0.4, 1.6, OPENAI),
  entry("gpt-4o", 2.5, 10, OPENAI),
  entry("gpt-4o-mini", 0.15, 0.6, OPENAI),
]);

/** The prices one replay bills with, USD per million tokens. */
export interface Prices {
  readonly input: number;
  readonly output: number;
  /** The summarizer's input and output (a summary rule's band). */
  readonly summary_input: number;
  readonly summary_output: number;
  /** Where they come from: `--prices`, or a table entry's id, source and date. */
  readonly source: string;
}

/** The entry of `model`, or of the longest base id a dated snapshot extends (`gpt-5-mini-…` is `gpt-5-mini`, not `gpt-5`). */
function tableEntry(model: string): PriceEntry | undefined {
  // An exact entry stays: every base id the loop can find is shorter.
  let found = PRICE_TABLE.find((p) => p.id === model);
  for (const p of PRICE_TABLE) {
    // Stryker disable next-line EqualityOperator: two base ids of one length that both prefix `model` are one id, and the table's ids are distinct, so > and >= agree.
    if (model.startsWith(`${p.id}-`) && p.id.length > (found?.id.length ?? 0)) found = p;
  }
  return found;
}

/**
 * The table's prices for `model` (its entry, or a dated snapshot's base id's;
 * the table's first entry when it lists neither), the summarizer at the same prices.
 */
export function tablePrices(model: string | undefined): Prices {
  const found = model === undefined ? undefined : tableEntry(model);
  const chosen = found ?? (PRICE_TABLE[0] as PriceEntry);
  const note = found || model === undefined ? "" : ` (${model} is not in the table)`;
  return {
    input: chosen.input,
    output: chosen.output,
    summary_input: chosen.input,
    summary_output: chosen.output,
    source: `${chosen.id} as read ${chosen.read} from ${chosen.source}${note}`,
  };
}

/** A provider's prompt cache, as a multiple of the base input price. */
export interface PricingProfile {
  readonly name: PricingName;
  /** An uncached input token's price: the cache write. */
  readonly write: number;
  /** A cached input token's price. */
  readonly read: number;
  /** Seconds a cached prefix lives after it was last written or read. */
  readonly lifetime_s: number;
  /** The shortest prefix the provider caches, in tokens. */
  readonly min_tokens: number;
}

/** The profiles `--pricing` names. */
export const PRICING_NAMES = ["anthropic-5m", "anthropic-1h", "openai", "none"] as const;

/** A name of {@link PRICING_NAMES}. */
export type PricingName = (typeof PRICING_NAMES)[number];

/**
 * The pricing profiles: Anthropic's two cache durations (a write costs 1.25x
 * or 2x, a read 0.1x) and OpenAI's automatic cache (no write premium; the
 * lifetime is the 5–10 minutes its guide states, taken at 10), from the
 * pages of {@link PRICE_TABLE}; `none` caches nothing.
 */
export const PRICING_PROFILES: Readonly<Record<PricingName, PricingProfile>> = Object.freeze({
  "anthropic-5m": {
    name: "anthropic-5m",
    write: 1.25,
    read: 0.1,
    lifetime_s: 300,
    min_tokens: 1024,
  },
  "anthropic-1h": { name: "anthropic-1h", write: 2, read: 0.1, lifetime_s: 3600, min_tokens: 1024 },
  openai: { name: "openai", write: 1, read: 0.1, lifetime_s: 600, min_tokens: 1024 },
  none: { name: "none", write: 1, read: 1, lifetime_s: 0, min_tokens: Number.POSITIVE_INFINITY },
});

/**
 * Parses `--prices input=USD,output=USD[,summary_input=USD,summary_output=USD]`
 * (per million tokens); the summarizer's prices default to the model's.
 */
export function parsePrices(text: string): Prices {
  const given: Record<string, number> = {};
  for (const item of text.split(",")) {
    const [key, value] = item.split("=", 2) as [string, string | undefined];
    const price = Number(value);
    if (
      !["input", "output", "summary_input", "summary_output"].includes(key) ||
      value === undefined ||
      value.trim() === "" ||
      !Number.isFinite(price) ||
      price < 0
    ) {
      throw new InvalidInputError(
        `--prices "${item}": expected input=USD,output=USD[,summary_input=USD,summary_output=USD] (per million tokens, 0 or more)`,
      );
    }
    given[key] = price;
  }
  const { input, output } = given;
  if (input === undefined || output === undefined) {
    throw new InvalidInputError("--prices needs input=USD and output=USD (per million tokens)");
  }
  return {
    input,
    output,
    summary_input: given.summary_input ?? input,
    summary_output: given.summary_output ?? output,
    source: "--prices",
  };
}
