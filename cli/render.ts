/**
 * The human rendering of a projected view (`autocompact project --text`): one
 * block per projected turn, headed by the raw turn(s) it comes from and the
 * bands that changed it, with long content truncated to one line.
 */
import type { SizeEstimate } from "../core/estimate.ts";
import type { Compaction, Entry, ToolCallPolicy } from "../core/events.ts";
import {
  compactionsOf,
  type Projection,
  resolvePolicies,
  SUMMARY_REQUEST_CONTENT,
  type TurnOrigin,
  type TurnPolicies,
} from "../core/projection.ts";
import { indexTurns } from "../core/turns.ts";

/** How to render. */
export interface RenderOptions {
  /** ANSI colours (only when stdout is a terminal). */
  readonly color: boolean;
}

type Style = (text: string) => string;

interface Palette {
  readonly heading: Style;
  readonly band: Style;
  readonly summary: Style;
  readonly dim: Style;
  readonly error: Style;
  readonly tool: Style;
}

function palette(color: boolean): Palette {
  const ansi =
    (open: number, close: number): Style =>
    (text) =>
      color ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    heading: ansi(1, 22),
    band: ansi(33, 39),
    summary: ansi(35, 39),
    dim: ansi(2, 22),
    error: ansi(31, 39),
    tool: ansi(36, 39),
  };
}

/** Characters shown of reasoning, tool results and other one-line items. */
const LINE_LIMIT = 160;
/** Characters shown of tool arguments and config deltas. */
const ARGS_LIMIT = 120;

function flatten(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}… (+${text.length - limit} chars)`;
}

function indentContinuation(text: string): string {
  return text.replace(/\n/g, "\n    ");
}

function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

function toolPolicyLabel(policy: ToolCallPolicy): string {
  if (policy.policy === "omit") return "tools omit";
  if (policy.request && policy.response) return "tools strip";
  if (policy.request) return "tools strip-requests";
  if (policy.response) return "tools strip-responses";
  return "tools keep";
}

/** `[auto: reasoning strip, tools strip]` marks of the bands whose policies apply to a kept turn. */
function bandMarks(
  policies: TurnPolicies | undefined,
  compactions: readonly Compaction[],
): string[] {
  const labels = new Map<Compaction, string[]>();
  const add = (band: Compaction | undefined, label: string) => {
    if (band === undefined) return;
    const list = labels.get(band);
    if (list) list.push(label);
    else labels.set(band, [label]);
  };
  add(policies?.reasoning, "reasoning strip");
  const tools = policies?.tool_calls;
  if (tools?.tool_calls) add(tools, toolPolicyLabel(tools.tool_calls));
  return [...labels.entries()]
    .sort(([a], [b]) => compactions.indexOf(a) - compactions.indexOf(b))
    .map(([band, list]) => `[${band.source}: ${list.join(", ")}]`);
}

function span(from: number, to: number): string {
  return from === to ? `turn ${from}` : `turns ${from}–${to}`;
}

function heading(
  origin: TurnOrigin | undefined,
  policies: readonly TurnPolicies[],
  compactions: readonly Compaction[],
  style: Palette,
): string {
  if (origin === undefined) return style.heading("── turn ? ──");
  if ("kept" in origin) {
    const marks = bandMarks(policies[origin.kept], compactions);
    const head = style.heading(`── turn ${origin.kept} ──`);
    return marks.length === 0 ? head : `${head} ${style.band(marks.join(" "))}`;
  }
  const { from, to } = origin.summary;
  const source = policies[from]?.summary?.source ?? "?";
  return style.heading(`── ${span(from, to)} · ${style.summary(`summary (${source})`)} ──`);
}

function entryLine(entry: Entry, style: Palette): string | undefined {
  const record = entry as Entry & Record<string, unknown>;
  switch (entry.type) {
    case "turn_start":
      return undefined;
    case "chat_request": {
      const content = String(record.content);
      if (content === SUMMARY_REQUEST_CONTENT) return `  ${style.dim(`▸ ${content}`)}`;
      return `  ▸ ${indentContinuation(content)}`;
    }
    case "chat_response":
      if (typeof record.message === "string") return `  ◂ ${indentContinuation(record.message)}`;
      if (typeof record.reasoning === "string") {
        return `  ${style.dim(`∴ ${truncate(flatten(record.reasoning), LINE_LIMIT)}`)}`;
      }
      return `  ◂ data ${truncate(jsonText(record.data), LINE_LIMIT)}`;
    case "tool_call_request": {
      const args = jsonText(record.arguments);
      const shown = args === "{}" ? "" : truncate(args, ARGS_LIMIT);
      return `  ${style.tool(`→ ${String(record.name)}(${shown})`)}`;
    }
    case "tool_call_response": {
      const content = truncate(flatten(String(record.content)), LINE_LIMIT);
      if (record.is_error === true) return `  ${style.error(`← ✗ ${content}`)}`;
      if (content.startsWith("[compacted]")) return `  ${style.dim(`← ${content}`)}`;
      return `  ← ${content}`;
    }
    case "inquiry_request": {
      const question = (record.question as { text?: unknown } | undefined)?.text;
      const text = typeof question === "string" ? question : jsonText(record.question);
      return `  ${style.dim(`? ${truncate(flatten(text), LINE_LIMIT)}`)}`;
    }
    case "inquiry_response":
      return `  ${style.dim(`! ${truncate(jsonText(record.answer), LINE_LIMIT)}`)}`;
    case "config_delta":
      return `  ${style.dim(`⚙ config ${truncate(jsonText(record.delta ?? {}), ARGS_LIMIT)}`)}`;
    default:
      return `  ${style.dim(`· ${entry.type}`)}`;
  }
}

/**
 * Renders `projection` (of the raw stream `raw`) for people. The blocks
 * follow the projected turns; a raw turn left with no event at all by its
 * bands (possible only for an implicit turn 0) gets an empty block.
 */
export function renderProjection(
  raw: readonly Entry[],
  projection: Projection,
  estimate: SizeEstimate,
  options: RenderOptions,
): string {
  const style = palette(options.color);
  const compactions = compactionsOf(raw);
  const rawTurns = indexTurns(raw).turnCount;
  const policies = resolvePolicies(compactions, rawTurns);
  const view = projection.entries;
  const { turnOf, turnCount: viewTurns } = indexTurns(view);
  const offset = Math.max(0, projection.turns.length - viewTurns);

  const lines: string[] = [];
  for (let k = 0; k < offset; k++) {
    lines.push(heading(projection.turns[k], policies, compactions, style));
    lines.push(`  ${style.dim("(nothing left after compaction)")}`);
  }
  let current = -1;
  for (let i = 0; i < view.length; i++) {
    const entry = view[i] as Entry;
    const turn = turnOf[i] as number;
    if (turn !== current) {
      if (lines.length > 0) lines.push("");
      lines.push(heading(projection.turns[turn + offset], policies, compactions, style));
      current = turn;
    }
    const line = entryLine(entry, style);
    if (line !== undefined) lines.push(line);
  }
  if (view.length === 0) lines.push(style.dim("(empty stream)"));

  const auto = compactions.filter((c) => c.source === "auto").length;
  const bands =
    compactions.length === 0
      ? "no compaction"
      : `${compactions.length} compaction${compactions.length === 1 ? "" : "s"} (${auto} auto, ${compactions.length - auto} manual)`;
  lines.push("");
  lines.push(
    style.heading(
      `── ${estimate.estimated_tokens} estimated tokens (${estimate.chars} chars) · ${projection.turns.length} projected turns from ${rawTurns} raw turns · ${bands} ──`,
    ),
  );
  return `${lines.join("\n")}\n`;
}
