/**
 * Reading a stream file (or stdin): one read, one `JSON.parse`, JP's base64
 * form detected or forced, then core's schema. Any problem is an
 * {@link InvalidInputError} with a one-line reason naming the entry and field.
 */
import { readFile } from "node:fs/promises";
import { InvalidInputError } from "../core/errors.ts";
import { type Entry, parseStream, type StreamIssue } from "../core/events.ts";
import type { ProviderFormat } from "../core/formats/format.ts";
import { PROVIDER_FORMATS, type ProviderFormatName } from "../core/formats/index.ts";
import { transcriptToStream } from "../core/formats/transcripts.ts";
import { andMore } from "../core/issues.ts";
import { decodeIfJp, decodeJpEntries, type StreamFormat } from "../core/jp-format.ts";
import { type Io, type OptionsConfig, UsageError } from "./command.ts";

/** The `--format` flag of every command that reads a stream, and `--drop-system` for transcripts. */
export const FORMAT_OPTION = {
  format: { type: "string", default: "auto" },
  "drop-system": { type: "boolean" },
} as const satisfies OptionsConfig;

const PROVIDER_NAMES = Object.keys(PROVIDER_FORMATS) as ProviderFormatName[];

/** Help text of the input arguments, shared by the commands. */
export const INPUT_HELP = `Input:
  FILE                   a stream file: a JSON array of entries (JP's events.json form
                         or plain), or a provider transcript: a JSON array of turns,
                         each the array of messages that turn added; stdin when FILE
                         is omitted or "-"
  --format F             auto (the default): JP's base64 form is detected per file,
                         and a transcript's format from its messages; or one of
                         plain, jp, ${PROVIDER_NAMES.join(", ")}
  --drop-system          drop a transcript turn's leading system/developer messages
                         (otherwise refused: system prompts are not turns)`;

/** The formats `--format` accepts. */
export type FormatChoice = StreamFormat | "auto" | ProviderFormatName;

/** The provider format of `--to` (JP, the stored form, is the caller's default). */
export function outputFormat(name: string): ProviderFormat {
  if (Object.hasOwn(PROVIDER_FORMATS, name)) return PROVIDER_FORMATS[name as ProviderFormatName];
  throw new UsageError(`--to must be jp, ${PROVIDER_NAMES.join(", ")} (got "${name}")`);
}

/** Validates `--format`. */
export function formatChoice(value: string | undefined): FormatChoice {
  const format = value ?? "auto";
  if (format === "auto" || format === "plain" || format === "jp") return format;
  if ((PROVIDER_NAMES as string[]).includes(format)) return format as ProviderFormatName;
  throw new UsageError(
    `--format must be auto, plain, jp, ${PROVIDER_NAMES.join(", ")} (got "${format}")`,
  );
}

const ANTHROPIC_BLOCKS = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "document",
]);
const CHAT_PARTS = new Set(["image_url", "input_audio", "refusal"]);
const RESPONSES_ITEMS = new Set(["message", "reasoning", "function_call", "function_call_output"]);
const RESPONSES_PARTS = new Set(["input_text", "output_text", "input_image", "input_file"]);
const AI_SDK_PARTS = new Set(["tool-call", "tool-result", "reasoning"]);

/** The format only one provider's part of this shape belongs to, if any. */
function partFormat(part: Record<string, unknown>): ProviderFormatName | undefined {
  const type = part.type;
  if (typeof type !== "string") return undefined;
  if (RESPONSES_PARTS.has(type)) return "openai-responses";
  if (AI_SDK_PARTS.has(type)) return "ai-sdk";
  if (ANTHROPIC_BLOCKS.has(type)) return "anthropic-messages";
  if (CHAT_PARTS.has(type)) return "openai-chat";
  // `image` and `file` parts exist in two formats each: their fields tell them apart.
  if (type === "image") return "source" in part ? "anthropic-messages" : "ai-sdk";
  if (type === "file") return "file" in part ? "openai-chat" : "ai-sdk";
  return undefined;
}

/**
 * The provider format of a transcript, from the first message or part only
 * one format has: Responses items and parts, AI SDK parts and tool messages,
 * Anthropic's blocks, Chat's tool role, `tool_calls` and media parts.
 * Text-only turns map to the same events in every format, so they read as
 * OpenAI Chat.
 */
export function detectTranscriptFormat(turns: readonly unknown[]): ProviderFormatName {
  for (const turn of turns) {
    if (!Array.isArray(turn)) continue;
    for (const message of turn) {
      const { type, role, content, tool_calls, tool_call_id } = (message ?? {}) as Record<
        string,
        unknown
      >;
      if (typeof type === "string" && RESPONSES_ITEMS.has(type)) return "openai-responses";
      if (tool_calls !== undefined || tool_call_id !== undefined) return "openai-chat";
      if (role === "tool" && Array.isArray(content)) return "ai-sdk";
      if (!Array.isArray(content)) continue;
      for (const part of content) {
        if (typeof part !== "object" || part === null) continue;
        const format = partFormat(part as Record<string, unknown>);
        if (format) return format;
      }
    }
  }
  return "openai-chat";
}

/** A parsed file is a provider transcript when its first item is an array (of messages). */
export function isTranscript(raw: unknown, format: FormatChoice): raw is unknown[] {
  if ((PROVIDER_NAMES as string[]).includes(format)) return true;
  return format === "auto" && Array.isArray(raw) && Array.isArray(raw[0]);
}

/** Where a stream is read from: a path, or stdin. */
export interface StreamSource {
  /** The name used in messages: the path, or `stdin`. */
  readonly name: string;
  readonly path?: string;
}

/** Resolves the positional arguments of a command to its input (at most one). */
export function streamSource(positionals: readonly string[], io: Io): StreamSource {
  if (positionals.length > 1) {
    throw new UsageError(`expected at most one stream file, got ${positionals.length}`);
  }
  const path = positionals[0];
  if (path === undefined || path === "-") {
    if (path === undefined && io.stdin.isTTY) {
      throw new UsageError('no input: give a stream file, or pipe one on stdin ("-")');
    }
    return { name: "stdin" };
  }
  return { name: path, path };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads a source's whole text. */
export async function readSource(source: StreamSource, io: Io): Promise<string> {
  try {
    return source.path === undefined
      ? await readAll(io.stdin)
      : // One decode of the whole file: readFile(path, "utf8") decodes chunk by
        // chunk into a string that JSON.parse must flatten first (slower on
        // large streams, npm run bench -- cli).
        (await readFile(source.path)).toString("utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT"
        ? "no such file"
        : (error as NodeJS.ErrnoException).code === "EISDIR"
          ? "it is a directory"
          : error instanceof Error
            ? error.message
            : String(error);
    throw new InvalidInputError(`cannot read ${source.name}: ${reason}`, { cause: error });
  }
}

/** Adds `(line L, column C)` to a JSON.parse message that gives a position. */
function jsonErrorMessage(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const match = /at position (\d+)/.exec(message);
  if (!match) return message;
  const position = Number(match[1]);
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < position; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `${message} (line ${line}, column ${position - lineStart + 1})`;
}

/** Parses JSON text; a syntax error is an {@link InvalidInputError} naming `name`. */
export function parseJson(text: string, name: string): unknown {
  try {
    // A UTF-8 byte order mark is not JSON but editors write one.
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    if (text.trim() === "") throw new InvalidInputError(`${name} is empty: expected a JSON array`);
    throw new InvalidInputError(`invalid JSON in ${name}: ${jsonErrorMessage(error, text)}`, {
      cause: error,
    });
  }
}

/** Tidies a zod message for a one-line report (`expected string`, `missing`). */
function tidy(message: string): string {
  return message
    .replace(/^Invalid input: /, "")
    .replace(/^expected (.*), received undefined$/, "missing (expected $1)");
}

/** The one-line reason of a stream that failed the schema: the first issue, and how many more. */
export function describeIssues(issues: readonly StreamIssue[], raw: unknown): string {
  const first = issues[0];
  if (!first) return "invalid stream";
  let where: string;
  if (first.index < 0) where = "";
  else {
    const item = Array.isArray(raw) ? raw[first.index] : undefined;
    const type = (item as { type?: unknown } | null | undefined)?.type;
    const label = typeof type === "string" ? ` (${type})` : "";
    // Paths are dotted keys (no event schema holds an array).
    const path = first.path === "" ? "" : `.${first.path}`;
    where = `entry ${first.index}${label}${path}: `;
  }
  return `${where}${tidy(first.message)}${andMore(issues.length - 1, "issue")}`;
}

/**
 * Decodes raw entries from the chosen format and validates them; a
 * transcript is converted by its provider format.
 */
export function entriesFromRaw(
  raw: unknown,
  format: FormatChoice,
  name: string,
  options: { readonly dropSystem?: boolean } = {},
): Entry[] {
  if (isTranscript(raw, format)) {
    if (!Array.isArray(raw)) {
      throw new InvalidInputError(`${name}: a transcript must be a JSON array of turns`);
    }
    const provider = format === "auto" ? detectTranscriptFormat(raw) : format;
    try {
      return transcriptToStream(PROVIDER_FORMATS[provider as ProviderFormatName], raw, options);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      // The core's reason tells API callers to post `drop_system`; here it is a flag.
      const hint =
        options.dropSystem !== true && error.message.includes("drop_system")
          ? " (here: pass --drop-system)"
          : "";
      throw new InvalidInputError(`${name} (${provider} transcript), ${error.message}${hint}`, {
        cause: error,
      });
    }
  }
  if (!Array.isArray(raw)) {
    throw new InvalidInputError(`${name}: a stream must be a JSON array of entries`);
  }
  const decoded =
    format === "auto" ? decodeIfJp(raw).entries : format === "jp" ? decodeJpEntries(raw) : raw;
  const parsed = parseStream(decoded);
  if (!parsed.ok) throw new InvalidInputError(describeIssues(parsed.issues, decoded));
  return parsed.entries;
}

/** What a command was given: a stream, or a provider transcript (kept as posted, for `replay`). */
export type LoadedInput =
  | { readonly kind: "stream"; readonly entries: Entry[] }
  | {
      readonly kind: "transcript";
      readonly format: ProviderFormatName;
      readonly turns: unknown[];
      readonly dropSystem: boolean;
      /** The transcript as a JP stream (validated). */
      readonly entries: Entry[];
    };

/** The flags {@link loadInput} reads. */
export interface InputFlags {
  readonly format?: string | undefined;
  readonly "drop-system"?: boolean | undefined;
}

/** Reads, decodes and validates what a command was given. */
export async function loadInput(
  positionals: readonly string[],
  values: InputFlags,
  io: Io,
): Promise<LoadedInput> {
  const choice = formatChoice(values.format);
  const source = streamSource(positionals, io);
  const raw = parseJson(await readSource(source, io), source.name);
  const options = { dropSystem: values["drop-system"] === true };
  const entries = entriesFromRaw(raw, choice, source.name, options);
  if (!isTranscript(raw, choice)) return { kind: "stream", entries };
  const format = choice === "auto" ? detectTranscriptFormat(raw) : (choice as ProviderFormatName);
  return { kind: "transcript", format, turns: raw, dropSystem: options.dropSystem, entries };
}

/** Reads, decodes and validates the stream a command was given (a transcript converted). */
export async function loadStream(
  positionals: readonly string[],
  values: InputFlags,
  io: Io,
): Promise<Entry[]> {
  return (await loadInput(positionals, values, io)).entries;
}
