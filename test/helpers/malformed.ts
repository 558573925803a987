/**
 * A seeded, deterministic generator of malformed turn posts in a provider
 * format (docs/architecture.md §15): it samples valid turns from the format's
 * arbitraries and applies exactly one mutation to each, from a catalogue of
 * kinds. Every payload carries what the API must answer: the status, the
 * problem type, and a regex for the `detail`, which must start with the path
 * of the offending message as the platform wrote it (`messages[3].content[1]`,
 * `input[3].arguments`)
 * and say what to change. The expectations are written here from §15 and
 * the provider formats' rules, computed from where the mutation was made;
 * nothing is asked of the code under test. Each format's catalogue is in
 * test/helpers/malformed/<format>.ts.
 */
import fc from "fast-check";
import { aiSdkTurnArb } from "./ai-sdk-arbitraries.ts";
import { anthropicTurnArb } from "./anthropic-arbitraries.ts";
import { aiSdkKinds } from "./malformed/ai-sdk.ts";
import { anthropicKinds } from "./malformed/anthropic-messages.ts";
import { type Context, type Json, type Kind, prng } from "./malformed/common.ts";
import { chatKinds } from "./malformed/openai-chat.ts";
import { responsesKinds } from "./malformed/openai-responses.ts";
import { chatTurnArb } from "./openai-chat-arbitraries.ts";
import { responsesTurnArb } from "./openai-responses-arbitraries.ts";

/** The provider formats the generator covers: all four. */
export type MalformedFormat = "openai-chat" | "openai-responses" | "anthropic-messages" | "ai-sdk";

/** One malformed post and the answer it must get. */
export interface MalformedPayload {
  /** `<index> <kind>: <variant>`, for the test's name. */
  readonly name: string;
  readonly kind: string;
  /** The post's body without `turn` (the test posts it as any turn). */
  readonly body: Record<string, unknown>;
  readonly status: 400 | 413 | 422;
  /** The RFC 9457 problem type. */
  readonly type: string;
  /** What the problem's `detail` must match: the path first, then the fix. */
  readonly detail: RegExp;
  /** A bug this kind found (or guards against once fixed): shown when the case fails. */
  readonly bug?: string;
}

/** A format's catalogue, the body field its turn goes in, and where its valid turns come from. */
interface Catalogue {
  readonly kinds: readonly Kind[];
  readonly field: "messages" | "input";
  readonly validTurn: fc.Arbitrary<unknown[]>;
}

const CATALOGUE: Record<MalformedFormat, Catalogue> = {
  "openai-chat": { kinds: chatKinds, field: "messages", validTurn: chatTurnArb },
  "openai-responses": { kinds: responsesKinds, field: "input", validTurn: responsesTurnArb },
  "anthropic-messages": {
    kinds: anthropicKinds,
    field: "messages",
    validTurn: anthropicTurnArb(2),
  },
  "ai-sdk": { kinds: aiSdkKinds, field: "messages", validTurn: aiSdkTurnArb(2) },
};

/** The kinds of a format's catalogue, in order. */
export function malformedKinds(format: MalformedFormat): string[] {
  return CATALOGUE[format].kinds.map((kind) => kind.name);
}

/**
 * `count` malformed posts in `format`, the same for the same `seed`: payload
 * `n` applies kind `n mod K` of the catalogue (so every kind is covered
 * evenly) to the `n`-th valid turn sampled with the seed.
 */
export function malformedPayloads(
  format: MalformedFormat,
  options: { seed: number; count: number; bodyLimitBytes: number; earlierCallId: string },
): MalformedPayload[] {
  const { kinds, field, validTurn } = CATALOGUE[format];
  const valid = fc.sample(validTurn, { seed: options.seed, numRuns: options.count });
  const rng = prng(options.seed);
  const context: Context = {
    bodyLimitBytes: options.bodyLimitBytes,
    earlierCallId: options.earlierCallId,
  };
  return valid.map((messages, n) => {
    const kind = kinds[n % kinds.length] as Kind;
    // A deep copy through JSON: exactly what a platform would post.
    const turn = JSON.parse(JSON.stringify(messages)) as Json[];
    const mutated = kind.mutate(turn, rng, context);
    return {
      name: `${String(n).padStart(2, "0")} ${kind.name}: ${mutated.variant}`,
      kind: kind.name,
      body: {
        format,
        [field]: mutated.messages,
        ...(mutated.dropSystem ? { drop_system: true } : {}),
      },
      status: mutated.status,
      type: mutated.type,
      detail: mutated.detail,
      ...(mutated.bug ? { bug: mutated.bug } : {}),
    };
  });
}
